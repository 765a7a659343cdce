// `fabricsim run`: simulate one topology with its workloads and report the results.
// Exit status: 0 done; 2 bad input; 3 the simulated run failed (a connection exhausted its
// transport retries; the results, if --out, are complete and say so); 1 any other error.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "sim/app/CommandLine.h"
#include "sim/app/Commands.h"
#include "sim/core/Error.h"
#include "sim/core/Units.h"
#include "sim/report/ResultsFile.h"
#include "sim/runtime/Experiment.h"

namespace po = boost::program_options;

namespace fabricsim {

int runCommand(const std::vector<std::string>& args) {
  RunOptions opt;
  std::string out;
  bool quiet = false;
  bool check = false;
  po::options_description desc(
      "usage: fabricsim run TOPOLOGY.yaml [options]\n\n"
      "Simulates the workloads on the topology and prints a summary; --out writes the results JSON");
  desc.add_options()("help,h", "show this help")(
      "workload,w", po::value<std::vector<std::string>>(&opt.workloadPaths)->composing(),
      "workload YAML file (repeatable; default: the topology's `workload:`)")(
      "backend", po::value<std::string>(&opt.backend)->default_value("packet"),
      "packet (every packet through queues, ECN, PFC, credits and CC) | flow (max-min fair fluid rates; "
      "scales to 100K GPUs; the results list what it leaves out) | hybrid (flow level, with each "
      "congested link slowed by its congestion episode simulated at packet level under the fabric's "
      "congestion control)")(
      "routing", po::value<std::string>(&opt.routing),
      "override routing.algorithm: ecmp | flowlet | adaptive | spray (bgp = ecmp over BGP tables) | ib-sm "
      "(InfiniBand)")("cc", po::value<std::string>(&opt.cc),
                      "override congestion_control.algorithm: none | dcqcn (RoCEv2) | ibcc (InfiniBand)")(
      "set", po::value<std::vector<std::string>>(&opt.sets)->composing(),
      "override a topology key: --set key.path=value (value in YAML; repeatable)")(
      "seed", po::value<uint64_t>(&opt.seed)->default_value(1), "random seed (same seed, same results)")(
      "out,o", po::value<std::string>(&out), "write the results JSON here (atomically)")(
      "probe", po::value<std::vector<std::string>>(&opt.probes)->composing(),
      "sample a time series into the results: queue=NODE:PORT (bytes queued) or flow=SRC_GPU-DST_GPU "
      "(allowed rate); repeatable")("probe-interval",
                                    po::value<std::string>(&opt.probeInterval)->default_value("1us"),
                                    "probe sampling period")(
      "workload-set", po::value<std::vector<std::string>>(&opt.workloadSets)->composing(),
      "override a key of every workload file: --workload-set parallelism.dp=16 (value in YAML; repeatable)")(
      "timeline", po::value<std::string>(&opt.timelinePath),
      "write a Chrome/Perfetto trace-event JSON of the jobs' ranks (open in ui.perfetto.dev)")(
      "timeline-ranks", po::value<uint32_t>(&opt.timelineRanks)->default_value(64),
      "ranks per job on the timeline (the first N)")(
      "max-memory", po::value<std::string>(),
      "refuse a run whose estimated peak memory exceeds SIZE (e.g. 16GiB; default: this machine's memory, "
      "or its cgroup's limit)")("check", po::bool_switch(&check),
                                "read and check every input, build the fabric and the jobs, estimate the "
                                "memory, and stop before simulating")(
      "quiet,q", po::bool_switch(&quiet), "no summary table and no progress line");
  po::variables_map vm;
  if (const int status = parseCommandLine(args, desc, opt.topologyPath, "run", vm); status >= 0) return status;
  if (opt.topologyPath.empty()) {
    std::fprintf(stderr, "error: fabricsim run: missing TOPOLOGY.yaml\n");
    return 2;
  }
  if (vm.count("max-memory")) {
    const auto limit = parseBytes(vm["max-memory"].as<std::string>());
    if (!limit.value || *limit.value <= 0)
      throw InputError("", 0, 0, "--max-memory",
                       limit.value ? "expected a size above 0, e.g. 16GiB" : limit.error);
    opt.maxMemory = static_cast<uint64_t>(*limit.value);
  }
  // Where the outputs go is checked before the run that fills them.
  ResultsFile::checkOutputPath(out, "--out");
  ResultsFile::checkOutputPath(opt.timelinePath, "--timeline");
  opt.progress = !quiet;
  Experiment exp(opt);
  if (check) {
    std::printf("%s\n", exp.checkSummary().c_str());
    return 0;
  }
  exp.run();
  for (const auto& w : exp.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!out.empty()) ResultsFile::writeJson(out, exp.results());
  exp.writeTimeline();
  // summary.peak_rss_bytes is the process's peak once every output exists: the simulation, the
  // results document and its first write, the timeline. The results file is then written again
  // (atomically) with that figure; the rewrite streams the same document through a file buffer,
  // which is all it adds, and it is not counted.
  exp.refreshPeakRss();
  if (!out.empty()) ResultsFile::writeJson(out, exp.results());
  if (!quiet) exp.printSummary(stdout);
  if (!out.empty() && !quiet) std::printf("results written to %s\n", out.c_str());
  if (!opt.timelinePath.empty() && !quiet) std::printf("timeline written to %s\n", opt.timelinePath.c_str());
  if (!exp.failed()) return 0;
  // The workload could not complete: say which connection gave up, and fail the command.
  const auto& failures = exp.failures();
  for (size_t i = 0; i < failures.size() && i < 10; ++i)
    std::fprintf(stderr, "error: %s\n", failures[i].message.c_str());
  if (failures.size() > 10)
    std::fprintf(stderr, "error: ... %zu more connection failures\n", failures.size() - 10);
  std::fprintf(stderr, "fabricsim run: the run failed: the workloads did not complete%s\n",
               out.empty() ? "" : ("; the results (status \"failed\") are in " + out).c_str());
  return kRunFailedStatus;
}

}  // namespace fabricsim
