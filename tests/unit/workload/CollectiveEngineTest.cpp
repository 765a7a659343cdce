// CollectiveEngine: algorithm choice, input checks, byte accounting per algorithm, channels and
// ring order, tree instances spread over the NICs and run at their rate, tree / hierarchical
// completion, concurrency; TreeShape's double binary tree.
#include <gtest/gtest.h>

#include "tests/support/PacketBench.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Error.h"
#include "sim/workload/CollectiveEngine.h"
#include "sim/workload/TreeShape.h"

using namespace fabricsim;
using namespace fabricsim::literals;
using fabricsim::testsupport::leafSpineSpec;
using fabricsim::testsupport::PacketBench;

namespace {

/// Records completions (time and count per id).
struct DoneLog : CollectiveListener {
  std::map<uint64_t, Time> at;
  std::map<uint64_t, int> calls;
  void onCollectiveDone(uint64_t id, Time when) override {
    at[id] = when;
    ++calls[id];
  }
};

/// Passes transfers to another fabric and keeps each request (to see qp values).
class TapFabric final : public Fabric {
 public:
  explicit TapFabric(Fabric& inner) : inner_(inner) {}
  void send(const TransferRequest& r, TransferObserver* o) override {
    requests.push_back(r);
    inner_.send(r, o);
  }
  std::string backendName() const override { return inner_.backendName(); }
  Time pathLatency(uint32_t s, uint32_t d) const override { return inner_.pathLatency(s, d); }
  double pathRate(uint32_t s, uint32_t d) const override { return inner_.pathRate(s, d); }
  const TransferTable& transfers() const override { return inner_.transfers(); }
  void keepFlowRecords(bool keep) override { inner_.keepFlowRecords(keep); }
  NetworkCounters networkCounters() const override { return inner_.networkCounters(); }
  void setLinkUp(uint32_t l, bool up) override { inner_.setLinkUp(l, up); }
  std::vector<TransferRequest> requests;

 private:
  Fabric& inner_;
};

/// Leaf-spine with `hosts` hosts of `gpus` GPUs each (one NIC per GPU), all under one leaf.
TopologySpec hostsSpec(int hosts, int gpus) {
  TopologySpec s = leafSpineSpec(1, 1, hosts);
  s.hosts.gpusPerHost = gpus;
  s.hosts.nicsPerHost = gpus;
  return s;
}

std::vector<uint32_t> range(uint32_t first, uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = first + i;
  return v;
}

CollectiveCall call(CollectiveOp op, CollectiveAlgorithm algo, std::vector<uint32_t> gpus, Bytes bytes) {
  CollectiveCall c;
  c.op = op;
  c.algorithm = algo;
  c.gpus = std::move(gpus);
  c.bytes = bytes;
  return c;
}

Bytes totalBytes(const Fabric& f) {
  Bytes sum = 0;
  for (const FlowRecord& r : f.flowRecords()) sum += r.bytes;
  return sum;
}

/// Runs one call on a fresh bench and returns the fabric's total bytes (and the completion time).
struct RunResult {
  Bytes bytes = 0;
  Time time;
  size_t transfers = 0;
  std::vector<Bytes> sentByGpu;
};

RunResult runOne(int hosts, int gpus, const CollectiveCall& c, CollectiveTuning tuning = {}) {
  PacketBench b(hostsSpec(hosts, gpus));
  CollectiveEngine engine(b.sim, b.fabric, tuning, gpus);
  DoneLog log;
  engine.start(c, &log, 7);
  b.sim.run();
  EXPECT_EQ(log.calls[7], 1);
  EXPECT_EQ(engine.active(), 0u);
  RunResult r;
  r.bytes = totalBytes(b.fabric);
  r.time = log.at[7];
  r.transfers = b.fabric.flowRecords().size();
  r.sentByGpu.assign(static_cast<size_t>(hosts * gpus), 0);
  for (const FlowRecord& f : b.fabric.flowRecords()) {
    EXPECT_TRUE(f.done());
    EXPECT_GT(f.bytes, 0);
    EXPECT_NE(f.srcGpu, f.dstGpu);
    r.sentByGpu[f.srcGpu] += f.bytes;
  }
  EXPECT_EQ(engine.bytesIssued(), r.bytes);
  EXPECT_EQ(engine.transfersIssued(), r.transfers);
  return r;
}

constexpr Bytes kMiB = 1024 * 1024;

}  // namespace

