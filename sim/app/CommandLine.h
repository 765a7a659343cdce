// CommandLine: the parsing every subcommand does the same way: its visible options, hidden
// positional TOPOLOGY (or MEASUREMENTS...), errors as "error: fabricsim CMD: ..." with exit status 2, --help.
#pragma once

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace fabricsim {

/// Parses `args` into `vm` with `visible` options plus a hidden positional option `name` of
/// `semantic` taking `count` values (-1: any number). Returns -1 to go on, or the exit status to
/// return now (0 after --help, 2 on a parse error, which it has reported).
inline int parseCommandLineWith(const std::vector<std::string>& args,
                                const boost::program_options::options_description& visible, const char* name,
                                const boost::program_options::value_semantic* semantic, int count, const char* command,
                                boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()(name, semantic);
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description pos;
  pos.add(name, count);
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "error: fabricsim %s: %s\n", command, e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << visible << "\n";
    return 0;
  }
  return -1;
}

/// The usual case: one positional TOPOLOGY bound to `topologyPath`.
inline int parseCommandLine(const std::vector<std::string>& args, const boost::program_options::options_description& visible,
                            std::string& topologyPath, const char* command, boost::program_options::variables_map& vm) {
  return parseCommandLineWith(args, visible, "topology", boost::program_options::value<std::string>(&topologyPath), 1,
                              command, vm);
}

/// Any number of positional MEASUREMENTS... bound to `files` (calibrate, validate).
inline int parseCommandLine(const std::vector<std::string>& args, const boost::program_options::options_description& visible,
                            std::vector<std::string>& files, const char* command, boost::program_options::variables_map& vm) {
  return parseCommandLineWith(args, visible, "measurement",
                              boost::program_options::value<std::vector<std::string>>(&files), -1, command, vm);
}

}  // namespace fabricsim
