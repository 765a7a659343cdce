// Routing benchmarks: RFC 7938 eBGP converging from start (every session up, every leaf
// announcing its prefix into empty tables) on k-ary fat-trees and on one plane of the 98K-GPU
// rail-optimized fabric (a radix-64 fat-tree of 12 pods; the 8 rails are 8 such independent
// planes). Counters: messages per second of wall time, the messages, the control plane's own
// memory (RIBs, interned AS paths, message queues; the FIB is not counted), and the FIB's
// distinct groups and memory after convergence.
#include <benchmark/benchmark.h>

#include <memory>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/routing/BgpControlPlane.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"

using namespace fabricsim;

namespace {

TopologySpec fatTree(int radix, int pods, int hostsPerEdge) {
  TopologySpec s;
  s.name = "bench";
  s.kind = TopologyKind::FatTree;
  s.fatTree = FatTreeShape{radix, pods, hostsPerEdge};
  return s;
}

void convergeFromStart(benchmark::State& state, const TopologySpec& spec) {
  const auto topo = buildTopology(spec);
  double messages = 0, memory = 0, paths = 0, simSeconds = 0, groups = 0, fibMemory = 0;
  for (auto _ : state) {
    state.PauseTiming();
    EcmpFib fib(*topo, 1);
    for (NodeId s = static_cast<NodeId>(topo->hostCount()); s < topo->nodeCount(); ++s)
      for (NodeId leaf : fib.leavesOf(fib.component(s)))
        if (leaf != s) fib.setRoute(s, leaf, {});
    Simulator sim;
    BgpSpec bgp;  // defaults: rfc7938 ASNs, 50 us per UPDATE, MRAI 0
    auto cp = std::make_unique<BgpControlPlane>(sim, *topo, fib, bgp);
    state.ResumeTiming();
    cp->start();
    sim.run();
    state.PauseTiming();
    if (!cp->converged()) state.SkipWithError("BGP did not converge");
    messages = static_cast<double>(cp->updatesSent() + cp->withdrawalsSent());
    memory = static_cast<double>(cp->memoryBytes());
    paths = static_cast<double>(cp->distinctPaths());
    simSeconds = cp->startStats().lastFibChange.seconds();
    groups = static_cast<double>(fib.distinctGroups());
    fibMemory = static_cast<double>(fib.memoryBytes());
    cp.reset();
    state.ResumeTiming();
  }
  state.counters["messages"] = messages;
  state.counters["messages_per_s"] =
      benchmark::Counter(messages * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["cp_memory_MiB"] = memory / (1024.0 * 1024.0);
  state.counters["as_paths"] = paths;
  state.counters["sim_converged_s"] = simSeconds;
  state.counters["fib_groups"] = groups;
  state.counters["fib_memory_MiB"] = fibMemory / (1024.0 * 1024.0);
}

}  // namespace

// k-ary fat-tree, k = range(0): k^3/4 hosts, 5k^2/4 switches.
static void BM_BgpStartFatTree(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  convergeFromStart(state, fatTree(k, k, k / 2));
}
BENCHMARK(BM_BgpStartFatTree)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(1);

// One rail of topologies/rail-optimized-98k.yaml: radix 64, 12 pods, 32 hosts per edge.
static void BM_BgpStartRail98kPlane(benchmark::State& state) {
  convergeFromStart(state, fatTree(64, 12, 32));
}
BENCHMARK(BM_BgpStartRail98kPlane)->Unit(benchmark::kMillisecond)->Iterations(1);
