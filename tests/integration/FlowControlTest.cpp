// Link-level flow control (PFC, InfiniBand credits) and ECN marking, checked against closed
// forms and invariants on small code-built topologies.
#include <gtest/gtest.h>

#include "sim/config/DcqcnPresets.h"
#include "tests/support/PacketBench.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/IbFraming.h"
#include "sim/packet/PacketFabric.h"
#include "sim/fabric/RoceFraming.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/PatternWorkload.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {

constexpr Bytes kKiB = 1024;
constexpr Bytes kMiB = 1024 * 1024;

// Every field the tests rely on is set explicitly: a spec built in code skips the loader.

void enablePfc(TopologySpec& s, Bytes xoff, Bytes xon) {
  s.sw.pfc = PfcSpec{};
  s.sw.pfc.enabled = true;
  s.sw.pfc.xoff = xoff;
  s.sw.pfc.xon = xon;
  s.sw.pfc.dynamicAlpha = 0.0;
  s.sw.pfc.headroom = 0;
  s.sw.pfc.quanta = 65535;
  s.sw.pfc.classMask = 0x7F;
}


using Bench = testsupport::PacketBench;
using Done = testsupport::DeliveryLog;

TopologySpec leafSpine(int leaves, int spines, int hostsPerLeaf, const std::string& technology = "roce") {
  return testsupport::leafSpineSpec(leaves, spines, hostsPerLeaf, technology);
}

WorkloadSpec incast(uint32_t receiver, int senders, Bytes message) {
  WorkloadSpec w;
  w.name = "incast";
  w.pattern.pattern = PatternKind::Incast;
  w.pattern.incastReceiver = receiver;
  w.pattern.incastSenders = senders;
  w.pattern.messageSize = message;
  return w;
}

/// The egress port of node `from` whose link leads to node `to`.
PortId portToward(const Topology& t, NodeId from, NodeId to) {
  for (uint32_t i = 0; i < t.degree(from); ++i)
    if (t.peerNode(t.port(from, i)) == to) return t.port(from, i);
  ADD_FAILURE() << "no link " << from << " -> " << to;
  return 0;
}