TEST(CollectiveEngineTest, BusBandwidthFactorFollowsNcclTests) {
  EXPECT_DOUBLE_EQ(CollectiveEngine::busBandwidthFactor(CollectiveOp::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(CollectiveEngine::busBandwidthFactor(CollectiveOp::AllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(CollectiveEngine::busBandwidthFactor(CollectiveOp::ReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(CollectiveEngine::busBandwidthFactor(CollectiveOp::AllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(CollectiveEngine::busBandwidthFactor(CollectiveOp::Broadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(CollectiveEngine::busBandwidthFactor(CollectiveOp::SendRecv, 2), 1.0);
}

TEST(CollectiveEngineTest, ResolvePicksHierarchicalOnlyWhenAskedAcrossMultiGpuHosts) {
  PacketBench b(hostsSpec(4, 4));
  CollectiveEngine e(b.sim, b.fabric, CollectiveTuning{}, 4);
  using A = CollectiveAlgorithm;
  using O = CollectiveOp;
  EXPECT_NE(e.resolve(call(O::AllReduce, A::Auto, range(0, 8), kMiB)), A::Hierarchical);  // NCCL's choice
  EXPECT_EQ(e.resolve(call(O::AllReduce, A::Hierarchical, range(0, 8), kMiB)), A::Hierarchical);
  EXPECT_EQ(e.resolve(call(O::AllReduce, A::Auto, range(0, 4), kMiB)), A::Ring);      // one host
  EXPECT_EQ(e.resolve(call(O::AllReduce, A::Auto, {0, 4, 8, 12}, kMiB)), A::Ring);    // 1 GPU/host
  EXPECT_EQ(e.resolve(call(O::AllReduce, A::Auto, {0, 1, 4, 5, 6}, kMiB)), A::Ring);  // uneven
  EXPECT_EQ(e.resolve(call(O::AllReduce, A::Hierarchical, {0, 1, 4, 5, 6}, kMiB)), A::Ring);
  EXPECT_EQ(e.resolve(call(O::AllReduce, A::Hierarchical, range(0, 4), kMiB)), A::Ring);
  EXPECT_EQ(e.resolve(call(O::AllReduce, A::Tree, range(0, 8), kMiB)), A::Tree);
  EXPECT_EQ(e.resolve(call(O::AllGather, A::Auto, range(0, 8), kMiB)), A::Ring);
  EXPECT_EQ(e.resolve(call(O::AllToAll, A::Auto, range(0, 8), kMiB)), A::Direct);
  EXPECT_EQ(e.resolve(call(O::SendRecv, A::Ring, range(0, 8), kMiB)), A::Direct);

  CollectiveTuning treeDefault;
  treeDefault.algorithm = A::Tree;
  CollectiveEngine t(b.sim, b.fabric, treeDefault, 4);
  EXPECT_EQ(t.resolve(call(O::AllReduce, A::Auto, range(0, 8), kMiB)), A::Tree);
  EXPECT_EQ(t.resolve(call(O::AllGather, A::Auto, range(0, 8), kMiB)), A::Ring);  // default falls back
}

TEST(CollectiveEngineTest, InvalidCallsThrowInputError) {
  PacketBench b(hostsSpec(2, 2));
  CollectiveEngine e(b.sim, b.fabric, CollectiveTuning{}, 2);
  DoneLog log;
  using A = CollectiveAlgorithm;
  using O = CollectiveOp;
  auto keyOf = [&](const CollectiveCall& c) -> std::string {
    try {
      e.start(c, &log, 1);
    } catch (const InputError& err) {
      return err.diagnostics().empty() ? "?" : err.diagnostics()[0].key + ": " + err.diagnostics()[0].message;
    }
    return "";
  };
  const std::string tree = keyOf(call(O::AllGather, A::Tree, range(0, 4), kMiB));
  EXPECT_NE(tree.find("collectives.algorithm"), std::string::npos) << tree;
  EXPECT_NE(tree.find("all_gather"), std::string::npos) << tree;
  EXPECT_NE(keyOf(call(O::Broadcast, A::Hierarchical, range(0, 4), kMiB)).find("collectives.algorithm"),
            std::string::npos);
  EXPECT_NE(keyOf(call(O::AllReduce, A::Direct, range(0, 4), kMiB)).find("collectives.algorithm"),
            std::string::npos);
  EXPECT_NE(keyOf(call(O::AllToAll, A::Tree, range(0, 4), kMiB)).find("alltoall"), std::string::npos);
  EXPECT_NE(keyOf(call(O::AllReduce, A::Ring, {}, kMiB)), "");
  EXPECT_NE(keyOf(call(O::AllReduce, A::Ring, {0, 1, 1}, kMiB)), "");
  CollectiveCall bc = call(O::Broadcast, A::Ring, range(0, 4), kMiB);
  bc.root = 4;
  EXPECT_NE(keyOf(bc), "");
  EXPECT_TRUE(log.calls.empty());
  EXPECT_EQ(e.active(), 0u);
}

TEST(CollectiveEngineTest, ZeroBytesAndOneRankCompleteInsideStart) {
  PacketBench b(hostsSpec(2, 2));
  CollectiveEngine e(b.sim, b.fabric, CollectiveTuning{}, 2);
  DoneLog log;
  e.start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Auto, range(0, 4), 0), &log, 1);
  e.start(call(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, {3}, kMiB), &log, 2);
  e.start(call(CollectiveOp::AllToAll, CollectiveAlgorithm::Auto, {2}, kMiB), &log, 3);
  e.startPointToPoint(1, 1, kMiB, &log, 4);
  e.startPointToPoint(0, 3, 0, &log, 5);
  for (uint64_t id = 1; id <= 5; ++id) {
    EXPECT_EQ(log.calls[id], 1) << id;
    EXPECT_EQ(log.at[id], Time::zero()) << id;
  }
  EXPECT_EQ(e.active(), 0u);
  EXPECT_EQ(e.transfersIssued(), 0u);
  EXPECT_TRUE(b.fabric.flowRecords().empty());
}

TEST(CollectiveEngineTest, ByteAccountingMatchesClosedFormPerAlgorithm) {
  using A = CollectiveAlgorithm;
  using O = CollectiveOp;
  const Bytes s = 3 * kMiB + 12345;  // not a multiple of anything: remainders must not be lost
  // Flat ring over 8 GPUs, one per host: each rank sends 2(N-1)/N S.
  {
    const RunResult r = runOne(8, 1, call(O::AllReduce, A::Ring, range(0, 8), s));
    EXPECT_EQ(r.bytes, 2 * 7 * s);
    for (Bytes sent : r.sentByGpu) EXPECT_NEAR(static_cast<double>(sent), 2.0 * 7 / 8 * s, 2 * 7 * 4);
  }
  {
    const RunResult r = runOne(8, 1, call(O::AllGather, A::Ring, range(0, 8), s));
    EXPECT_EQ(r.bytes, 7 * s);
    for (Bytes sent : r.sentByGpu) EXPECT_NEAR(static_cast<double>(sent), 7.0 / 8 * s, 7 * 4);
  }
  EXPECT_EQ(runOne(8, 1, call(O::ReduceScatter, A::Ring, range(0, 8), s)).bytes, 7 * s);
  {
    const RunResult r = runOne(8, 1, call(O::AllToAll, A::Auto, range(0, 8), s));
    EXPECT_EQ(r.bytes, 7 * s);
    EXPECT_EQ(r.transfers, 8u * 7);
    for (Bytes sent : r.sentByGpu) EXPECT_NEAR(static_cast<double>(sent), 7.0 / 8 * s, 1);
  }
  {
    const RunResult r = runOne(8, 1, call(O::SendRecv, A::Auto, range(0, 8), s));
    EXPECT_EQ(r.bytes, 8 * s);
    for (Bytes sent : r.sentByGpu) EXPECT_EQ(sent, s);
  }
  {
    CollectiveCall bc = call(O::Broadcast, A::Ring, range(0, 8), s);
    bc.root = 5;
    const RunResult r = runOne(8, 1, bc);
    EXPECT_EQ(r.bytes, 7 * s);
    EXPECT_EQ(r.sentByGpu[4], 0);  // the chain from the root (5) ends at 4
  }
  // Hierarchical, H hosts of G GPUs: intra-host reduce-scatter and all-gather move (G-1) S per
  // host each, the rails' all-reduces 2 (H-1) S in all.
  {
    const Bytes h = 2, g = 4;
    const RunResult r = runOne(2, 4, call(O::AllReduce, A::Hierarchical, range(0, 8), s));
    EXPECT_EQ(r.bytes, 2 * h * (g - 1) * s + 2 * (h - 1) * s);
  }
  // Tree: every rank but each tree's root sends its share up once and receives it down once.
  EXPECT_EQ(runOne(2, 4, call(O::AllReduce, A::Tree, range(0, 8), s)).bytes, 2 * 7 * s);
  EXPECT_EQ(runOne(5, 1, call(O::AllReduce, A::Tree, range(0, 5), s)).bytes, 2 * 4 * s);
  // A protocol efficiency of 1/2 doubles every transfer.
  {
    CollectiveTuning half;
    half.protocolEfficiency = 0.5;
    EXPECT_EQ(runOne(4, 1, call(O::AllReduce, A::Ring, range(0, 4), s), half).bytes, 2 * 2 * 3 * s);
    EXPECT_EQ(runOne(2, 4, call(O::AllReduce, A::Hierarchical, range(0, 8), s), half).bytes,
              2 * (2 * 2 * 3 * s + 2 * s));
  }
  // Tiny sizes (fewer bytes than chunks) still complete and move exactly the closed form.
  EXPECT_EQ(runOne(8, 1, call(O::AllReduce, A::Ring, range(0, 8), 5)).bytes, 2 * 7 * 5);
  EXPECT_EQ(runOne(2, 4, call(O::AllReduce, A::Hierarchical, range(0, 8), 3)).bytes, 2 * 2 * 3 * 3 + 2 * 3);
  EXPECT_EQ(runOne(2, 4, call(O::AllReduce, A::Tree, range(0, 8), 3)).bytes, 2 * 7 * 3);
}

TEST(CollectiveEngineTest, ChannelsUseDistinctQueuePairsAndNvlinkInsideHosts) {
  PacketBench b(hostsSpec(2, 4));
  TapFabric tap(b.fabric);
  CollectiveTuning tuning;
  tuning.channels = 4;
  CollectiveEngine e(b.sim, tap, tuning, 4);
  DoneLog log;
  // Ranks given interleaved across hosts: the ring must still keep each host's GPUs together.
  e.start(call(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, {0, 4, 1, 5, 2, 6, 3, 7}, 8 * kMiB), &log,
          1);
  b.sim.run();
  ASSERT_EQ(log.calls[1], 1);
  const auto& recs = b.fabric.flowRecords();
  ASSERT_EQ(recs.size(), tap.requests.size());
  ASSERT_EQ(recs.size(), 8u * 7 * 4);  // N-1 steps x N ranks x 4 channels
  std::map<std::pair<uint32_t, uint32_t>, std::set<uint16_t>> qps;
  size_t interHost = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    const bool intra = recs[i].srcGpu / 4 == recs[i].dstGpu / 4;
    EXPECT_EQ(recs[i].intraHost, intra);
    if (!intra) ++interHost;
    qps[{recs[i].srcGpu, recs[i].dstGpu}].insert(tap.requests[i].qp);
  }
  // Two inter-host hops per ring, per channel, per step.
  EXPECT_EQ(interHost, 2u * 4 * 7);
  // Each channel's ring is rotated inside the hosts (channel c enters a host at local GPU c and
  // leaves it, through PXN, on the same rail), so the inter-host hops of channel c go from local
  // GPU c to local GPU c: the 4 channels use all 8 NICs, one channel each, and stay on their rail.
  // Inside a host every rank has one NVLink successor per channel.
  std::map<uint32_t, std::set<uint16_t>> interQps;
  std::map<std::pair<uint32_t, uint16_t>, std::set<uint32_t>> successors;
  for (const auto& [pair, set] : qps) {
    if (pair.first / 4 != pair.second / 4) {
      EXPECT_EQ(pair.first % 4, pair.second % 4) << pair.first << " -> " << pair.second;
      interQps[pair.first].insert(set.begin(), set.end());
      continue;
    }
    for (uint16_t q : set) successors[{pair.first, q}].insert(pair.second);
  }
  EXPECT_EQ(interQps.size(), 8u);
  for (const auto& [gpu, set] : interQps)
    EXPECT_EQ(set, (std::set<uint16_t>{static_cast<uint16_t>(gpu % 4)})) << gpu;
  EXPECT_EQ(successors.size(), 8u * 3);  // per host and channel, 3 of the 4 GPUs send over NVLink
  for (const auto& [key, set] : successors) EXPECT_EQ(set.size(), 1u);
}

TEST(CollectiveEngineTest, IntraHostCollectiveUsesNvlinkChannels) {
  PacketBench b(hostsSpec(2, 4));
  TapFabric tap(b.fabric);
  CollectiveTuning tuning;
  tuning.channels = 4;
  tuning.nvlinkChannels = 2;
  CollectiveEngine e(b.sim, tap, tuning, 4);
  DoneLog log;
  e.start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Auto, range(4, 4), kMiB), &log, 1);
  b.sim.run();
  ASSERT_EQ(log.calls[1], 1);
  ASSERT_EQ(tap.requests.size(), 4u * 6 * 2);
  std::set<uint16_t> used;
  for (const TransferRequest& r : tap.requests) used.insert(r.qp);
  EXPECT_EQ(used, (std::set<uint16_t>{0, 1}));
  for (const FlowRecord& r : b.fabric.flowRecords()) EXPECT_TRUE(r.intraHost);
}

TEST(CollectiveEngineTest, HierarchicalBeatsFlatRingAndTreeLiesBetweenRingAndItsBound) {
  // 4 hosts x 4 GPUs, NVLink 450 GB/s per GPU against a 100 Gb/s NIC per GPU, PFC on (a
  // lossless RoCE fabric, so the trees' 2:1 fan-in pauses instead of dropping). The flat ring's
  // 4 channels leave each host through its 4 NICs (one channel each: 2(N-1)/N S/4 per NIC);
  // hierarchical pushes 2(H-1)/H S/G through each NIC, plus its NVLink phases, in sequence.
  // (Before rings were spread over the NICs every channel crossed hosts through one NIC pair and
  // the flat ring took more than twice hierarchical's time.)
  const Bytes s = 16 * kMiB;
  const double h = 4, g = 4;
  const double b = 100e9 / 8 * 4096.0 / (4096 + 82 + 86);  // NIC goodput with one ACK per packet
  const double bnv = 450e9;
  CollectiveTuning tuning;
  auto timeOf = [&](CollectiveAlgorithm a) {
    TopologySpec spec = hostsSpec(4, 4);
    spec.sw.pfc.enabled = true;
    PacketBench bench(spec);
    CollectiveEngine e(bench.sim, bench.fabric, tuning, 4);
    DoneLog log;
    e.start(call(CollectiveOp::AllReduce, a, range(0, 16), s), &log, 1);
    bench.sim.run();
    EXPECT_EQ(log.calls[1], 1);
    EXPECT_EQ(bench.fabric.counters().packetsDropped, 0u);
    return log.at[1].seconds();
  };
  const double tRing = timeOf(CollectiveAlgorithm::Ring);
  const double tHier = timeOf(CollectiveAlgorithm::Hierarchical);
  const double tTree = timeOf(CollectiveAlgorithm::Tree);
  EXPECT_LT(tHier, tRing) << tHier * 1e6 << " us vs ring " << tRing * 1e6;
  const double ringBandwidth = 2 * (h * g - 1) / (h * g) * s / 4 / b;
  EXPECT_GT(tRing, ringBandwidth);
  EXPECT_LT(tRing, 1.3 * ringBandwidth + 200e-6) << tRing * 1e6 << " us";
  const double hierBandwidth = 2 * (h - 1) / h * s / g / b + 2 * (g - 1) / g * s / bnv;
  EXPECT_GT(tHier, hierBandwidth);
  EXPECT_LT(tHier, 1.2 * hierBandwidth + 100e-6) << tHier * 1e6 << " us";
  // The double binary tree's 2C = 8 instances of S/8 use local GPU q mod 4: each NIC carries
  // one instance of each tree. A host with two children in one tree (sending S/8 up and 2 S/8
  // down, receiving as much) is a leaf in the other (S/8 each way): at most S/2 per NIC and
  // direction, against the ring's 2(N-1)/N S/4, so the tree is slower than the ring at this
  // size. Upper bound: S/(2 b) plus the pipeline's fill and drain, one 1 MiB chunk at b per tree
  // level up and down (two levels over four hosts: four chunks), plus 100 us of step latencies.
  EXPECT_GT(tTree, tRing) << tTree * 1e6 << " us vs ring " << tRing * 1e6;
  const double treeBandwidth = s / 2.0 / b;
  EXPECT_GT(tTree, treeBandwidth) << tTree * 1e6 << " us";
  EXPECT_LT(tTree, treeBandwidth + 4 * static_cast<double>(tuning.chunkSize) / b + 100e-6)
      << tTree * 1e6 << " us";
}

TEST(CollectiveEngineTest, TreeAndHierarchicalCompleteOnManyShapes) {
  for (int hosts : {2, 3, 5, 6}) {
    for (int gpus : {1, 2, 3}) {
      const uint32_t n = static_cast<uint32_t>(hosts * gpus);
      const Bytes s = 2 * kMiB + 7;
      CollectiveTuning small;
      small.chunkSize = 256 * 1024;
      const RunResult t = runOne(
          hosts, gpus, call(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, range(0, n), s), small);
      EXPECT_EQ(t.bytes, 2 * static_cast<Bytes>(n - 1) * s) << hosts << "x" << gpus;
      if (gpus > 1) {
        const RunResult h = runOne(
            hosts, gpus, call(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, range(0, n), s));
        EXPECT_EQ(h.bytes, 2 * hosts * (gpus - 1) * s + 2 * (hosts - 1) * s) << hosts << "x" << gpus;
      }
    }
  }
}

TEST(CollectiveEngineTest, TreeInstancesLeaveEachHostThroughEveryNic) {
  // H = 4 hosts of G = 4 GPUs, one NIC each. Tree all-reduce of S on C channels: 2C instances of
  // S/(2C), instance q = t C + c (tree t, channel c) crossing hosts only between the hosts' local
  // GPUs c mod G (both trees of a channel on one NIC, as NCCL's channels c and C + c). In each
  // instance every host but the root sends its share to its parent and receives it back, so the
  // GPUs of local index i together send 2 (H - 1) times the shares of the instances q = i mod G
  // over the network, and the rest of the 2 (N - 1) S moves over NVLink: 2 H (G - 1) S.
  // (Before the instances were spread, every inter-host byte left through local GPU 0's NIC.)
  const Bytes s = 3 * kMiB + 12345;
  const uint32_t hosts = 4, g = 4;
  for (int channels : {2, 4}) {
    CollectiveTuning tuning;
    tuning.channels = channels;
    PacketBench b(hostsSpec(hosts, g));
    CollectiveEngine engine(b.sim, b.fabric, tuning, g);
    DoneLog log;
    engine.start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, range(0, hosts * g), s), &log, 1);
    b.sim.run();
    ASSERT_EQ(log.calls[1], 1);
    std::vector<Bytes> networkByLocal(g, 0);
    Bytes nvlink = 0;
    for (const FlowRecord& f : b.fabric.flowRecords()) {
      if (f.intraHost) {
        nvlink += f.bytes;
        continue;
      }
      EXPECT_EQ(f.srcGpu % g, f.dstGpu % g) << "an inter-host edge off its rail";
      networkByLocal[f.srcGpu % g] += f.bytes;
    }
    const uint32_t instances = 2 * static_cast<uint32_t>(channels);
    for (uint32_t i = 0; i < g; ++i) {
      Bytes expected = 0;
      for (uint32_t q = 0; q < instances; ++q)
        if (q % static_cast<uint32_t>(channels) % g == i)
          expected += 2 * (hosts - 1) * (s / instances + (q < s % instances));
      EXPECT_EQ(networkByLocal[i], expected) << "local GPU " << i << ", " << channels << " channels";
    }
    EXPECT_EQ(nvlink, 2 * static_cast<Bytes>(hosts) * (g - 1) * s);
  }
}

TEST(CollectiveEngineTest, TreeAllReduceAcrossTwoHostsRunsAtItsNicsRate) {
  // 2 hosts of 4 GPUs, 4 channels: 8 instances of S/8, two per NIC (one in each tree). With two
  // hosts each tree is one edge: the child host's head sends its S/8 up, the root's head sends
  // the reduced S/8 down. Each NIC so sends S/8 in one instance and S/8 in the other, and
  // receives as much: S/4 each way at the NIC goodput b. NVLink (450 GB/s) carries at most 2 S
  // per GPU, 1/10 of that time. Bounds: at least S / (4 b); at most 1.1 x that plus the
  // pipeline's fill and drain, two 1 MiB chunks at b through the chain (G - 1 NVLink hops, one
  // NIC hop, both ways) and 100 us of step latencies (5 us per step, 20 steps).
  const Bytes s = 64 * kMiB;
  const double b = 100e9 / 8 * 4096.0 / (4096 + 82 + 86);  // NIC goodput with one ACK per packet
  CollectiveTuning tuning;
  PacketBench bench(hostsSpec(2, 4));
  CollectiveEngine e(bench.sim, bench.fabric, tuning, 4);
  DoneLog log;
  e.start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, range(0, 8), s), &log, 1);
  bench.sim.run();
  ASSERT_EQ(log.calls[1], 1);
  const double t = log.at[1].seconds();
  const double nic = static_cast<double>(s) / 4 / b;
  const double fill = 2 * static_cast<double>(tuning.chunkSize) / b + 100e-6;
  EXPECT_GT(t, nic) << t * 1e6 << " us";
  EXPECT_LT(t, 1.1 * nic + fill) << t * 1e6 << " us against " << nic * 1e6 << " us at the NICs' rate";
}

TEST(CollectiveEngineTest, ConcurrentCollectivesOnDisjointGpusBothComplete) {
  PacketBench b(hostsSpec(4, 2));
  CollectiveEngine e(b.sim, b.fabric, CollectiveTuning{}, 2);
  DoneLog log;
  e.start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, range(0, 4), 4 * kMiB), &log, 10);
  e.start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, range(4, 4), 4 * kMiB), &log, 11);
  e.startPointToPoint(0, 5, kMiB, &log, 12);
  EXPECT_EQ(e.active(), 3u);
  b.sim.run();
  EXPECT_EQ(log.calls[10], 1);
  EXPECT_EQ(log.calls[11], 1);
  EXPECT_EQ(log.calls[12], 1);
  EXPECT_EQ(e.active(), 0u);
  // Slots are reused: a second round completes too.
  e.start(call(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, range(0, 8), kMiB), &log, 13);
  b.sim.run();
  EXPECT_EQ(log.calls[13], 1);
  EXPECT_EQ(e.active(), 0u);
}

