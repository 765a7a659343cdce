// Path selection on the packet backend (the modes the README's "Routing" section defines). On a
// permutation of 2 MB flows on the non-blocking k=8 fat-tree at 100 Gb/s: ECMP shows the
// hash-collision slowdown; spraying and adaptive routing with a reorder-tolerant NIC come within
// 10% of the ideal computed here in closed form; spraying into a strict (go-back-N) NIC triggers
// NACKs and retransmissions (why the loader refuses the pair); flowlet routing is no worse than
// ECMP. On a permutation between two leaves where the ECMP hash provably collides (found by
// walking the hashed paths), flowlets do not collide. With a flowlet gap above a bound on the
// spread of path delays derived here, flows that start a new flowlet at every window never
// arrive out of order at a strict NIC.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/FlowHash.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/PatternWorkload.h"
#include "tests/support/PacketBench.h"

using namespace fabricsim;
using namespace fabricsim::literals;
using fabricsim::testsupport::DeliveryLog;
using fabricsim::testsupport::leafSpineSpec;
using fabricsim::testsupport::PacketBench;

namespace {

constexpr Bytes kMessage = 2'000'000;
constexpr uint32_t kMtu = 4000;
// Wire bytes of a full data frame: payload plus RoCEv2 framing (preamble+SFD 8, Ethernet 14,
// IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, inter-frame gap 12 = 82) or InfiniBand's (LRH 8,
// BTH 12, ICRC 4, VCRC 2 = 26), from the standards rather than from the code.
constexpr uint32_t frameBytes(const char* technology) {
  return kMtu + (technology[0] == 'i' ? 26 : 82);
}

/// Unloaded time of `bytes` over `links` equal 100 Gb/s links of 1 us with no switch latency:
/// store-and-forward of N full frames takes N frame times on the first link, then each further
/// link adds the last frame's time and every link its propagation.
Time ideal(Bytes bytes, int links, const char* technology, Time latency = 1_us) {
  const int64_t frames = (bytes + kMtu - 1) / kMtu;
  const int64_t framePs = frameBytes(technology) * 8 * 10;  // bits at 100 Gb/s: 10 ps per bit
  return Time::ps((frames + links - 1) * framePs) + latency * links;
}

/// Links between hosts a and b of the k=8 fat-tree (1 GPU per host; 4 hosts per edge switch,
/// 16 per pod): 2 under one edge switch, 4 within a pod, 6 across pods.
int fatTreeLinks(uint32_t a, uint32_t b) {
  if (a / 4 == b / 4) return 2;
  return a / 16 == b / 16 ? 4 : 6;
}

TopologySpec fatTree8(const std::string& algorithm, const std::string& reorder,
                      const std::string& technology) {
  TopologySpec s;
  s.kind = TopologyKind::FatTree;
  s.fatTree = {8, 8, 4};
  s.links.technology = technology;
  s.links.hostSpeed = s.links.fabricSpeed = BitRate::gbps(100);
  s.links.latency = 1_us;
  s.links.mtu = kMtu;
  s.sw.creditBuffer = 64 * 1024;
  s.routing.algorithm = algorithm;
  s.nic.reorder = reorder;
  return s;
}

struct Outcome {
  double medianSlowdown = 0;  ///< against each flow's closed-form ideal
  Time jct;                   ///< the last flow's completion
  NetworkCounters net;
};

Outcome permutation(const TopologySpec& s, Bytes message = kMessage, uint64_t seed = 3) {
  const auto topo = buildTopology(s);
  Simulator sim(seed);
  EcmpFib fib(*topo, seed);
  PacketFabric fabric(sim, *topo, s, fib);
  fabric.keepFlowRecords(true);
  WorkloadSpec w;
  w.name = "perm";
  w.pattern.messageSize = message;
  PatternWorkload job(sim, fabric, w, topo->gpuCount());
  job.start();
  sim.run();
  EXPECT_TRUE(job.finished());
  std::vector<double> slow;
  const char* tech = s.links.technology.c_str();
  for (const auto& r : fabric.flowRecords()) {
    const Time want = ideal(r.bytes, fatTreeLinks(r.srcGpu, r.dstGpu), tech);
    slow.push_back(static_cast<double>(r.fct().picos()) / static_cast<double>(want.picos()));
  }
  std::sort(slow.begin(), slow.end());
  Outcome o;
  o.medianSlowdown = slow[slow.size() / 2];
  o.jct = job.finishTime();
  o.net = fabric.networkCounters();
  EXPECT_EQ(o.net.goodputBytes, 128 * message);
  return o;
}

Outcome permutation(const std::string& algorithm, const std::string& reorder,
                    const std::string& technology = "roce", Bytes message = kMessage, uint64_t seed = 3) {
  return permutation(fatTree8(algorithm, reorder, technology), message, seed);
}

double ratio(Time a, Time b) {
  return static_cast<double>(a.picos()) / static_cast<double>(b.picos());
}

}  // namespace

