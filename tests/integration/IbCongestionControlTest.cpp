// InfiniBand congestion control (IBTA annex A10) end to end: FECN only at the root of congestion
// (the victim rule), a BECN per FECN back to the source, the sources' CCT index raised and the
// congestion spreading ended, victim flows never throttled. Expected values are counts that
// follow from the scenario's construction (which ports can be roots), invariants (one BECN per
// marked packet), and unloaded times computed from the link rates.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <vector>

#include "sim/cc/IbCongestionControl.h"
#include "sim/fabric/IbFraming.h"
#include "tests/support/PacketBench.h"

using namespace fabricsim;

namespace {

constexpr Bytes kKiB = 1024;
constexpr Bytes kMiB = 1024 * 1024;

/// The egress port of node `from` whose link leads to node `to`.
PortId portToward(const Topology& t, NodeId from, NodeId to) {
  for (uint32_t i = 0; i < t.degree(from); ++i)
    if (t.peerNode(t.port(from, i)) == to) return t.port(from, i);
  ADD_FAILURE() << "no link " << from << " -> " << to;
  return 0;
}

// The scenario. Leaf-spine, 4 leaves x 8 hosts, 2 spines; host links 100 Gb/s, fabric links
// 800 Gb/s, 1 us each; InfiniBand with 256 KiB of credit per (input port, VL).
// - Incast: hosts 8, 9 (leaf 1), 16, 17 (leaf 2), 24, 25 (leaf 3) send 4 MiB each to host 0 from
//   t = 0. Leaf 0's port to host 0 gets up to 6 x 100 Gb/s for 100 Gb/s: the root of congestion.
// - Victim A: host 10 (leaf 1) -> host 1, 1 MiB, from t = 0. Victim B: host 18 (leaf 2) ->
//   host 2, 1 MiB, from t = 1.5 ms (IB CC has had time to act). Each shares its leaf's uplink
//   and a spine -> leaf-0 link with incast flows, but not the port to host 0.
// Why the spine -> leaf-0 ports can only be victims: all the flows together come from 8 NICs of
// 100 Gb/s, so even if ECMP put every one on the same spine, a spine -> leaf-0 link (800 Gb/s)
// would carry at most 800 Gb/s: it is never oversubscribed. Nor do its credits cap its rate: the
// credit round trip at line rate is 800 Gb/s x (2 x 1 us + a 41 ns frame) = 204 KB < 256 KiB
// (computed below). So a queue there can only come from leaf 0 holding back credits because its
// port to host 0 is congested. Leaf 0's ports to hosts 1 and 2 each carry one 100 Gb/s flow
// from a 100 Gb/s NIC; the leaves' uplinks (800 Gb/s) are never oversubscribed either. The only
// port that may be a root is leaf 0's port to host 0.
// ECN thresholds: 40 KB / 160 KB, pmax 0.2 (the Lossless tests' values): a queue above 160 KB
// marks every FECN-eligible arrival unless the victim rule holds it back.
constexpr uint32_t kRoot = 0;
const std::vector<uint32_t> kIncast = {8, 9, 16, 17, 24, 25};
constexpr uint32_t kVictimA = 10, kVictimADst = 1;
constexpr uint32_t kVictimB = 18, kVictimBDst = 2;
const Time kVictimBStart = Time::us(1500);

TopologySpec scenarioSpec(bool ibcc, bool markOnDequeue) {
  TopologySpec s = testsupport::leafSpineSpec(4, 2, 8, "infiniband");
  s.links.fabricSpeed = BitRate::gbps(800);
  s.sw.creditBuffer = 256 * kKiB;
  s.sw.ecn.enabled = true;
  s.sw.ecn.kmin = 40'000;
  s.sw.ecn.kmax = 160'000;
  s.sw.ecn.pmax = 0.2;
  s.sw.ecn.markOnDequeue = markOnDequeue;
  s.sw.ecn.classMask = 0x7F;
  if (ibcc) s.congestionControl.algorithm = "ibcc";  // IbCcSpec defaults: +1 per BECN, -1 per 10 us, scale 8
  return s;
}

/// Starts victim B and, when IB CC runs, records every sender's CCT index at that moment.
struct StartVictimB : EventHandler {
  testsupport::PacketBench* bench = nullptr;
  TransferObserver* observer = nullptr;
  std::vector<int> incastIndex;
  int victimAIndex = -1;
  void onEvent(uint32_t) override {
    PacketFabric& f = bench->fabric;
    if (auto* cc = dynamic_cast<IbCongestionControl*>(f.congestionControl())) {
      const Time now = bench->sim.now();
      for (uint32_t src : kIncast) incastIndex.push_back(cc->index(f.findQueuePair(src, kRoot, 0, 0), now));
      victimAIndex = cc->index(f.findQueuePair(kVictimA, kVictimADst, 0, 0), now);
    }
    TransferRequest r;
    r.srcGpu = kVictimB;
    r.dstGpu = kVictimBDst;
    r.bytes = 1 * kMiB;
    r.tag = kVictimB;
    f.send(r, observer);
  }
};

struct Outcome {
  NetworkCounters net;
  uint64_t rootMarks = 0;
  uint64_t spineMarks[2] = {0, 0};
  uint64_t spineMaxQueue[2] = {0, 0};
  int64_t spineMinCredit[2] = {0, 0};
  std::vector<bool> incastBecn;  // whether each incast QP's receiver sent a BECN
  bool victimABecn = false, victimBBecn = false;
  std::vector<int> incastIndexAtB;
  int victimAIndexAtB = -1;
  const FlowRecord* a = nullptr;
  const FlowRecord* b = nullptr;
  Time lastIncastFinish;
  bool victimsShareSpinesWithIncast = false;
};

class Scenario {
 public:
  Scenario(bool ibcc, bool markOnDequeue) : bench_(scenarioSpec(ibcc, markOnDequeue), 1) {}

