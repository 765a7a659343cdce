// Physics of the packet backend checked against closed forms and invariants.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/core/Rng.h"
#include "sim/core/Simulator.h"
#include "sim/packet/PacketFabric.h"
#include "sim/fabric/RoceFraming.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/PatternWorkload.h"
#include "tests/support/PacketBench.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {



using Bench = testsupport::PacketBench;
using Done = testsupport::DeliveryLog;

TopologySpec leafSpine(int leaves, int spines, int hostsPerLeaf) {
  return testsupport::leafSpineSpec(leaves, spines, hostsPerLeaf);
}

// Hand derivation for H equal-rate store-and-forward hops: packet i leaves the NIC at i*ser(full);
// a short last packet catches up with its predecessor at every later hop, so the last bit
// arrives at (n - 1 + H - 1) * ser(full) + ser(last) + H * latency + (H - 1) * switch latency.
Time expectedFct(Bytes bytes, Bytes mtu, int hops, BitRate rate, Time latency, Time swLatency) {
  const int64_t n = (bytes + mtu - 1) / mtu;
  const Bytes last = bytes - (n - 1) * mtu;
  const Time full = serializationTime(RoceFraming::dataWireBytes(static_cast<uint32_t>(mtu)), rate);
  const Time lastSer = serializationTime(RoceFraming::dataWireBytes(static_cast<uint32_t>(last)), rate);
  if (n == 1) return lastSer * hops + latency * hops + swLatency * (hops - 1);
  return full * (n - 1 + hops - 1) + lastSer + latency * hops + swLatency * (hops - 1);
}

}  // namespace

