// The packet engine's forwarding path in its steady state (issue 22): on a leaf-spine whose
// leaves each have 16 hosts at 100 Gb/s and 8 uplinks (2:1 oversubscribed), every host sends one
// long transfer to a host on the next leaf, so every frame crosses leaf, spine and leaf. After a
// warm-up of 300 us (queues built, PFC pausing with it on), each iteration simulates 20 us more
// and the counters give link transmissions (one frame sent on one link: a hop) and events per
// second of wall time, and per iteration. Leaves (Arg 0) set the size: 4 leaves is 64 hosts and
// 192 directed ports, 32 leaves 512 hosts and 1,536 ports, whose state no longer fits in the
// small caches: the growth of the cost per event with the fabric shows between the two. The transfers (1 GiB
// each) do not complete inside a benchmark, so the completion path is not part of it. That nothing is
// allocated per packet on this path is asserted by memory_tests (ForwardingAllocation).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "sim/packet/PacketFabric.h"
#include "tests/support/PacketBench.h"

using namespace fabricsim;

namespace {

template <bool kPfc>
void forwarding(benchmark::State& state) {
  const auto leaves = static_cast<int>(state.range(0));
  constexpr int kHostsPerLeaf = 16;
  TopologySpec spec = testsupport::leafSpineSpec(leaves, 8, kHostsPerLeaf);
  if (kPfc) {
    spec.sw.pfc.enabled = true;
    spec.sw.pfc.xoff = 60 * 1000;
    spec.sw.pfc.xon = 48 * 1000;
  }
  testsupport::PacketBench b(spec);
  testsupport::DeliveryLog log;
  const auto hosts = static_cast<uint32_t>(leaves * kHostsPerLeaf);
  for (uint32_t i = 0; i < hosts; ++i) {
    TransferRequest r;
    r.srcGpu = i;
    r.dstGpu = (i + kHostsPerLeaf) % hosts;  // the next leaf
    r.bytes = 1ull << 30;
    r.tag = i;
    b.fabric.send(r, &log);
  }
  Time until = Time::us(300);
  b.sim.run(until);
  const uint64_t hops0 = b.fabric.counters().linkTransmissions;
  const uint64_t events0 = b.sim.eventsProcessed();
  for (auto _ : state) {
    until = until + Time::us(20);
    b.sim.run(until);
  }
  const auto hops = static_cast<double>(b.fabric.counters().linkTransmissions - hops0);
  const auto events = static_cast<double>(b.sim.eventsProcessed() - events0);
  state.counters["hops"] = benchmark::Counter(hops, benchmark::Counter::kAvgIterations);
  state.counters["events"] = benchmark::Counter(events, benchmark::Counter::kAvgIterations);
  state.counters["hops_per_s"] = benchmark::Counter(hops, benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
  if (!log.at.empty()) state.SkipWithError("a transfer completed inside the benchmark");
}

}  // namespace

static void BM_ForwardingSteadyState(benchmark::State& state) {
  forwarding<false>(state);
}
static void BM_ForwardingSteadyStatePfc(benchmark::State& state) {
  forwarding<true>(state);
}
BENCHMARK(BM_ForwardingSteadyState)->Arg(4)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ForwardingSteadyStatePfc)->Arg(4)->Arg(32)->Unit(benchmark::kMicrosecond);