  Outcome run() {
    PacketFabric& f = bench_.fabric;
    const Topology& t = *bench_.topo;
    for (uint32_t src : kIncast) {
      TransferRequest r;
      r.srcGpu = src;
      r.dstGpu = kRoot;
      r.bytes = 4 * kMiB;
      r.tag = src;
      f.send(r, &done_);
    }
    TransferRequest a;
    a.srcGpu = kVictimA;
    a.dstGpu = kVictimADst;
    a.bytes = 1 * kMiB;
    a.tag = kVictimA;
    f.send(a, &done_);
    startB_.bench = &bench_;
    startB_.observer = &done_;
    bench_.sim.schedule(kVictimBStart, &startB_, 0);
    bench_.sim.run();

    Outcome o;
    EXPECT_EQ(done_.at.size(), kIncast.size() + 2);
    o.net = f.networkCounters();
    const NodeId leaf0 = t.findNode("leaf-0");
    o.rootMarks = f.port(portToward(t, leaf0, kRoot)).ecnMarks();
    const NodeId spines[2] = {t.findNode("spine-0"), t.findNode("spine-1")};
    for (int i = 0; i < 2; ++i) {
      const EgressPort& e = f.port(portToward(t, spines[i], leaf0));
      o.spineMarks[i] = e.ecnMarks();
      o.spineMaxQueue[i] = e.maxQueuedBytes();
      o.spineMinCredit[i] = e.minCreditsSeen();
    }
    // The spine each flow crosses, from the forwarding tables.
    auto spineOf = [&](uint32_t src, uint32_t dst) {
      const QueuePair& q = f.qp(f.findQueuePair(src, dst, 0, 0));
      return t.peerNode(bench_.fib.nextHop(t.peerNode(t.nicPort(src)), dst, q.tuple));
    };
    bool aShares = false, bShares = false;
    for (uint32_t src : kIncast) {
      o.incastBecn.push_back(f.qp(f.findQueuePair(src, kRoot, 0, 0)).notified);
      aShares |= spineOf(src, kRoot) == spineOf(kVictimA, kVictimADst);
      bShares |= spineOf(src, kRoot) == spineOf(kVictimB, kVictimBDst);
      o.lastIncastFinish = std::max(o.lastIncastFinish, done_.at[src]);
    }
    o.victimsShareSpinesWithIncast = aShares && bShares;
    o.victimABecn = f.qp(f.findQueuePair(kVictimA, kVictimADst, 0, 0)).notified;
    o.victimBBecn = f.qp(f.findQueuePair(kVictimB, kVictimBDst, 0, 0)).notified;
    o.incastIndexAtB = startB_.incastIndex;
    o.victimAIndexAtB = startB_.victimAIndex;
    for (const FlowRecord& r : f.flowRecords()) {
      if (r.srcGpu == kVictimA) o.a = &r;
      if (r.srcGpu == kVictimB) o.b = &r;
    }
    return o;
  }

  const testsupport::PacketBench& bench() const { return bench_; }

 private:
  testsupport::PacketBench bench_;
  testsupport::DeliveryLog done_;
  StartVictimB startB_;
};

}  // namespace

class IbCongestionControlVictimRule : public ::testing::TestWithParam<bool> {};