namespace {
/// Starts the next collective from inside the completion of the previous one.
struct Chainer : CollectiveListener {
  CollectiveEngine* engine = nullptr;
  int left = 3;
  std::vector<Time> done;
  void onCollectiveDone(uint64_t, Time when) override {
    done.push_back(when);
    if (--left > 0)
      engine->start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, range(0, 4), kMiB), this,
                    static_cast<uint64_t>(left));
  }
};
}  // namespace

TEST(CollectiveEngineTest, StartingFromACompletionCallbackIsSafe) {
  PacketBench b(hostsSpec(4, 1));
  CollectiveEngine e(b.sim, b.fabric, CollectiveTuning{}, 1);
  Chainer c;
  c.engine = &e;
  e.start(call(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, range(0, 4), kMiB), &c, 3);
  b.sim.run();
  ASSERT_EQ(c.done.size(), 3u);
  EXPECT_LT(c.done[0], c.done[1]);
  EXPECT_LT(c.done[1], c.done[2]);
  EXPECT_EQ(e.active(), 0u);
}

TEST(CollectiveEngineTest, PointToPointSplitsOverChannels) {
  PacketBench b(hostsSpec(2, 1));
  TapFabric tap(b.fabric);
  CollectiveTuning tuning;
  tuning.channels = 3;
  CollectiveEngine e(b.sim, tap, tuning, 1);
  DoneLog log;
  e.startPointToPoint(0, 1, 1000, &log, 1);
  b.sim.run();
  ASSERT_EQ(log.calls[1], 1);
  ASSERT_EQ(tap.requests.size(), 3u);
  Bytes sum = 0;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(tap.requests[i].qp, i);
    sum += tap.requests[i].bytes;
  }
  EXPECT_EQ(sum, 1000);
  // Completion: the network step latency plus the transfer itself.
  EXPECT_GT(log.at[1], tuning.stepLatencyNetwork);
}

