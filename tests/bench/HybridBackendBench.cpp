// Hybrid-backend benchmarks: one congestion episode simulated at packet level (episodes per
// second: the price of a cache miss), and the whole hybrid backend under a job (flows, episode
// queries and recomputations per second of wall time, with its episode cache).
#include <benchmark/benchmark.h>

#include <string>

#include "sim/config/TopologyLoader.h"
#include "sim/runtime/Experiment.h"
#include "sim/runtime/PacketEpisodeModel.h"

using namespace fabricsim;

// range(0) flows of 1 MiB from as many NICs converging range(0) to 1 on a 400G link
// of rail-optimized-1k under DCQCN.
static void BM_PacketEpisode(benchmark::State& state) {
  const TopologySpec spec =
      loadTopologyFile(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/rail-optimized-1k.yaml", {});
  PacketEpisodeModel model(spec, 1);
  CongestionEpisode e;
  e.fanIn = static_cast<uint32_t>(state.range(0));
  e.flows = e.fanIn;
  e.bytesPerFlow = 1 << 20;
  e.lineRate = BitRate::gbps(400);
  e.arrivalRate = e.lineRate;
  e.pathLatency = Time::us(6);
  double bytes = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.simulate(e, 1));
    bytes += static_cast<double>(e.flows) * static_cast<double>(e.bytesPerFlow);
  }
  state.counters["episodes_per_s"] = benchmark::Counter(state.iterations(), benchmark::Counter::kIsRate);
  state.counters["bytes_per_s"] = benchmark::Counter(bytes, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PacketEpisode)->Arg(2)->Arg(4)->Arg(16)->Unit(benchmark::kMillisecond);

// Llama-3 405B (tp 8, pp 16, dp 8) on rail-optimized-1k under DCQCN with ECMP, hybrid backend.
static void BM_HybridTrainingJob(benchmark::State& state) {
  double flows = 0, queries = 0, simulated = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RunOptions opt;
    opt.topologyPath = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/rail-optimized-1k.yaml";
    opt.workloadPaths = {std::string(FABRICSIM_SOURCE_DIR) + "/workloads/llama3-405b.yaml"};
    opt.workloadSets = {"parallelism.dp=8", "parallelism.global_batch=128"};
    opt.backend = "hybrid";
    opt.cc = "dcqcn";
    opt.progress = false;
    Experiment exp(opt);
    state.ResumeTiming();
    exp.run();
    state.PauseTiming();
    flows += static_cast<double>(exp.flowFabric()->flowsStarted());
    queries += static_cast<double>(exp.flowFabric()->episodesEvaluated());
    simulated += static_cast<double>(exp.results()["summary"]["hybrid_model"]["episodes_simulated"].get<double>());
    state.ResumeTiming();
  }
  state.counters["flows_per_s"] = benchmark::Counter(flows, benchmark::Counter::kIsRate);
  state.counters["episode_queries_per_s"] = benchmark::Counter(queries, benchmark::Counter::kIsRate);
  state.counters["episodes_simulated"] = benchmark::Counter(simulated, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_HybridTrainingJob)->Unit(benchmark::kMillisecond)->Iterations(2);