TEST_P(IbCongestionControlVictimRule, OnlyTheRootMarksAndVictimsAreNeverThrottled) {
  const bool onDequeue = GetParam();
  const uint32_t frame = IbFraming::dataWireBytes(4096);
  // The premise of the scenario's arithmetic: the credit buffer covers the fabric links' credit
  // round trip at line rate, so credits alone do not cap them.
  const Bytes roundTrip =
      bytesInTime(Time::us(2) + serializationTime(frame, BitRate::gbps(800)), BitRate::gbps(800));
  ASSERT_LT(roundTrip, 256 * kKiB);

  Scenario ibcc(true, onDequeue);
  const Outcome o = ibcc.run();
  ASSERT_NE(o.a, nullptr);
  ASSERT_NE(o.b, nullptr);
  ASSERT_TRUE(o.victimsShareSpinesWithIncast)
      << "a victim crosses no spine the incast uses: the case tests nothing";
  EXPECT_EQ(o.net.goodputBytes, static_cast<Bytes>(kIncast.size()) * 4 * kMiB + 2 * kMiB);
  EXPECT_EQ(o.net.creditsOutstanding, 0);

  // The spine -> leaf-0 ports were held back by credits with queues far above kmax (RED would mark
  // every packet there), and marked nothing: they are victims.
  for (int i = 0; i < 2; ++i) {
    EXPECT_LT(o.spineMinCredit[i], static_cast<int64_t>(frame)) << "spine-" << i << " never starved";
    EXPECT_GT(o.spineMaxQueue[i], 160'000u) << "spine-" << i;
    EXPECT_EQ(o.spineMarks[i], 0u) << "spine-" << i << " marked as a root";
  }
  // The root marked, and every mark in the fabric was set there (no other port can be a root).
  EXPECT_GT(o.rootMarks, 0u);
  EXPECT_EQ(o.net.ecnMarks, o.rootMarks);
  // The per-tier counts partition the marks: all in the leaves' ports toward hosts.
  uint64_t tierSum = 0;
  for (const TierCounters& t : o.net.perTier) {
    tierSum += t.ecnMarks;
    EXPECT_EQ(t.ecnMarks, t.name == "host-leaf down" ? o.rootMarks : 0u) << t.name;
  }
  EXPECT_EQ(tierSum, o.net.ecnMarks);
  // Each marked packet reaches its receiver (nothing is dropped) and, with becn_interval 0, is
  // answered by exactly one BECN: marks are set once per packet here, so BECNs = marks.
  EXPECT_EQ(o.net.becns, o.net.ecnMarks);
  for (size_t i = 0; i < kIncast.size(); ++i) EXPECT_TRUE(o.incastBecn[i]) << "incast sender " << kIncast[i];
  // BECNs raised the incast senders' CCT index; the victims got none, and A's index stayed 0.
  EXPECT_FALSE(o.victimABecn);
  EXPECT_FALSE(o.victimBBecn);
  ASSERT_EQ(o.incastIndexAtB.size(), kIncast.size());
  for (size_t i = 0; i < kIncast.size(); ++i)
    EXPECT_GT(o.incastIndexAtB[i], 0) << "incast sender " << kIncast[i];
  EXPECT_EQ(o.victimAIndexAtB, 0);

  // B ran while the incast was still running, on links it shares with it.
  EXPECT_GT(o.lastIncastFinish, o.b->finish);
  // B starts once IB CC has slowed the incast enough that leaf 0 no longer withholds credits: it
  // meets no queue but the interleaving at its two shared 800 Gb/s hops, at most one frame per
  // other flow on each (6 incast + A), 2 x 7 x 41 ns = 0.58 us per packet, not cumulative while
  // those links run below line rate. Allowed: 1 us over its unloaded time.
  const Time interleave = serializationTime(frame, BitRate::gbps(800)) * (2 * 7);
  ASSERT_LT(interleave, Time::us(1));
  EXPECT_LE(o.b->fct(), o.b->ideal + Time::us(1))
      << "B " << o.b->fct().micros() << " us, ideal " << o.b->ideal.micros();

  // Without congestion control the spreading lasts until the incast drains: the same B is held
  // back behind the spine queues (about 1/(flows sharing them) of the link's drain; 2x leaves a
  // wide margin), and A takes longer than under IB CC, which never slows A and ends the spreading.
  Scenario none(false, onDequeue);
  const Outcome n = none.run();
  ASSERT_NE(n.a, nullptr);
  ASSERT_NE(n.b, nullptr);
  EXPECT_EQ(n.net.becns, 0u);
  EXPECT_GT(n.b->fct(), n.b->ideal * 2);
  EXPECT_GT(n.a->fct(), n.a->ideal * 2);  // A is a real victim of the spreading: the case is not vacuous
  EXPECT_LT(o.a->fct(), n.a->fct());
  std::cout << "[ info ] IB CC (mark on " << (onDequeue ? "dequeue" : "enqueue") << "): root marks "
            << o.rootMarks << ", spine queues " << o.spineMaxQueue[0] << " / " << o.spineMaxQueue[1]
            << " B; victim A " << o.a->fct().micros() << " us (no CC " << n.a->fct().micros() << ", ideal "
            << o.a->ideal.micros() << "), victim B " << o.b->fct().micros() << " us (no CC "
            << n.b->fct().micros() << ", ideal " << o.b->ideal.micros() << ")\n";
}

INSTANTIATE_TEST_SUITE_P(MarkOn, IbCongestionControlVictimRule, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "Dequeue" : "Enqueue";
                         });
