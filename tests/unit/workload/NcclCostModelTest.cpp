// NcclCostModel against NCCL 2.30.7's tuning model worked by hand for one communicator: two
// H100 nodes of 8 GPUs (16 ranks, Intel CPUs), ring and tree graphs of 16 channels at 25 GB/s
// each (eight 400 Gb/s NICs of 50 GB/s shared by two channels each). Each expected figure below
// is computed in the comment from the constants in
// shared/calibration/nccl_internal_cost_model_constants_v2.30.7.yaml and the formulas of
// src/graph/tuning.cc and src/enqueue.cc; the tolerance (0.01 us, 0.001 GB/s) is the rounding of
// those hand computations to two or three decimals.
#include <gtest/gtest.h>

#include "sim/workload/collectives/NcclCostModel.h"

using namespace fabricsim;

namespace {

NcclCommShape twoH100Nodes() {
  NcclCommShape s;
  s.nRanks = 16;
  s.nNodes = 2;
  s.nChannels = 16;
  s.maxLocalRanks = 8;
  for (NcclAlgo a : {NcclAlgo::Ring, NcclAlgo::Tree}) {
    NcclGraph& g = s.graphs[static_cast<int>(a)];
    g.nChannels = 16;
    g.bwIntra = g.bwInter = 25.0;
  }
  return s;
}

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;

}  // namespace

TEST(NcclCostModel, RingSimpleAllReduceAcrossTwoNodes) {
  const NcclCostModel m(twoH100Nodes());
  // Bandwidth: 16 channels x 25 GB/s = 400 GB/s bus bandwidth, x nRanks / nsteps = 16/30:
  // 213.333 GB/s.
  EXPECT_NEAR(m.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::Ring, NcclProto::Simple), 400.0 * 16 / 30,
              0.001);
  // Latency: base 8.4 + (30 - 2) steps x max(NVLink 3.4, net overhead 1.0 x 3) + 2 inter-node
  // steps x 14.0 = 8.4 + 95.2 + 28 = 131.6 us.
  EXPECT_NEAR(m.latencyUs(NcclFunc::AllReduce, NcclAlgo::Ring, NcclProto::Simple), 131.6, 0.01);
  // 1 GiB: the ring's plateau (latency x 1.4 = 184.24) + 2^30 B / (1000 x 213.333) = 5033.16:
  // 5217.40 us.
  EXPECT_NEAR(*m.timeUs(NcclFunc::AllReduce, NcclAlgo::Ring, NcclProto::Simple, 1024 * kMiB), 5217.40, 0.01);
}

TEST(NcclCostModel, TreeAllReduceAcrossTwoNodes) {
  const NcclCostModel m(twoH100Nodes());
  // Simple: min(400 x 0.92, 16 x 41.4) = 368, x 1/2 = 184 GB/s; latency 8.4 + 2 ((8 - 1) x 4.0 +
  // log2(2) x 14) = 92.4 us.
  EXPECT_NEAR(m.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::Tree, NcclProto::Simple), 184.0, 0.001);
  EXPECT_NEAR(m.latencyUs(NcclFunc::AllReduce, NcclAlgo::Tree, NcclProto::Simple), 92.4, 0.01);
  // 1 GiB is past the correction table (log2(2^30 / 64) = 24): 92.4 + 2^30 / 184000 = 5927.95 us.
  EXPECT_NEAR(*m.timeUs(NcclFunc::AllReduce, NcclAlgo::Tree, NcclProto::Simple, 1024 * kMiB), 5927.95, 0.01);
  // LL128: min(368 x 120/128, 16 x 36.7) = 345, x 1/2 = 172.5 GB/s; latency 14.0 + 2 (7 x 1.25 +
  // 8.5) = 48.5 us. At 4 MiB the correction for 2^16 x 64 B is 0.8: 48.5 + 4194304 / 138000 =
  // 78.89 us.
  EXPECT_NEAR(m.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::Tree, NcclProto::LL128), 172.5, 0.001);
  EXPECT_NEAR(*m.timeUs(NcclFunc::AllReduce, NcclAlgo::Tree, NcclProto::LL128, 4 * kMiB), 78.89, 0.01);
}