TEST(PacketPhysics, SingleFlowOnIdlePathIsExactToThePicosecond) {
  for (const Bytes bytes : {Bytes{1}, Bytes{4096}, Bytes{100'000}, Bytes{1 << 20}, Bytes{3'000'001}}) {
    for (const Time swLat : {0_ns, 300_ns}) {
      TopologySpec s = leafSpine(2, 2, 2);
      s.sw.latency = swLat;
      Bench b(s);
      Done done;
      TransferRequest r;
      r.srcGpu = 0;  // leaf 0
      r.dstGpu = 3;  // leaf 1: NIC, leaf, spine, leaf, NIC = 4 links
      r.bytes = bytes;
      b.fabric.send(r, &done);
      b.sim.run();
      ASSERT_EQ(done.at.count(0), 1u);
      EXPECT_EQ(done.at[0], expectedFct(bytes, 4096, 4, BitRate::gbps(100), 1_us, swLat))
          << "bytes " << bytes << " switch latency " << swLat.picos();
      EXPECT_EQ(b.fabric.flowRecords()[0].ideal, done.at[0]);
      // Same leaf: 2 links.
    }
  }
  Bench b(leafSpine(2, 2, 2));
  Done done;
  TransferRequest r;
  r.srcGpu = 0;
  r.dstGpu = 1;
  r.bytes = 50'000;
  b.fabric.send(r, &done);
  b.sim.run();
  EXPECT_EQ(done.at[0], expectedFct(50'000, 4096, 2, BitRate::gbps(100), 1_us, 0_ns));
}

TEST(PacketPhysics, LossyIncastConservesBytesAndDeliversEverything) {
  // 15-to-1 incast into a switch with a small buffer: drops, go-back-N, every byte delivered.
  TopologySpec s = leafSpine(2, 2, 8);
  s.sw.buffer = 200 * 1024;
  Bench b(s);
  WorkloadSpec w;
  w.name = "incast";
  w.pattern.pattern = PatternKind::Incast;
  w.pattern.incastReceiver = 0;
  w.pattern.messageSize = 512 * 1024;
  PatternWorkload job(b.sim, b.fabric, w, b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  const auto c = b.fabric.networkCounters();
  EXPECT_GT(c.packetsDropped, 0u);
  EXPECT_GT(c.retransmittedBytes, 0);
  EXPECT_EQ(c.bytesSent, c.bytesDelivered + c.bytesDropped);
  EXPECT_EQ(c.goodputBytes, 15 * 512 * 1024);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
  for (const auto& r : b.fabric.flowRecords()) EXPECT_GE(r.fct(), r.ideal);
}

TEST(PacketPhysics, NoFlowBeatsItsUnloadedTime) {
  TopologySpec s = leafSpine(4, 2, 4);  // 2:1 oversubscribed
  Bench b(s, 9);
  WorkloadSpec w;
  w.name = "perm";
  w.pattern.messageSize = 300'000;
  w.pattern.repetitions = 3;
  PatternWorkload job(b.sim, b.fabric, w, b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  ASSERT_EQ(b.fabric.flowRecords().size(), 16u * 3);
  for (const auto& r : b.fabric.flowRecords()) {
    ASSERT_TRUE(r.done());
    EXPECT_GE(r.fct(), r.ideal);
  }
  const auto c = b.fabric.networkCounters();
  EXPECT_EQ(c.bytesSent, c.bytesDelivered + c.bytesDropped);
}

TEST(PacketPhysics, EcmpPermutationSlowdownMatchesBallsIntoBins) {
  // Non-blocking leaf-spine, 16 leaves x 16 hosts, 16 spines. Hash collisions make the job as
  // slow as its most loaded link; a Monte-Carlo of random uplink choices (balls into bins)
  // gives the range of that maximum load.
  const int L = 16, S = 16, H = 16;
  TopologySpec s = leafSpine(L, S, H);
  const Bytes msg = 2'000'000;
  std::vector<double> observed;
  for (uint64_t seed : {1, 2, 3}) {
    Bench b(s, seed);
    WorkloadSpec w;
    w.name = "perm";
    w.pattern.messageSize = msg;
    PatternWorkload job(b.sim, b.fabric, w, b.topo->gpuCount());
    job.start();
    b.sim.run();
    ASSERT_TRUE(job.finished());
    Time ideal = Time::zero();
    for (const auto& r : b.fabric.flowRecords()) ideal = std::max(ideal, r.ideal);
    observed.push_back(static_cast<double>(job.finishTime().picos()) / static_cast<double>(ideal.picos()));
  }
  // Monte-Carlo: random permutation, uniform spine per cross-leaf flow; max over links of load.
  Rng rng(1234);
  std::vector<int> maxLoads;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint32_t> perm(L * H);
    std::iota(perm.begin(), perm.end(), 0u);
    for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
    std::vector<int> up(L * S, 0), down(L * S, 0);
    int maxLoad = 1;
    for (int src = 0; src < L * H; ++src) {
      const int sl = src / H, dl = static_cast<int>(perm[src]) / H;
      if (sl == dl) continue;
      const int sp = static_cast<int>(rng.below(S));
      maxLoad = std::max({maxLoad, ++up[sl * S + sp], ++down[dl * S + sp]});
    }
    maxLoads.push_back(maxLoad);
  }
  std::sort(maxLoads.begin(), maxLoads.end());
  const double lo = maxLoads[maxLoads.size() / 100];         // 1st percentile
  const double hi = maxLoads[maxLoads.size() * 99 / 100];    // 99th percentile
  for (double o : observed) {
    EXPECT_GT(o, 1.5) << "ECMP should be visibly slower than ideal";
    // The job drains its most loaded link at line rate; allow 15% for ACK overhead and the
    // ramp as other flows finish.
    EXPECT_GE(o, lo * 0.85);
    EXPECT_LE(o, hi * 1.15);
  }
}

TEST(PacketPhysics, SameSeedSameResults) {
  auto runOnce = [](uint64_t seed) {
    Bench b(leafSpine(4, 2, 4), seed);
    WorkloadSpec w;
    w.name = "perm";
    w.pattern.messageSize = 200'000;
    PatternWorkload job(b.sim, b.fabric, w, b.topo->gpuCount());
    job.start();
    b.sim.run();
    std::vector<int64_t> f;
    for (const auto& r : b.fabric.flowRecords()) f.push_back(r.finish.picos());
    f.push_back(static_cast<int64_t>(b.sim.eventsProcessed()));
    return f;
  };
  EXPECT_EQ(runOnce(5), runOnce(5));
  EXPECT_NE(runOnce(5), runOnce(6));
}
