// Flow-backend benchmarks: the max-min solver alone (flows added and removed one at a time on
// a random fabric: recomputations per second) and the whole backend under a job (flows and
// recomputations per second of wall time).
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "sim/flow/MaxMinSolver.h"
#include "sim/runtime/Experiment.h"

using namespace fabricsim;

// Churn on a solver holding `range(0)` active flows over 4096 resources, 6 hops each (a
// three-tier path): every iteration removes the oldest flow and adds a new one, then solves.
static void BM_MaxMinChurn(benchmark::State& state) {
  const size_t active = static_cast<size_t>(state.range(0));
  MaxMinSolver s;
  const uint32_t resources = 4096;
  for (uint32_t r = 0; r < resources; ++r) s.addResource(0.05);
  std::mt19937_64 rng(7);
  std::vector<MaxMinSolver::Hop> hops(6);
  auto add = [&] {
    for (auto& h : hops) h = {static_cast<uint32_t>(rng() % resources), 1.0f};
    std::sort(hops.begin(), hops.end(), [](auto& a, auto& b) { return a.resource < b.resource; });
    hops.erase(std::unique(hops.begin(), hops.end(), [](auto& a, auto& b) { return a.resource == b.resource; }),
               hops.end());
    const uint32_t f = s.addFlow(hops);
    hops.resize(6);
    return f;
  };
  std::vector<uint32_t> ring;
  for (size_t i = 0; i < active; ++i) ring.push_back(add());
  s.solve([](uint32_t, double) {});
  size_t oldest = 0;
  for (auto _ : state) {
    s.removeFlow(ring[oldest]);
    ring[oldest] = add();
    oldest = (oldest + 1) % ring.size();
    s.solve([](uint32_t, double) {});
  }
  state.counters["recomputations_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["flows_recomputed_per_s"] =
      benchmark::Counter(static_cast<double>(s.flowsRecomputed()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MaxMinChurn)->Arg(64)->Arg(1024)->Arg(16384)->Unit(benchmark::kMicrosecond);

// A training job on the flow backend: Llama-3 405B (tp 8, pp 16) with dp = range(0) on a
// rail-optimized fabric big enough for it; flows and recomputations per second of wall time.
static void BM_FlowTrainingJob(benchmark::State& state) {
  const int dp = static_cast<int>(state.range(0));
  const std::string topo = std::string(FABRICSIM_SOURCE_DIR) +
                           (dp <= 8 ? "/topologies/rail-optimized-1k.yaml" : "/topologies/rail-optimized-8k.yaml");
  double flows = 0, solves = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RunOptions opt;
    opt.topologyPath = topo;
    opt.workloadPaths = {std::string(FABRICSIM_SOURCE_DIR) + "/workloads/llama3-405b.yaml"};
    opt.workloadSets = {"parallelism.dp=" + std::to_string(dp),
                        "parallelism.global_batch=" + std::to_string(16 * dp)};
    opt.backend = "flow";
    opt.cc = "none";
    opt.progress = false;
    Experiment exp(opt);
    state.ResumeTiming();
    exp.run();
    state.PauseTiming();
    flows += static_cast<double>(exp.flowFabric()->flowsStarted());
    solves += static_cast<double>(exp.flowFabric()->solver().solves());
    state.ResumeTiming();
  }
  state.counters["flows_per_s"] = benchmark::Counter(flows, benchmark::Counter::kIsRate);
  state.counters["recomputations_per_s"] = benchmark::Counter(solves, benchmark::Counter::kIsRate);
}
// dp 64 (8,192 GPUs): NCCL's tree runs the data-parallel all-reduces over 64 hosts, each tree
// instance's up and down edges one fluid flow (FlowFabric::sendGroup).
BENCHMARK(BM_FlowTrainingJob)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(2);
