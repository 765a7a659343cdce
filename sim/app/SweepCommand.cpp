// `fabricsim sweep`: run every point of a sweep file as a `fabricsim run` child process and
// collect the results into summary.csv (docs/sweep.md).
#include <boost/program_options.hpp>
#include <cstdio>

#include "sim/app/CommandLine.h"
#include "sim/app/Commands.h"
#include "sim/config/SweepLoader.h"
#include "sim/core/Units.h"
#include "sim/runtime/MachineMemory.h"
#include "sim/runtime/SweepRunner.h"

namespace po = boost::program_options;

namespace fabricsim {

int sweepCommand(const std::vector<std::string>& args) {
  SweepRunOptions opt;
  std::string sweepPath;
  po::options_description desc(
      "usage: fabricsim sweep SWEEP.yaml --out DIR [options]\n"
      "       mpirun -np N fabricsim sweep SWEEP.yaml --out DIR [options]   (the ranks share the points)\n"
      "       fabricsim sweep SWEEP.yaml --out DIR --shard I/N [options]   (a job array's task I of N)\n\n"
      "Runs every point of the sweep (the cartesian product of its axes) as `fabricsim run` and writes\n"
      "DIR/points/pNNNN/{point.json,log.txt,results.json|failed.json}, DIR/sweep.json and DIR/summary.csv.\n"
      "Exit status: 0 every point succeeded, 1 some failed or the sweep was interrupted, 2 bad input");
  desc.add_options()("help,h", "show this help")("out,o", po::value<std::string>(&opt.outDir),
                                                 "output directory (required unless --dry-run)")(
      "jobs,j", po::value<int>(&opt.jobs)->default_value(1), "points run at a time (per MPI rank)")(
      "resume", po::bool_switch(&opt.resume),
      "continue a sweep in DIR: skip points whose results are current, re-run changed, failed and "
      "missing ones")("dry-run,n", po::bool_switch(&opt.dryRun),
                      "print the points and their `fabricsim run` commands, run nothing")(
      "quiet,q", po::bool_switch(&opt.quiet), "no progress lines")(
      "max-memory", po::value<std::string>(&opt.maxMemory),
      "refuse a point whose estimated peak memory exceeds SIZE (default: this machine's memory "
      "divided by --jobs)")(
      "shard", po::value<std::string>(),
      "I/N: run only the points i % N == I, without MPI (one task of a job array); each shard "
      "writes the summary of what has finished");
  po::variables_map vm;
  if (const int status = parseCommandLine(args, desc, sweepPath, "sweep", vm); status >= 0) return status;
  if (sweepPath.empty()) {
    std::fprintf(stderr, "error: fabricsim sweep: missing SWEEP.yaml\n");
    return 2;
  }
  if (opt.outDir.empty() && !opt.dryRun) {
    std::fprintf(stderr,
                 "error: fabricsim sweep: missing --out DIR (the directory for the points' results)\n");
    return 2;
  }
  if (opt.jobs < 1) {
    std::fprintf(stderr, "error: fabricsim sweep: --jobs: expected at least 1, found %d\n", opt.jobs);
    return 2;
  }
  if (!opt.maxMemory.empty()) {
    const auto limit = parseBytes(opt.maxMemory);
    if (!limit.value || *limit.value <= 0) {
      std::fprintf(stderr, "error: fabricsim sweep: --max-memory: %s\n",
                   limit.value
                       ? ("expected a size above 0, e.g. 16GiB, found '" + opt.maxMemory + "'").c_str()
                       : limit.error.c_str());
      return 2;
    }
  } else if (opt.jobs > 1 && machineMemoryLimit() > 0) {
    // Points that run at once share the machine.
    opt.maxMemory = std::to_string(machineMemoryLimit() / static_cast<uint64_t>(opt.jobs)) + "B";
  }
  const auto [rank, size] = SweepRunner::mpiRankFromEnvironment();
  opt.mpiRank = rank;
  opt.mpiSize = size;
  if (vm.count("shard")) {
    const std::string text = vm["shard"].as<std::string>();
    int i = -1, n = -1, used = 0;
    if (std::sscanf(text.c_str(), "%d/%d%n", &i, &n, &used) != 2 || used != static_cast<int>(text.size()) ||
        n < 1 || n > 100000 || i < 0 || i >= n) {
      std::fprintf(stderr,
                   "error: fabricsim sweep: --shard: expected I/N with 0 <= I < N <= 100000, found '%s'\n",
                   text.c_str());
      return 2;
    }
    if (size > 1) {
      std::fprintf(stderr,
                   "error: fabricsim sweep: --shard splits a sweep without MPI; under mpirun the ranks "
                   "split it already\n");
      return 2;
    }
    opt.mpiRank = i;
    opt.mpiSize = n;
    opt.shard = true;
  }
  SweepRunner runner(loadSweepFile(sweepPath), opt);
  return runner.run();
}

}  // namespace fabricsim
