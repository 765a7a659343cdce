// `fabricsim topo`: validate a topology file, build it, and print its summary (text or JSON),
// optionally writing the graph as Graphviz DOT.
#include <boost/program_options.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "sim/app/Commands.h"
#include "sim/config/SpecJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"
#include "sim/report/ResultsFile.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/DotExport.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/topology/TopologySummary.h"

namespace fabricsim {

namespace po = boost::program_options;

int topoCommand(const std::vector<std::string>& args) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")("json", "print the summary as JSON on stdout")(
      "dot", po::value<std::string>()->value_name("FILE"), "write the graph in Graphviz DOT format to FILE")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "override a topology key, e.g. --set links.host_speed=200Gbps (repeatable)");
  po::options_description hidden;
  hidden.add_options()("topology", po::value<std::vector<std::string>>(), "topology file");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("topology", -1);

  const auto usage = [&](std::ostream& out) {
    out << "usage: fabricsim topo TOPOLOGY.yaml [--json] [--dot out.dot] [--set key.path=value ...]\n\n"
           "Validates a topology file, builds the fabric and prints its summary: counts per tier,\n"
           "bisection bandwidth, oversubscription, diameter, link speeds.\n\n"
        << opts;
  };

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "fabricsim topo: " << e.what() << "\n\n";
    usage(std::cerr);
    return 2;
  }
  if (vm.count("help")) {
    usage(std::cout);
    return 0;
  }
  if (!vm.count("topology") || vm["topology"].as<std::vector<std::string>>().size() != 1) {
    std::cerr << "fabricsim topo: expected exactly one topology file\n\n";
    usage(std::cerr);
    return 2;
  }
  const std::string file = vm["topology"].as<std::vector<std::string>>().front();
  const std::vector<std::string> sets =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};

  const TopologySpec spec = loadTopologyFile(file, sets);
  const auto t0 = std::chrono::steady_clock::now();
  const auto topo = buildTopology(spec);
  const auto t1 = std::chrono::steady_clock::now();
  const TopologySummary summary = summarizeTopology(spec, *topo);
  // Build the ECMP forwarding tables too, so `topo` shows what routing costs at this size.
  const EcmpFib fib(*topo, spec.routing.hashSeed, EcmpFib::optionsFor(spec.routing));
  const auto t2 = std::chrono::steady_clock::now();
  const double graphSeconds = std::chrono::duration<double>(t1 - t0).count();
  const double routingSeconds = std::chrono::duration<double>(t2 - t1).count();

  if (vm.count("dot")) {
    const std::string dotPath = vm["dot"].as<std::string>();
    std::ofstream out(dotPath);
    if (!out) throw InputError(dotPath, 0, 0, "--dot", "cannot open the file for writing");
    writeDot(*topo, spec.name, out);
    out.close();
    if (!out) throw InputError(dotPath, 0, 0, "--dot", "could not write the file");
  }
  if (vm.count("json")) {
    nlohmann::json j = summary.toJson();
    j["routing"] = {{"ecmp_distinct_groups", fib.distinctGroups()},
                    {"table_bytes", fib.memoryBytes()},
                    {"graph_build_s", graphSeconds},
                    {"routing_build_s", routingSeconds},
                    {"peak_rss_bytes", ResultsFile::peakRssBytes()}};
    j["spec"] = toJson(spec);  // the resolved settings (presets and --set applied), as results.spec
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << summary.toText();
    std::printf("  routing            ECMP tables: %zu distinct groups, %s\n", fib.distinctGroups(),
                formatBytes(static_cast<Bytes>(fib.memoryBytes())).c_str());
    std::printf("  build time         graph %.2f s, routing %.2f s (peak RSS %s)\n", graphSeconds, routingSeconds,
                formatBytes(ResultsFile::peakRssBytes()).c_str());
  }
  return 0;
}

}  // namespace fabricsim
