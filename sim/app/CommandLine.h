// CommandLine: the parsing every subcommand does the same way: its visible options, hidden
// positional TOPOLOGY, errors as "error: fabricsim CMD: ..." with exit status 2, --help.
#pragma once

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace fabricsim {

/// Parses `args` into `vm` with `visible` options plus the positional `topology` option bound to
/// `topologyPath`. Returns -1 to go on, or the exit status to return now (0 after --help, 2 on
/// a parse error, which it has reported).
inline int parseCommandLine(const std::vector<std::string>& args, const boost::program_options::options_description& visible,
                            std::string& topologyPath, const char* command, boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()("topology", po::value<std::string>(&topologyPath));
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description pos;
  pos.add("topology", 1);
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

}  // namespace fabricsim
