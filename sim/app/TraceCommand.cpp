// `fabricsim trace`: expand a training workload into its trace (per-rank programs), or
// regenerate an existing trace for another configuration from the workload it embeds.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "sim/app/CommandLine.h"
#include "sim/app/Commands.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/config/YamlReader.h"
#include "sim/core/Error.h"
#include "sim/report/ResultsFile.h"
#include "sim/runtime/GpuAllocator.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/TraceFile.h"
#include "sim/workload/TrainingTraceBuilder.h"
#include "sim/workload/chakra/ChakraReader.h"
#include "sim/workload/chakra/ChakraWriter.h"

namespace po = boost::program_options;

namespace fabricsim {

int traceCommand(const std::vector<std::string>& args) {
  std::string topologyPath;
  std::string workloadPath;
  std::string out;
  std::vector<std::string> sets;
  std::vector<std::string> workloadSets;
  std::string format = "json";
  uint64_t seed = 1;
  po::options_description desc(
      "usage: fabricsim trace TOPOLOGY.yaml --workload W.yaml --out trace.json [options]\n\n"
      "Expands a training workload into the trace it issues (one program per pipeline stage, the\n"
      "communicators, the ranks' GPUs on TOPOLOGY) for `kind: trace` to replay. Given a trace\n"
      "(.json) instead of W.yaml, regenerates it from the workload it embeds, with --workload-set\n"
      "changes applied: that is how a trace is retargeted to another cluster size. With --format\n"
      "chakra, writes a Chakra execution trace instead: OUT.<rank>.et per rank and\n"
      "OUT.comm_groups.json (its process groups), for `kind: chakra` or other Chakra tools.");
  desc.add_options()("help,h", "show this help")("workload,w", po::value<std::string>(&workloadPath),
                                                 "training workload YAML, or a trace JSON to regenerate")(
      "out,o", po::value<std::string>(&out), "write the trace here")(
      "workload-set", po::value<std::vector<std::string>>(&workloadSets)->composing(),
      "override a workload key: --workload-set parallelism.dp=64 (repeatable)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a topology key (repeatable)")(
      "format", po::value<std::string>(&format)->default_value("json"),
      "json (fabricsim's trace) or chakra (Chakra ET: --out is the files' prefix)")(
      "seed", po::value<uint64_t>(&seed)->default_value(1), "seed of random placements");
  po::variables_map vm;
  if (const int status = parseCommandLine(args, desc, topologyPath, "trace", vm); status >= 0) return status;
  if (topologyPath.empty() || workloadPath.empty() || out.empty()) {
    std::fprintf(stderr, "error: fabricsim trace: needs TOPOLOGY.yaml, --workload and --out (see --help)\n");
    return 2;
  }
  // Chakra's --out is the files' prefix: its folder is what must take them.
  ResultsFile::checkOutputPath(format == "chakra" ? out + ".comm_groups.json" : out, "--out");
  if (format != "json" && format != "chakra") {
    std::fprintf(stderr, "error: fabricsim trace: --format: expected json or chakra, found '%s'\n", format.c_str());
    return 2;
  }
  const TopologySpec topoSpec = loadTopologyFile(topologyPath, sets);
  TraceSource source;
  WorkloadSpec spec;
  if (isTraceFile(workloadPath)) {
    TraceSource old;
    readTraceFile(workloadPath, &old);
    if (old.workloadYaml.empty())
      throw InputError(workloadPath, 0, 0, "source",
                       "this trace does not embed the workload it was generated from, so it cannot be regenerated");
    source = old;
    source.workloadSets.insert(source.workloadSets.end(), workloadSets.begin(), workloadSets.end());
    spec = parseWorkloadYaml(old.workloadYaml, old.workloadFile, source.workloadSets);
  } else {
    source.workloadFile = workloadPath;
    source.workloadYaml = readInputFile(workloadPath);
    source.workloadSets = workloadSets;
    spec = loadWorkloadFile(workloadPath, workloadSets);
  }
  if (spec.kind != "training")
    throw InputError(spec.file, 0, 0, "kind", "expected a training workload to expand, found kind '" + spec.kind + "'");
  const auto topo = buildTopology(topoSpec);
  JobTrace trace;
  try {
    trace = buildTrainingTrace(spec.training, spec.tuning, spec.name);
  } catch (const InputError& e) {
    std::vector<Diagnostic> d = e.diagnostics();
    for (auto& x : d) x.file = spec.file;
    throw InputError(std::move(d));
  }
  trace.tuning = spec.tuning;
  GpuAllocator alloc(topo->gpuCount(), topo->gpusPerHost(), seed);
  const auto& par = spec.training.parallelism;
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  trace.placement = alloc.allocate(spec.placement, trace.ranks, &layout, spec.file);
  if (format == "chakra") {
    for (uint32_t r = 0; r < trace.ranks; ++r)
      ResultsFile::writeBytes(ChakraReader::rankFile(out, r), ChakraWriter::rankFile(trace, r));
    ResultsFile::writeJson(out + ".comm_groups.json", ChakraWriter::commGroups(trace));
    std::printf("Chakra trace of '%s' (%s): %u ranks, one iteration, written to %s.<rank>.et and "
                "%s.comm_groups.json\n",
                trace.name.c_str(), trace.generator.c_str(), trace.ranks, out.c_str(), out.c_str());
    return 0;
  }
  ResultsFile::writeJson(out, traceToJson(trace, source));
  size_t ops = 0;
  for (const auto& p : trace.programs) ops += p.ops.size();
  std::printf("trace of '%s' (%s): %u ranks, %zu programs, %zu ops per iteration in all programs, %d iterations\n",
              trace.name.c_str(), trace.generator.c_str(), trace.ranks, trace.programs.size(), ops, trace.iterations);
  std::printf("written to %s (%.1f KiB)\n", out.c_str(),
              static_cast<double>(std::filesystem::file_size(out)) / 1024.0);
  return 0;
}

}  // namespace fabricsim