TEST(TreeShapeTest, DoubleBinaryTreeIsTwoValidTreesWithComplementaryLeaves) {
  for (int64_t n = 1; n <= 40; ++n) {
    for (int t = 0; t < 2; ++t) {
      int roots = 0;
      std::vector<int> children(static_cast<size_t>(n), 0);
      for (int64_t v = 0; v < n; ++v) {
        const int64_t p = TreeShape::parent(n, v, t);
        if (p == TreeShape::kNone) {
          ++roots;
          continue;
        }
        ASSERT_GE(p, 0);
        ASSERT_LT(p, n);
        ++children[static_cast<size_t>(p)];
        // Following parents reaches the root without a cycle.
        int64_t x = v, hops = 0;
        while (x != TreeShape::kNone && hops <= n) {
          x = TreeShape::parent(n, x, t);
          ++hops;
        }
        EXPECT_LE(hops, n) << "cycle n=" << n << " tree " << t;
      }
      EXPECT_EQ(roots, 1) << n;
      for (int c : children) EXPECT_LE(c, 2) << n;
    }
    if (n >= 4 && n % 2 == 0) {
      // Even n (mirror): no node is interior in both trees.
      std::vector<int> interior(static_cast<size_t>(n), 0);
      for (int t = 0; t < 2; ++t)
        for (int64_t v = 0; v < n; ++v) {
          const int64_t p = TreeShape::parent(n, v, t);
          if (p != TreeShape::kNone) interior[static_cast<size_t>(p)] |= 1 << t;
        }
      for (int64_t v = 0; v < n; ++v)
        EXPECT_NE(interior[static_cast<size_t>(v)], 3) << "n=" << n << " node " << v;
    }
  }
}