TEST(NcclCostModel, ChoosesAsNcclByTimeThenTunesChannels) {
  const NcclCostModel m(twoH100Nodes());
  // 64 KiB: tree LL, 6.8 + 2 (7 x 0.6 + 5.0) = 25.2 us + 65536 B at min(368 / 3.8, 39.0) / 2 x 0.6
  // = 11.7 GB/s: 30.80 us (ring LL 43.15, tree LL128 49.13, ring LL128 and Simple more). Channels:
  // 65536 >= 16 x 512 threads x 8 B: all 16; tree kernels use 640 threads.
  auto c = m.choose(NcclFunc::AllReduce, 64 * kKiB);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->algo, NcclAlgo::Tree);
  EXPECT_EQ(c->proto, NcclProto::LL);
  EXPECT_NEAR(c->timeUs, 30.80, 0.01);
  EXPECT_EQ(c->channels, 16);
  EXPECT_EQ(c->threads, 640);
  // 4 MiB: tree LL128 (78.89) before ring LL128 (75.2 + 4194304 / 196266.7 = 96.57).
  c = m.choose(NcclFunc::AllReduce, 4 * kMiB);
  EXPECT_EQ(c->algo, NcclAlgo::Tree);
  EXPECT_EQ(c->proto, NcclProto::LL128);
  // 1 GiB: ring Simple (5217.40) before tree Simple (5927.95).
  c = m.choose(NcclFunc::AllReduce, 1024 * kMiB);
  EXPECT_EQ(c->algo, NcclAlgo::Ring);
  EXPECT_EQ(c->proto, NcclProto::Simple);
  EXPECT_NEAR(c->timeUs, 5217.40, 0.01);
  // NCCL_ALGO=Ring: 64 KiB runs ring LL (40.0 + 65536 / 20800 = 43.15 us) on one channel, the
  // bytes being fewer than channels x 512 threads x 8 x 16 ranks until a single channel.
  NcclCostModel::Enabled ring;
  ring.algo.fill(false);
  ring.algo[static_cast<int>(NcclAlgo::Ring)] = true;
  c = m.choose(NcclFunc::AllReduce, 64 * kKiB, ring);
  EXPECT_EQ(c->algo, NcclAlgo::Ring);
  EXPECT_EQ(c->proto, NcclProto::LL);
  EXPECT_NEAR(c->timeUs, 43.15, 0.01);
  EXPECT_EQ(c->channels, 1);
  // And NCCL_PROTO=Simple with it: nothing else to choose from.
  ring.proto = {false, false, true};
  c = m.choose(NcclFunc::AllReduce, 4 * kMiB, ring);
  EXPECT_EQ(c->proto, NcclProto::Simple);
  ring.algo.fill(false);
  EXPECT_FALSE(m.choose(NcclFunc::AllReduce, 4 * kMiB, ring).has_value());
}

TEST(NcclCostModel, DisablesWhatTheShapeLacks) {
  NcclCommShape s = twoH100Nodes();
  s.nvlsSupport = true;
  for (NcclAlgo a : {NcclAlgo::Nvls, NcclAlgo::NvlsTree}) {
    NcclGraph& g = s.graphs[static_cast<int>(a)];
    g.nChannels = 16;
    g.bwIntra = g.bwInter = 25.0;
  }
  const NcclCostModel two(s);
  // Across nodes NVLS alone needs CollNet; NVLS tree runs.
  EXPECT_EQ(two.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::Nvls, NcclProto::Simple), 0.0);
  EXPECT_GT(two.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::NvlsTree, NcclProto::Simple), 0.0);
  // NVLS runs Simple only; CollNet is off without in-network reduction; PAT needs one GPU per
  // node; broadcast is ring only.
  EXPECT_EQ(two.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::NvlsTree, NcclProto::LL128), 0.0);
  EXPECT_EQ(two.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::CollNetDirect, NcclProto::Simple), 0.0);
  EXPECT_EQ(two.bandwidthGBps(NcclFunc::AllGather, NcclAlgo::Pat, NcclProto::Simple), 0.0);
  EXPECT_EQ(two.bandwidthGBps(NcclFunc::Broadcast, NcclAlgo::Tree, NcclProto::Simple), 0.0);
  // One node: NVLS tree is disabled, NVLS is not.
  s.nNodes = 1;
  s.nRanks = 8;
  const NcclCostModel one(s);
  EXPECT_EQ(one.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::NvlsTree, NcclProto::Simple), 0.0);
  EXPECT_GT(one.bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::Nvls, NcclProto::Simple), 0.0);
  // Without NVLink inside the node LL128 is off.
  s.graphs[static_cast<int>(NcclAlgo::Ring)].intraNvlink = false;
  EXPECT_EQ(NcclCostModel(s).bandwidthGBps(NcclFunc::AllReduce, NcclAlgo::Ring, NcclProto::LL128), 0.0);
}
