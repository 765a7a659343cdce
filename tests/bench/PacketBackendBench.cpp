// Whole-backend benchmark: a permutation of 2 MB flows on a k-ary fat-tree at 100 Gb/s
// (topologies/fat-tree-k8-100g.yaml), reporting simulated events and link transmissions per
// second of wall time.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/runtime/Experiment.h"

using namespace fabricsim;

static void BM_PacketPermutationFatTree(benchmark::State& state) {
  const std::string file = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/fat-tree-k" +
                           std::to_string(state.range(0)) + "-100g.yaml";
  double events = 0, transmissions = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RunOptions opt;
    opt.topologyPath = file;
    opt.progress = false;
    Experiment exp(opt);
    state.ResumeTiming();
    exp.run();
    state.PauseTiming();
    const auto r = exp.results();
    events += r["summary"]["events"].get<double>();
    transmissions += r["summary"]["link_transmissions"].get<double>();
    state.ResumeTiming();
  }
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
  state.counters["link_tx_per_s"] = benchmark::Counter(transmissions, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PacketPermutationFatTree)->Arg(8)->Unit(benchmark::kMillisecond)->Iterations(3);