TEST(PathSelection, EcmpShowsHashCollisions) {
  const Outcome o = permutation("ecmp", "strict");
  EXPECT_GT(o.medianSlowdown, 1.5);
  EXPECT_GT(ratio(o.jct, ideal(kMessage, 6, "roce")), 2.5);
  EXPECT_EQ(o.net.outOfOrderPackets, 0u);
}

TEST(PathSelection, SprayWithTolerantNicComesWithinTenPercentOfIdeal) {
  const Outcome ecmp = permutation("ecmp", "strict");
  for (const char* tech : {"roce", "infiniband"}) {
    const Outcome o = permutation("spray", "tolerant", tech);
    // The median flow within 10% of its closed-form ideal; the job, bounded by the unluckiest
    // flow under random spraying at 100% load on the down links, within 25% (ECMP: > 2.5x).
    EXPECT_LE(o.medianSlowdown, 1.10) << tech;
    EXPECT_LE(ratio(o.jct, ideal(kMessage, 6, tech)), 1.25) << tech;
    EXPECT_LT(ratio(o.jct, ecmp.jct) * 2, 1.0) << tech;
    EXPECT_GT(o.net.outOfOrderPackets, 0u) << tech;  // it does reorder; the NIC absorbs it
    EXPECT_EQ(o.net.retransmittedBytes, 0) << tech;
    EXPECT_EQ(o.net.nacksSent, 0u) << tech;
  }
}

TEST(PathSelection, SprayWithStrictNicSuffersRetransmissions) {
  // Why the loader refuses adaptive and spray with nic.reorder: strict (built here without the
  // loader). 200 KB messages keep the go-back-N storm short enough for a test.
  const Bytes msg = 200'000;
  const Outcome o = permutation("spray", "strict", "roce", msg);
  EXPECT_GT(o.net.nacksSent, 100u);
  EXPECT_GT(o.net.retransmittedBytes, 128 * msg / 2);
  EXPECT_GT(ratio(o.jct, permutation("spray", "tolerant", "roce", msg).jct), 2.0);
}

TEST(PathSelection, AdaptiveRoutingComesWithinTenPercentOfIdeal) {
  // Per packet, the least-loaded member graded in quanta of eight frames, on RoCE with a
  // tolerant NIC and on InfiniBand. The last flow must finish within 10% of the ideal of the
  // longest (6-link) path: what issue 17 asks of a per-packet adaptive router on a non-blocking
  // permutation, which no ECMP placement can do (ECMP: > 2.5x).
  for (const char* tech : {"roce", "infiniband"}) {
    const Outcome o = permutation("adaptive", "tolerant", tech);
    EXPECT_LE(o.medianSlowdown, 1.10) << tech;
    EXPECT_LE(ratio(o.jct, ideal(kMessage, 6, tech)), 1.10) << tech;
    EXPECT_EQ(o.net.retransmittedBytes, 0) << tech;
  }
}

TEST(PathSelection, FlowletIsNoWorseThanEcmpOnStaticTables) {
  // A continuous flow has no idle gap, so each keeps the member its first packet chose: flowlet
  // routing is a load-aware placement at flow start, never worse than hashing by more than
  // 20% (issue 17's bound; a placement that sees its own switch's flows spreads them at least
  // as well as a hash, but not the downlinks it cannot see). Three permutations and hash seeds.
  for (uint64_t seed : {1u, 2u, 3u}) {
    const Outcome ecmp = permutation("ecmp", "strict", "roce", kMessage, seed);
    const Outcome flowlet = permutation("flowlet", "strict", "roce", kMessage, seed);
    EXPECT_LE(ratio(flowlet.jct, ecmp.jct), 1.2) << "seed " << seed;
    EXPECT_EQ(flowlet.net.outOfOrderPackets, 0u) << "seed " << seed;  // a flowlet never moves
    EXPECT_EQ(flowlet.net.retransmittedBytes, 0) << "seed " << seed;
  }
}

