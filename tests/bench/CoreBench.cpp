// Micro-benchmarks of the engine's hot paths: event queue, packet pool, ECMP hashing and lookup.
#include <benchmark/benchmark.h>

#include <vector>

#include "sim/core/EventQueue.h"
#include "sim/core/Rng.h"
#include "sim/packet/PacketPool.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/FlowHash.h"
#include "sim/topology/TopologyBuilder.h"

using namespace fabricsim;

namespace {
struct Nop : EventHandler {
  void onEvent(uint32_t) override {}
};
}  // namespace

// Hold model: a queue of N pending events; each iteration pops the earliest and pushes one a
// delay later (the steady state of a discrete-event simulation). Random delays (uniform up to
// 1 us) all take the queue's heap; packet-network delays (a 4,096-byte frame's end and arrival and
// an ACK's on a 100 Gb/s, 1 us link, one in twenty random) mostly take its FIFO lanes.
template <bool kPacketDelays>
static void BM_EventQueueHold(benchmark::State& state) {
  static constexpr int64_t kDelays[4] = {333'120, 1'333'120, 5'120, 1'005'120};
  const auto n = static_cast<size_t>(state.range(0));
  EventQueue q;
  Nop nop;
  Rng rng(1);
  auto delay = [&] {
    if (kPacketDelays && rng.below(20) != 0) return Time::ps(kDelays[rng.below(4)]);
    return Time::ps(static_cast<int64_t>(rng.below(1'000'000)));
  };
  for (size_t i = 0; i < n; ++i)
    q.push(delay() + Time::ps(static_cast<int64_t>(rng.below(1'000'000))), &nop, 0);
  for (auto _ : state) {
    const Event e = q.pop();
    q.push(e.when + delay(), &nop, 0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueHold<false>)
    ->Name("BM_EventQueueHoldRandomDelays")
    ->Arg(1024)
    ->Arg(16384)
    ->Arg(262144);
BENCHMARK(BM_EventQueueHold<true>)->Name("BM_EventQueueHoldPacketDelays")->Arg(1024)->Arg(16384)->Arg(262144);

static void BM_PacketPoolAllocRelease(benchmark::State& state) {
  PacketPool pool;
  std::vector<uint32_t> live;
  live.reserve(1024);
  for (int i = 0; i < 1024; ++i) live.push_back(pool.allocate());
  size_t k = 0;
  for (auto _ : state) {
    pool.release(live[k]);
    live[k] = pool.allocate();
    benchmark::DoNotOptimize(pool.get(live[k]));
    k = (k + 1) & 1023;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PacketPoolAllocRelease);

static void BM_FiveTupleHash(benchmark::State& state) {
  uint32_t i = 0;
  for (auto _ : state) {
    const uint64_t t = FlowHash::tupleHash(FiveTuple{FlowHash::nicAddress(i), FlowHash::nicAddress(i + 7),
                                                     static_cast<uint16_t>(0xC000 | (i & 0x3FFF)), 4791, 17});
    benchmark::DoNotOptimize(FlowHash::select(t, 0x1234567, 16));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FiveTupleHash);

// One ECMP lookup per hop on a k=16 fat-tree (1,024 hosts, 320 switches).
static void BM_EcmpNextHop(benchmark::State& state) {
  TopologySpec spec;
  spec.kind = TopologyKind::FatTree;
  spec.fatTree.radix = 16;
  spec.fatTree.pods = 16;
  spec.fatTree.hostsPerEdge = 8;
  const auto topo = buildTopology(spec);
  const EcmpFib fib(*topo, 1);
  Rng rng(3);
  std::vector<std::pair<NodeId, uint32_t>> queries;
  for (int i = 0; i < 4096; ++i)
    queries.emplace_back(static_cast<NodeId>(topo->hostCount() + rng.below(topo->switchCount())),
                         static_cast<uint32_t>(rng.below(topo->nicCount())));
  size_t k = 0;
  for (auto _ : state) {
    const auto& [sw, nic] = queries[k];
    benchmark::DoNotOptimize(fib.nextHop(sw, nic, k * 0x9E3779B97F4A7C15ULL));
    k = (k + 1) & 4095;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EcmpNextHop);
