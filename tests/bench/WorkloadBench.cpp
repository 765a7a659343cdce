// Benchmarks of the workload layer: expanding a training spec into its trace, and executing a
// trace with zero-time communication (the executor's own cost per operation, no network).
#include <benchmark/benchmark.h>

#include <memory>
#include <numeric>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Simulator.h"
#include "sim/workload/JobExecutor.h"
#include "sim/workload/TrainingTraceBuilder.h"

using namespace fabricsim;

namespace {
/// GPT-3 175B with TP 8, PP 8 and the given DP degree, 32 micro-batches per pipeline.
TrainingSpec gpt3(int dp) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: training\nmodel: gpt3-175b\nparallelism: {tp: 8, pp: 8, dp: " + std::to_string(dp) +
          ", micro_batch: 1, global_batch: " + std::to_string(32 * dp) + "}\n",
      "bench.yaml");
  return w.training;
}
}  // namespace

static void BM_BuildTrainingTrace(benchmark::State& state) {
  const TrainingSpec spec = gpt3(static_cast<int>(state.range(0)));
  size_t ops = 0;
  for (auto _ : state) {
    const JobTrace t = buildTrainingTrace(spec, CollectiveTuning{}, "gpt3");
    ops = 0;
    for (const auto& p : t.programs) ops += p.ops.size();
    benchmark::DoNotOptimize(ops);
  }
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK(BM_BuildTrainingTrace)->Arg(4)->Arg(64)->Unit(benchmark::kMillisecond);

// Items = operations executed over all ranks (one iteration).
static void BM_ExecuteComputeOnly(benchmark::State& state) {
  auto trace = std::make_shared<JobTrace>(buildTrainingTrace(gpt3(static_cast<int>(state.range(0))),
                                                             CollectiveTuning{}, "gpt3"));
  std::vector<uint32_t> gpus(trace->ranks);
  std::iota(gpus.begin(), gpus.end(), 0u);
  uint64_t ops = 0;
  for (uint32_t r = 0; r < trace->ranks; ++r) ops += trace->programs[trace->programOfRank[r]].ops.size();
  for (auto _ : state) {
    Simulator sim(1);
    JobExecutor exec(sim, nullptr, trace, gpus, 8, CollectiveTuning{}, "gpt3", Time::zero(), false);
    exec.start();
    sim.run();
    benchmark::DoNotOptimize(exec.finishTime());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * ops));
  state.counters["ranks"] = trace->ranks;
}
BENCHMARK(BM_ExecuteComputeOnly)->Arg(4)->Arg(32)->Unit(benchmark::kMillisecond);