TEST(PathSelection, FlowletsAvoidTheCollisionsEcmpMakes) {
  // Leaf-spine, 2 leaves x 4 spines x 4 hosts: host i of leaf 0 sends 2 MB to host i of leaf 1.
  // The 4 flows leave leaf 0 over 4 uplinks, one per spine. Under uniform hashing all four land
  // on distinct uplinks with probability 4!/4^4 = 9.4%; a seed where two share one is found by
  // walking each flow's hashed path through the tables.
  TopologySpec s = leafSpineSpec(2, 4, 4);
  s.links.mtu = kMtu;
  const int hosts = 4;
  auto requests = [&] {
    std::vector<TransferRequest> r(hosts);
    for (int i = 0; i < hosts; ++i) {
      r[i].srcGpu = static_cast<uint32_t>(i);
      r[i].dstGpu = static_cast<uint32_t>(hosts + i);
      r[i].bytes = kMessage;
      r[i].tag = static_cast<uint64_t>(i);
    }
    return r;
  };
  uint64_t seed = 0;
  for (uint64_t candidate = 1; candidate < 50 && seed == 0; ++candidate) {
    PacketBench probe(s, candidate);
    std::set<PortId> uplinks;
    for (const TransferRequest& r : requests()) {
      const uint32_t src = probe.topo->nicOfGpu(r.srcGpu), dst = probe.topo->nicOfGpu(r.dstGpu);
      const NodeId leaf = probe.topo->attachedSwitch(src);
      uplinks.insert(probe.fib.nextHop(leaf, dst, FlowHash::queuePairTuple(src, dst, 0, 0)));
    }
    if (uplinks.size() < static_cast<size_t>(hosts)) seed = candidate;
  }
  ASSERT_NE(seed, 0u) << "no colliding seed in 49 (probability 0.094^49)";

  auto run = [&](const char* algorithm) {
    TopologySpec t = s;
    t.routing.algorithm = algorithm;
    PacketBench b(t, seed);
    DeliveryLog log;
    for (const TransferRequest& r : requests()) b.fabric.send(r, &log);
    b.sim.run();
    Time last;
    for (const auto& [tag, at] : log.at) last = std::max(last, at);
    EXPECT_EQ(log.at.size(), static_cast<size_t>(hosts));
    EXPECT_EQ(b.fabric.networkCounters().outOfOrderPackets, 0u);
    return last;
  };
  const Time alone = ideal(kMessage, 4, "roce");
  // ECMP: two flows through one 100 Gb/s uplink push 2 N frames through it.
  const Time ecmp = run("ecmp");
  EXPECT_GE(ecmp, Time::ps(2 * (kMessage / kMtu) * frameBytes("roce") * 80));
  // Flowlets: the four first packets reach leaf 0 together and see four idle uplinks; each new
  // flowlet goes to the member given one least recently, so they take four spines and every
  // flow runs alone on its path. 2% allowed for the ACKs sharing the hosts' links (86 B per
  // 4,082 B frame).
  const Time flowlet = run("flowlet");
  EXPECT_LE(ratio(flowlet, alone), 1.02);
  EXPECT_LT(ratio(flowlet, ecmp), 0.55);
}

TEST(PathSelection, FlowletsNeverReorderWhenTheGapExceedsThePathDelaySpread) {
  // Window-limited flows with 10 us links: each QP sends 2 frames (8 KB window), then waits a
  // round trip (12 link crossings, > 120 us) for ACKs, so at every switch each window starts a
  // new flowlet and is placed afresh. Two packets of a flow take different paths only across
  // such a gap, so the later one overtakes the earlier only if the earlier's remaining delay
  // exceeds the later's by more than the gap. Every path between two hosts has the same links,
  // so delays differ only by queueing, and a packet queues behind at most the bytes in flight
  // of the flows routed through each port it crosses: with one flow per source and destination
  // host (a permutation), after the first switch at most 4 (edge up, the edge's hosts) + 16 (agg
  // up, the pod's hosts) + 16 (core down, into the pod) + 4 (agg down, to the edge's hosts) + 1
  // (edge down) = 41 flows, each with at most 2 frames and the 2 ACKs they cause in flight:
  // 41 x 2 x (4,082 + 86) B = 341,776 B = 27.3 us at 100 Gb/s. A 30 us gap exceeds it.
  TopologySpec s = fatTree8("flowlet", "strict", "roce");
  s.links.latency = 10_us;
  s.nic.window = 2 * kMtu;
  s.routing.flowletGap = 30_us;
  const Bytes msg = 100 * kMtu;  // 50 windows per flow
  {
    const auto topo = buildTopology(s);
    Simulator sim(5);
    EcmpFib fib(*topo, 5);
    PacketFabric fabric(sim, *topo, s, fib);
    fabric.keepFlowRecords(true);
    WorkloadSpec w;
    w.name = "perm";
    w.pattern.messageSize = msg;
    PatternWorkload job(sim, fabric, w, topo->gpuCount());
    job.start();
    sim.run();
    ASSERT_TRUE(job.finished());
    const NetworkCounters net = fabric.networkCounters();
    EXPECT_EQ(net.goodputBytes, 128 * msg);
    EXPECT_EQ(net.outOfOrderPackets, 0u);
    EXPECT_EQ(net.nacksSent, 0u);
    EXPECT_EQ(net.retransmittedBytes, 0);
  }
  // The flows do move: one such flow alone, from host 0 to host 127, spreads its 50 flowlets over
  // all 4 uplinks of its edge switch (each new flowlet finds the queues empty and goes to the
  // member given one least recently).
  PacketBench b(s, 5);
  DeliveryLog log;
  TransferRequest r;
  r.srcGpu = 0;
  r.dstGpu = 127;
  r.bytes = msg;
  b.fabric.send(r, &log);
  b.sim.run();
  ASSERT_EQ(log.at.size(), 1u);
  const NodeId edge = b.topo->attachedSwitch(b.topo->nicOfGpu(0));
  int used = 0;
  for (PortId p : b.fib.group(edge, b.topo->nicOfGpu(127))) used += b.fabric.port(p).packetsSent() > 0;
  EXPECT_EQ(used, 4);
}