double ps(Time t) { return static_cast<double>(t.picos()); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// 1. PFC makes a 16-to-1 incast lossless and keeps the bottleneck busy.
TEST(FlowControl, PfcIncastIsLossless) {
  TopologySpec s = leafSpine(4, 2, 8);
  s.sw.buffer = 4 * kMiB;
  enablePfc(s, 100'000, 80'000);
  Bench b(s);
  const Bytes msg = 1 * kMiB;
  PatternWorkload job(b.sim, b.fabric, incast(0, 16, msg), b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  const auto c = b.fabric.networkCounters();
  EXPECT_EQ(c.packetsDropped, 0u);
  EXPECT_EQ(c.losslessDrops, 0u);
  EXPECT_EQ(c.bytesDropped, 0);
  EXPECT_EQ(c.retransmittedBytes, 0);
  EXPECT_EQ(c.goodputBytes, 16 * msg);
  EXPECT_EQ(c.bytesDelivered, 16 * msg);
  EXPECT_EQ(c.bytesSent, c.bytesDelivered + c.bytesDropped);
  EXPECT_GT(c.pfcPauseFrames, 0u);
  EXPECT_GT(c.pfcPausedUs, 0.0);
  // Per-port paused time: the most-paused list is sorted, each entry bounded by the run, and its
  // sum by the total.
  ASSERT_FALSE(c.mostPausedPorts.empty());
  EXPECT_GE(c.pausedPorts, c.mostPausedPorts.size());
  double listed = 0;
  for (size_t i = 0; i < c.mostPausedPorts.size(); ++i) {
    listed += c.mostPausedPorts[i].pausedUs;
    EXPECT_LE(c.mostPausedPorts[i].pausedUs, c.activeTime.micros() + 1e-6);
    if (i > 0) {
      EXPECT_LE(c.mostPausedPorts[i].pausedUs, c.mostPausedPorts[i - 1].pausedUs);
    }
  }
  EXPECT_LE(listed, c.pfcPausedUs + 1e-6);
  EXPECT_EQ(b.fabric.pool().live(), 0u);

  // The receiver's downlink must carry 16 MiB of payload in 4096 full frames. Lower bound: that
  // many frames back to back. Upper bound: 5% on top (PFC XON/XOFF hysteresis may let the
  // bottleneck queue run dry briefly; a lossless 16:1 incast with 100 KB XOFF keeps well over
  // one BDP queued at the leaf, so it should not) plus 10 us for the first packet to reach it
  // (at most 4 hops x (1 us + 0.33 us serialization)) and the last ACK-free completion.
  const int64_t frames = 16 * msg / 4096;
  const Time wire = serializationTime(RoceFraming::dataWireBytes(4096), BitRate::gbps(100)) * frames;
  const Time jct = job.finishTime() - job.startTime();
  EXPECT_GE(jct, wire);
  std::cout << "[ info ] PFC incast JCT " << jct.micros() << " us, bottleneck wire time " << wire.micros() << " us, "
            << c.pfcPauseFrames << " pauses, " << c.pfcPausedUs << " us paused\n";
  EXPECT_LE(ps(jct), ps(wire) * 1.05 + ps(10_us)) << "JCT " << jct.micros() << " us, wire " << wire.micros() << " us";
  // Every switch stayed within its buffer (no lossless violation needed headroom beyond it).
  const NodeId leaf0 = b.topo->findNode("leaf-0");
  EXPECT_LE(b.fabric.switchAt(leaf0).maxBufferUsed(), static_cast<uint64_t>(s.sw.buffer));
}

// ---------------------------------------------------------------------------------------------
// 2. Without PFC and with a small buffer the same incast drops and go-back-N repairs it.
TEST(FlowControl, LossyIncastRetransmitsEverything) {
  TopologySpec s = leafSpine(4, 2, 8);
  s.sw.buffer = 400 * kKiB;
  Bench b(s);
  const Bytes msg = 1 * kMiB;
  PatternWorkload job(b.sim, b.fabric, incast(0, 16, msg), b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  const auto c = b.fabric.networkCounters();
  EXPECT_GT(c.packetsDropped, 0u);
  EXPECT_GT(c.bytesDropped, 0);
  EXPECT_GT(c.retransmittedBytes, 0);
  EXPECT_EQ(c.losslessDrops, 0u);  // nothing is lossless here
  EXPECT_EQ(c.pfcPauseFrames, 0u);
  EXPECT_EQ(c.bytesSent, c.bytesDelivered + c.bytesDropped);
  EXPECT_EQ(c.goodputBytes, 16 * msg);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
  for (const auto& r : b.fabric.flowRecords()) {
    ASSERT_TRUE(r.done());
    EXPECT_GE(r.fct(), r.ideal);
  }
}

// ---------------------------------------------------------------------------------------------
// 3. RED marking. Two line-rate senders on leaf 0 into a third host on leaf 0, no CC, a 32 MiB
// buffer (no drops): the leaf's egress queue toward the receiver grows by one frame per frame
// served, so the pair of packets arriving at the i-th serialization slot sees about i frames
// queued (i-1 and i, or i and i+1, depending on the order of same-instant events). The number
// of marks is a sum of independent Bernoullis with p(q) = pmax (q - kmin) / (kmax - kmin).
TEST(FlowControl, EcnMarkingFollowsRedCurve) {
  const uint32_t wire = RoceFraming::dataWireBytes(4096);
  const Bytes msg = 2 * kMiB;  // 512 full frames per sender
  const int64_t perSender = msg / 4096;
  for (const double pmax : {0.3, 1.0}) {
    TopologySpec s = leafSpine(1, 1, 3);
    s.sw.ecn.enabled = true;
    s.sw.ecn.kmin = 100'000;
    s.sw.ecn.kmax = 2'200'000;  // above the largest queue (~512 frames), so p stays on the ramp
    s.sw.ecn.pmax = pmax;
    s.sw.ecn.markOnDequeue = false;
    s.sw.ecn.classMask = 0x7F;
    Bench b(s, 7);
    Done done;
    for (uint32_t src : {1u, 2u}) {
      TransferRequest r;
      r.srcGpu = src;
      r.dstGpu = 0;
      r.bytes = msg;
      r.tag = src;
      b.fabric.send(r, &done);
    }
    b.sim.run();
    ASSERT_EQ(done.at.size(), 2u);
    const auto c = b.fabric.networkCounters();
    ASSERT_EQ(c.packetsDropped, 0u);

    // The model behind the expectation: the queue peaks at about perSender frames.
    const PortId down = portToward(*b.topo, b.topo->findNode("leaf-0"), 0);
    const double peakFrames = static_cast<double>(b.fabric.port(down).maxQueuedBytes()) / wire;
    EXPECT_NEAR(peakFrames, static_cast<double>(perSender), 2.0);

    auto p = [&](double q) {
      if (q <= static_cast<double>(s.sw.ecn.kmin)) return 0.0;
      if (q > static_cast<double>(s.sw.ecn.kmax)) return 1.0;
      return pmax * (q - static_cast<double>(s.sw.ecn.kmin)) / static_cast<double>(s.sw.ecn.kmax - s.sw.ecn.kmin);
    };
    double lo = 0, hi = 0, var = 0;
    for (int64_t i = 0; i < perSender; ++i) {
      const double q = static_cast<double>(i) * wire;
      const double qm = static_cast<double>(std::max<int64_t>(i - 1, 0)) * wire;
      const double qp = static_cast<double>(i + 1) * wire;
      lo += p(qm) + p(q);
      hi += p(q) + p(qp);
      var += p(q) * (1 - p(q)) * 2;
    }
    // 4 sigma of the binomial sum; the event-order ambiguity is covered by [lo, hi].
    const double sigma = std::sqrt(var);
    const double marks = static_cast<double>(c.ecnMarks);
    std::cout << "[ info ] pmax " << pmax << ": " << c.ecnMarks << " marks, expected " << lo << ".." << hi
              << " +- " << 4 * sigma << " (4 sigma)\n";
    EXPECT_GE(marks, lo - 4 * sigma) << "pmax " << pmax << " expected " << lo << ".." << hi;
    EXPECT_LE(marks, hi + 4 * sigma) << "pmax " << pmax << " expected " << lo << ".." << hi;
  }

  // No contention: a single flow never queues above kmin, so nothing is marked.
  TopologySpec s = leafSpine(2, 2, 2);
  s.sw.ecn.enabled = true;
  s.sw.ecn.kmin = 10'000;
  s.sw.ecn.kmax = 110'000;
  s.sw.ecn.pmax = 0.5;
  s.sw.ecn.markOnDequeue = false;
  s.sw.ecn.classMask = 0x7F;
  Bench b(s);
  Done done;
  TransferRequest r;
  r.srcGpu = 0;
  r.dstGpu = 3;
  r.bytes = 4 * kMiB;
  b.fabric.send(r, &done);
  b.sim.run();
  ASSERT_EQ(done.at.size(), 1u);
  EXPECT_EQ(b.fabric.networkCounters().ecnMarks, 0u);
}

// ---------------------------------------------------------------------------------------------
// 4. The InfiniBand credit loop. A switch advertises `credit_buffer` bytes per (input port, VL) to
// the port feeding it, and the upstream sends only what that credit covers, so at no time may
// a switch hold more than that from one (input port, VL). The 16-to-1 incast with 32 KiB of
// credit fills the inputs that feed the receiver's leaf; the bound must hold, must have been
// reached (within one frame: otherwise the loop never bound anything), and every credit must be
// back once the fabric has drained.
TEST(FlowControl, InfiniBandSwitchesNeverHoldMoreThanTheCreditTheyAdvertised) {
  TopologySpec s = leafSpine(4, 2, 8, "infiniband");
  s.sw.buffer = 512 * kKiB;
  s.sw.creditBuffer = 32 * kKiB;
  Bench b(s);
  const Bytes msg = 1 * kMiB;
  PatternWorkload job(b.sim, b.fabric, incast(0, 16, msg), b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  const auto c = b.fabric.networkCounters();
  EXPECT_EQ(c.goodputBytes, 16 * msg);
  EXPECT_EQ(c.creditsOutstanding, 0);
  uint64_t highest = 0;
  for (NodeId n = static_cast<NodeId>(b.topo->hostCount()); n < b.topo->nodeCount(); ++n) {
    const Switch& sw = b.fabric.switchAt(n);
    for (uint32_t p = 0; p < b.topo->degree(n); ++p) {
      EXPECT_LE(sw.mmu().peakCredited(p), static_cast<uint64_t>(s.sw.creditBuffer))
          << b.topo->node(n).name << " port " << p;
      highest = std::max(highest, sw.mmu().peakCredited(p));
    }
    EXPECT_EQ(sw.bufferUsed(), 0u) << b.topo->node(n).name;  // everything held was released
  }
  EXPECT_GT(highest, static_cast<uint64_t>(s.sw.creditBuffer) - IbFraming::dataWireBytes(4096));
}

// ---------------------------------------------------------------------------------------------
// 5. One 8 MiB flow alone on InfiniBand: exact store-and-forward FCT with IB framing, and
// goodput = line rate x payload / wire bytes.
TEST(FlowControl, InfiniBandSingleFlowAchievesLineRateLessHeaders) {
  TopologySpec s = leafSpine(2, 2, 2, "infiniband");
  Bench b(s);
  Done done;
  TransferRequest r;
  r.srcGpu = 0;
  r.dstGpu = 3;  // NIC, leaf, spine, leaf, NIC: 4 links
  r.bytes = 8 * kMiB;
  b.fabric.send(r, &done);
  b.sim.run();
  ASSERT_EQ(done.at.count(0), 1u);
  const int hops = 4;
  const int64_t n = r.bytes / 4096;  // all full frames
  const Time ser = serializationTime(IbFraming::dataWireBytes(4096), BitRate::gbps(100));
  const Time expected = ser * (n - 1 + hops - 1) + ser + 1_us * hops;
  EXPECT_EQ(done.at[0], expected) << "got " << done.at[0].picos() << " ps, expected " << expected.picos();
  EXPECT_EQ(b.fabric.flowRecords()[0].ideal, expected);

  // Goodput over FCT minus one packet's unloaded latency = n / (n - 1) x the framed line rate;
  // n = 2048, so 0.05% above, well within the 0.5% asked for.
  const Time onePacket = ser * hops + 1_us * hops;
  const double goodput = static_cast<double>(r.bytes) * 8 / ((done.at[0] - onePacket).micros() * 1e-6);
  const double line = 100e9 * 4096.0 / IbFraming::dataWireBytes(4096);
  EXPECT_NEAR(goodput / line, 1.0, 0.005) << goodput / 1e9 << " Gb/s vs " << line / 1e9;
  const auto c = b.fabric.networkCounters();
  EXPECT_EQ(c.packetsDropped, 0u);
  EXPECT_GE(c.minCreditBytes, 0);
}

// ---------------------------------------------------------------------------------------------
// 6. InfiniBand backpressure: 8 senders on leaves 1-3 into host 0 on leaf 0 with 16 KiB of
// credit per input port. Leaf 0 can hold only 16 KiB per spine port, so the spines' egress
// toward leaf 0 runs out of credit and queues beyond one credit buffer (it is fed by three
// input ports, each allowed 16 KiB). Without backpressure those queues would stay near empty:
// the two spine->leaf-0 links have twice the receiver's line rate.
TEST(FlowControl, InfiniBandBackpressuresUpstream) {
  TopologySpec s = leafSpine(4, 2, 8, "infiniband");
  s.sw.creditBuffer = 16 * kKiB;
  Bench b(s);
  Done done;
  const std::vector<uint32_t> senders = {8, 9, 10, 16, 17, 18, 24, 25};  // leaves 1, 2, 3
  for (uint32_t src : senders) {
    TransferRequest r;
    r.srcGpu = src;
    r.dstGpu = 0;
    r.bytes = 1 * kMiB;
    r.tag = src;
    b.fabric.send(r, &done);
  }
  b.sim.run();
  ASSERT_EQ(done.at.size(), senders.size());
  const auto c = b.fabric.networkCounters();
  EXPECT_EQ(c.packetsDropped, 0u);
  EXPECT_EQ(c.losslessDrops, 0u);
  EXPECT_GE(c.minCreditBytes, 0);
  EXPECT_EQ(c.goodputBytes, static_cast<Bytes>(senders.size()) * kMiB);

  const NodeId leaf0 = b.topo->findNode("leaf-0");
  uint64_t spineQueue = 0;
  int64_t spineMinCredit = INT64_MAX;
  for (const char* name : {"spine-0", "spine-1"}) {
    const EgressPort& e = b.fabric.port(portToward(*b.topo, b.topo->findNode(name), leaf0));
    spineQueue = std::max(spineQueue, e.maxQueuedBytes());
    spineMinCredit = std::min(spineMinCredit, e.minCreditsSeen());
  }
  // Leaf 0's input ports from the spines ran out of credit (less than one frame left).
  EXPECT_LT(spineMinCredit, static_cast<int64_t>(IbFraming::dataWireBytes(4096)));
  EXPECT_GT(spineQueue, static_cast<uint64_t>(s.sw.creditBuffer));
  // The receiver's downlink queue is bounded by what leaf 0 advertised to the two spines.
  const EgressPort& down = b.fabric.port(portToward(*b.topo, leaf0, 0));
  EXPECT_LE(down.maxQueuedBytes(), 2 * static_cast<uint64_t>(s.sw.creditBuffer));
  uint64_t leafUp = 0;
  for (const char* leaf : {"leaf-1", "leaf-2", "leaf-3"})
    for (const char* spine : {"spine-0", "spine-1"})
      leafUp = std::max(leafUp, b.fabric.port(portToward(*b.topo, b.topo->findNode(leaf), b.topo->findNode(spine))).maxQueuedBytes());
  std::cout << "[ info ] IB backpressure: spine->leaf0 max queue " << spineQueue << " B, leaf uplink max queue "
            << leafUp << " B, leaf0->host0 max queue " << down.maxQueuedBytes() << " B\n";
}

// ---------------------------------------------------------------------------------------------
// 7. PFC head-of-line blocking. One spine, fabric links at 800 Gb/s so that the fabric carries
// 7 incast senders + 1 victim sender (8 x 100 Gb/s) without contention; the only bottleneck is
// leaf 0's port to R (host 0). The victim V (host 1) shares the spine->leaf-0 link. With PFC,
// leaf 0 pauses that link because of R's backlog, and the victim is paused with it. Lossy with
// a big buffer, R's backlog sits in leaf 0's queue toward R and the victim passes.
namespace {

struct VictimRun {
  Time victimFct;
  Time victimIdeal;
  uint64_t pauses = 0;
  uint64_t drops = 0;
};

struct DelayedSend : EventHandler {
  PacketFabric* fabric = nullptr;
  TransferObserver* observer = nullptr;
  TransferRequest request;
  void onEvent(uint32_t) override { fabric->send(request, observer); }
};

// A 7-to-1 incast of 4 MiB flows into R on leaf 0 runs for about 2.3 ms; 1.5 ms in, a 1 MiB victim
// flow to V (also on leaf 0) starts. The victim shares only the spine -> leaf-0 link with the
// incast, which is not its bottleneck. ECN marks below PFC's XOFF (Kmin 10 KB, Kmax 80 KB against
// XOFF 100 KB), as deployment guides recommend, so DCQCN can act before PFC does.
VictimRun runVictim(bool pfc, bool dcqcn) {
  TopologySpec s = leafSpine(2, 1, 8);
  s.links.fabricSpeed = BitRate::gbps(800);
  if (pfc) enablePfc(s, 100'000, 80'000);
  if (dcqcn) {
    s.congestionControl.algorithm = "dcqcn";
    EXPECT_TRUE(applyDcqcnPreset("dcqcn-paper", s.congestionControl.dcqcn));
    s.sw.ecn.enabled = true;
    s.sw.ecn.kmin = 10'000;
    s.sw.ecn.kmax = 80'000;
    s.sw.ecn.pmax = 0.2;
    s.sw.ecn.markOnDequeue = false;
    s.sw.ecn.classMask = 0x7F;
  }
  Bench b(s);
  Done done;
  const uint32_t R = 0, V = 1;
  for (uint32_t src = 8; src < 15; ++src) {
    TransferRequest r;
    r.srcGpu = src;
    r.dstGpu = R;
    r.bytes = 4 * kMiB;
    r.tag = src;
    b.fabric.send(r, &done);
  }
  DelayedSend victim;
  victim.fabric = &b.fabric;
  victim.observer = &done;
  victim.request.srcGpu = 15;
  victim.request.dstGpu = V;
  victim.request.bytes = 1 * kMiB;
  victim.request.tag = 1000;
  b.sim.schedule(Time::us(1500), &victim, 0);
  b.sim.run();
  VictimRun out;
  EXPECT_EQ(done.at.size(), 8u);
  const FlowRecord& rec = b.fabric.flowRecords().back();
  EXPECT_EQ(rec.dstGpu, V);
  out.victimFct = rec.fct();
  out.victimIdeal = rec.ideal;
  const auto c = b.fabric.networkCounters();
  out.pauses = c.pfcPauseFrames;
  out.drops = c.packetsDropped;
  EXPECT_EQ(c.goodputBytes, 29 * kMiB);
  return out;
}

}  // namespace

TEST(FlowControl, PfcHeadOfLineBlockingHurtsAVictim) {
  const VictimRun withPfc = runVictim(true, false);
  const VictimRun lossy = runVictim(false, false);
  EXPECT_GT(withPfc.pauses, 0u);
  EXPECT_EQ(withPfc.drops, 0u);
  // Lossy: the incast's 24 MiB backlog overflows the dynamic threshold (one queue may hold at most
  // half of the 32 MiB buffer), so it drops and retransmits; the victim is not held back.
  EXPECT_GT(lossy.drops, 0u);
  // Expected with PFC: spine->leaf-0 is throttled to roughly R's drain rate (100 Gb/s), of which
  // the victim gets about 1/8, so ~7x slower; 2x leaves a wide margin.
  EXPECT_GT(ps(withPfc.victimFct), 2.0 * ps(withPfc.victimIdeal));
  // Lossy: the victim shares only uncongested links; 20% covers the ACK-path and per-packet
  // interleaving at the 800 Gb/s hops.
  EXPECT_LT(ps(lossy.victimFct), 1.2 * ps(lossy.victimIdeal));
  EXPECT_GT(ps(withPfc.victimFct), 2.0 * ps(lossy.victimFct));

  // DCQCN has slowed the incast senders by the time the victim starts, so PFC rarely fires and the
  // victim is slowed much less than under PFC alone (the "less so under DCQCN + PFC").
  const VictimRun withDcqcn = runVictim(true, true);
  std::cout << "[ info ] victim FCT (ideal " << withPfc.victimIdeal.micros() << " us): PFC " << withPfc.victimFct.micros()
            << " us (pauses " << withPfc.pauses << "), lossy " << lossy.victimFct.micros() << " us, PFC+DCQCN "
            << withDcqcn.victimFct.micros() << " us (pauses " << withDcqcn.pauses << ")\n";
  EXPECT_EQ(withDcqcn.drops, 0u);
  EXPECT_LT(withDcqcn.pauses, withPfc.pauses);
  EXPECT_LT(ps(withDcqcn.victimFct), 0.5 * ps(withPfc.victimFct));
}

// ---------------------------------------------------------------------------------------------
// 8. Determinism with PFC on (pause timers, refreshes, resumes): identical runs agree exactly.
TEST(FlowControl, PfcRunsAreDeterministic) {
  auto runOnce = [] {
    TopologySpec s = leafSpine(4, 2, 4);
    s.sw.buffer = 2 * kMiB;
    enablePfc(s, 60'000, 40'000);
    Bench b(s, 11);
    PatternWorkload job(b.sim, b.fabric, incast(0, 12, 256 * kKiB), b.topo->gpuCount());
    job.start();
    b.sim.run();
    std::vector<int64_t> f;
    for (const auto& r : b.fabric.flowRecords()) f.push_back(r.finish.picos());
    f.push_back(static_cast<int64_t>(b.sim.eventsProcessed()));
    f.push_back(static_cast<int64_t>(b.fabric.networkCounters().pfcPauseFrames));
    EXPECT_GT(b.fabric.networkCounters().pfcPauseFrames, 0u);
    return f;
  };
  EXPECT_EQ(runOnce(), runOnce());
}

// ---------------------------------------------------------------------------------------------
// 9. A 16-to-1 incast of 4 MiB flows (64 MiB, twice the 32 MiB buffer) without PFC: DCQCN (paper
// preset, ECN 100/400 KB: HPCC ns-3's 25G entry) cuts the drops by more than 10x compared with no congestion
// control, and both deliver every byte. The buffer must absorb DCQCN's first reaction time (about
// three 50 us CNP intervals at several times line rate, ~10 MB): with an 8 MiB buffer the gain is
// only ~4x.
TEST(FlowControl, DcqcnWithoutPfcDropsFarFewerThanNoCc) {
  auto drops = [](bool dcqcn) {
    TopologySpec s = leafSpine(4, 2, 8);
    s.sw.buffer = 32 * kMiB;
    if (dcqcn) {
      s.congestionControl.algorithm = "dcqcn";
      EXPECT_TRUE(applyDcqcnPreset("dcqcn-paper", s.congestionControl.dcqcn));
      s.sw.ecn = EcnSpec{true, 100'000, 400'000, 0.2, false, 0x7F};
    }
    Bench b(s);
    PatternWorkload job(b.sim, b.fabric, incast(0, 16, 4 * kMiB), b.topo->gpuCount());
    job.start();
    b.sim.run();
    EXPECT_TRUE(job.finished());
    const auto c = b.fabric.networkCounters();
    EXPECT_EQ(c.goodputBytes, 64 * kMiB);
    EXPECT_EQ(c.bytesSent, c.bytesDelivered + c.bytesDropped);
    return c.packetsDropped;
  };
  const uint64_t none = drops(false);
  const uint64_t withDcqcn = drops(true);
  std::cout << "[ info ] 16-to-1 incast drops: no CC " << none << ", DCQCN " << withDcqcn << "\n";
  EXPECT_GT(none, 1000u);
  EXPECT_LT(withDcqcn * 10, none);
}
