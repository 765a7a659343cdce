#include "sim/calibrate/CollectiveSimulator.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"
#include "sim/fabric/LinkFraming.h"

namespace fabricsim {
namespace {

const std::string kCases = std::string(FABRICSIM_SOURCE_DIR) + "/validation/cases/";

/// A table of `op` over `hosts` hosts of `perHost` GPUs, one point per (size, what NCCL ran),
/// each measured at 1 us (simulate() returns simulated times and never reads the measured ones).
struct Row {
  int64_t size;
  std::string algorithm, protocol;
  int channels;
};
Measurement table(CollectiveOp op, uint32_t hosts, uint32_t perHost, const std::vector<Row>& rows) {
  Measurement m;
  m.file = "harness.json";
  m.label = "harness.json";
  m.op = op;
  m.hosts = hosts;
  m.gpusPerHost = perHost;
  m.ranks = hosts * perHost;
  int line = 10;
  for (const Row& r : rows) {
    Measurement::Point p;
    p.sizeBytes = r.size;
    p.oopTimeUs = 1;
    p.line = line++;
    p.ncclAlgorithm = r.algorithm;
    p.ncclProtocol = r.protocol;
    p.ncclChannels = r.channels;
    m.points.push_back(p);
  }
  return m;
}

/// Payload rate of one 400 Gb/s NDR NIC of the testbed (bytes/s): line rate x InfiniBand's
/// payload share of a 4 KiB-MTU packet.
double nicRate() {
  return 50e9 * 4096.0 / LinkFraming::ib().dataWireBytes(4096);
}

TEST(CollectiveSimulator, TheChannelsNcclRanWithArePinnedPerSize) {
  // 2 hosts x 8 GPUs (8 NICs each), ring all-gather of 256 MiB, recorded as run on 1 channel
  // and on 8. One channel crosses each host once, through one NIC, which carries (n-1)/n S:
  // t1 >= 15/16 S / r (the NICs' payload rate r; NVLink's 450 GB/s is never the bound), and
  // within 3% plus 100 us of it (the flow backend's distance from a ring's closed form on the
  // bandwidth-bound sizes, plus 30 steps of latency). Eight channels spread over the 8 NICs:
  // t8 within the same margins of t1 / 8. The starting tuning's 4 channels would give neither.
  CollectiveTuning t;
  t.channels = 4;
  const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), t, "flow");
  const int64_t s = int64_t{256} << 20;
  const Measurement m =
      table(CollectiveOp::AllGather, 2, 8, {{s, "ring", "simple", 1}, {s, "ring", "simple", 8}});
  const auto us = sim.simulate(m, ModelParameters{});
  ASSERT_EQ(us.size(), 2u);
  const double bound1 = 15.0 / 16 * static_cast<double>(s) / nicRate() * 1e6;
  EXPECT_GE(us[0], bound1);
  EXPECT_LE(us[0], 1.03 * bound1 + 100);
  EXPECT_GE(us[1], bound1 / 8);
  EXPECT_LE(us[1], 1.03 * bound1 / 8 + 100);
}

TEST(CollectiveSimulator, TheProtocolNcclRanWithIsPinnedPerSize) {
  // 2 hosts x 1 GPU, all-reduce of 4 MiB on one channel, recorded once as Simple and once as
  // LL, with the starting tuning at Simple. A 2-rank ring moves S through each NIC; LL sends 8-byte
  // lines of 4 data bytes, so its data rate is r/2 (24.6 GB/s, under NCCL's 39 GB/s two-host LL
  // ceiling), and its two hops' step latency is 2.7/14 of Simple's 2.7 us (NCCL's hwLat NET Ring
  // LL / Simple). t_LL - t_Simple = S / r - 2 x 2.7 us x (1 - 2.7/14) = 80.7 us. Within 3%: the
  // flow backend's distance from the closed form on a bandwidth-bound transfer (path latencies
  // are the same in both runs).
  const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), CollectiveTuning{}, "flow");
  const int64_t s = int64_t{4} << 20;
  const Measurement m =
      table(CollectiveOp::AllReduce, 2, 1, {{s, "ring", "simple", 1}, {s, "ring", "ll", 1}});
  const auto us = sim.simulate(m, ModelParameters{});
  ASSERT_EQ(us.size(), 2u);
  const double expected = static_cast<double>(s) / nicRate() * 1e6 - 2 * 2.7 * (1 - 2.7 / 14);
  EXPECT_NEAR(us[1] - us[0], expected, 0.03 * expected);
}

TEST(CollectiveSimulator, ARunsNcclProtoPinsEverySize) {
  // The same 2 hosts x 1 GPU all-reduce of 4 MiB as above, with nothing recorded per size but
  // the run's NCCL_PROTO: "LL" against "^LL,LL128" (only Simple left) must differ by the same
  // closed form, S / r - 2 x 2.7 us x (1 - 2.7/14), within the same 3%.
  const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), CollectiveTuning{}, "flow");
  const int64_t s = int64_t{4} << 20;
  Measurement ll = table(CollectiveOp::AllReduce, 2, 1, {{s, "ring", "", 1}});
  ll.protocol = "LL";
  Measurement simple = ll;
  simple.protocol = "^LL,LL128";
  const double expected = static_cast<double>(s) / nicRate() * 1e6 - 2 * 2.7 * (1 - 2.7 / 14);
  const double tLL = sim.simulate(ll, ModelParameters{})[0];
  const double tSimple = sim.simulate(simple, ModelParameters{})[0];
  EXPECT_NEAR(tLL - tSimple, expected, 0.03 * expected);
  // A per-size record wins over the run's setting.
  Measurement recorded = ll;
  recorded.points[0].ncclProtocol = "simple";
  EXPECT_NEAR(sim.simulate(recorded, ModelParameters{})[0], tSimple, 1e-6 * tSimple);
  // A protocol NCCL does not have is an input error naming the key.
  Measurement bad = ll;
  bad.protocol = "LL64";
  try {
    sim.simulate(bad, ModelParameters{});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("protocol"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("LL64"), std::string::npos) << e.what();
  }
}

TEST(CollectiveSimulator, WhatCannotBeSimulatedIsAnInputErrorAtItsLine) {
  // NCCL ran CollNet at the second size: the simulator has no in-network reduction, so the
  // point is refused with its file, line and key, never simulated as another algorithm.
  const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), CollectiveTuning{}, "flow");
  const Measurement m = table(CollectiveOp::AllReduce, 2, 8,
                              {{1 << 20, "ring", "simple", 4}, {1 << 22, "collnet_direct", "simple", 4}});
  try {
    sim.simulate(m, ModelParameters{});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("harness.json:11"), std::string::npos) << w;
    EXPECT_NE(w.find("nccl.algorithm"), std::string::npos) << w;
    EXPECT_NE(w.find("CollNet"), std::string::npos) << w;
  }
  // An unknown protocol, and a run whose NCCL_ALGO list names no NCCL algorithm, likewise.
  EXPECT_THROW(
      sim.simulate(table(CollectiveOp::AllReduce, 2, 8, {{1 << 20, "ring", "ll64", 4}}), ModelParameters{}),
      InputError);
  Measurement list = table(CollectiveOp::AllReduce, 2, 8, {{1 << 20, "", "", 0}});
  list.algorithm = "ring,foo";
  EXPECT_THROW(sim.simulate(list, ModelParameters{}), InputError);
}

TEST(CollectiveSimulator, AnNcclAlgoListIsNcclsChoiceAmongItsAlgorithms) {
  // A run with NCCL_ALGO=^Ring (every algorithm but the ring) and no per-size record, on 2 hosts x
  // 1 GPU: the simulated all-gather is NCCL's choice among the rest, and with one GPU per host
  // that is PAT (the only other all-gather NCCL runs there): log2(2) = 1 step moving S/2 each
  // way, the same bytes as the ring's single step. A list allowing only the ring gives the ring;
  // both runs' times match within 5% on a bandwidth-bound 64 MiB (one NIC each way, S/2 at r).
  const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), CollectiveTuning{}, "flow");
  const int64_t s = int64_t{64} << 20;
  Measurement notRing = table(CollectiveOp::AllGather, 2, 1, {{s, "", "", 0}});
  notRing.algorithm = "^ring";
  EXPECT_EQ(sim.tuningFor(notRing, notRing.points[0], sim.tuning()).algorithm, CollectiveAlgorithm::Auto);
  Measurement ring = notRing;
  ring.algorithm = "ring";
  const double expected = static_cast<double>(s) / 2 / nicRate() * 1e6;
  const double tNotRing = sim.simulate(notRing, ModelParameters{})[0];
  const double tRing = sim.simulate(ring, ModelParameters{})[0];
  EXPECT_NEAR(tNotRing, expected, 0.05 * expected);
  EXPECT_NEAR(tRing, expected, 0.05 * expected);
}

TEST(CollectiveSimulator, ARunsMinimumChannelsArePinned) {
  // A run with NCCL_MIN_CTAS=24 and a starting tuning of 16 channels is simulated on 24; with
  // NCCL_MAX_NCHANNELS=8, on 8.
  const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), CollectiveTuning{}, "flow");
  CollectiveTuning base;
  base.channels = 16;
  Measurement m = table(CollectiveOp::AllGather, 2, 8, {{1 << 20, "", "", 0}});
  m.minChannels = 24;
  EXPECT_EQ(sim.tuningFor(m, m.points[0], base).channels, 24);
  m.minChannels = 0;
  m.maxChannels = 8;
  EXPECT_EQ(sim.tuningFor(m, m.points[0], base).channels, 8);
}

TEST(CollectiveSimulator, ARingAcrossHostsRunsAtItsChannelsCeilingOrItsNics) {
  // 2 hosts x 8 GPUs (8 NICs), ring all-gather of 4 GiB on 16 channels (two per NIC), Simple.
  // With a channel's ceiling of 20 GB/s the ring moves 16 x 20 = 320 GB/s of busbw, under the
  // NICs' 8 x r (394 GB/s): t = 15/16 S / 320 GB/s. With 30 GB/s (480 > 394) the NICs bound it:
  // t = 15/16 S / (8 r). Within 2% plus 200 us each (the flow backend's distance from a ring's
  // closed form, and 15 steps of at most ~13 us of latency).
  const int64_t s = int64_t{4} << 30;
  auto run = [&](double ceiling) {
    CollectiveTuning t;
    t.channels = 16;
    t.simpleChannelBandwidthGBps = ceiling;
    const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), t, "flow");
    return sim.simulate(table(CollectiveOp::AllGather, 2, 8, {{s, "ring", "simple", 0}}),
                        ModelParameters{})[0];
  };
  const double S = static_cast<double>(s);
  const double capped = 15.0 / 16 * S / 320e9 * 1e6;
  const double nics = 15.0 / 16 * S / (8 * nicRate()) * 1e6;
  const double t20 = run(20), t30 = run(30);
  EXPECT_GE(t20, capped);
  EXPECT_LE(t20, 1.02 * capped + 200);
  EXPECT_GE(t30, nics);
  EXPECT_LE(t30, 1.02 * nics + 200);
}

TEST(CollectiveSimulator, AnLl128RingAcrossHostsRunsAtMostNcclsShareOfItsChannelsSimpleRate) {
  // The same ring under LL128: one thread block per channel copies 128-byte lines of 120 data
  // bytes plus flags, so a channel's LL128 data rate is NCCL's 0.92 of its Simple rate
  // (tuning.cc), under the LL128 per-channel cap (36.7 GB/s): with a 20 GB/s Simple ceiling,
  // 16 x 0.92 x 20 = 294.4 GB/s of busbw, t = 15/16 S / 294.4 GB/s. Before this ceiling an LL128
  // ring outran a Simple one at 4 GiB, and `protocol: auto` made busbw fall with size where NCCL's
  // tuner hands large sizes to Simple. Tolerance as above.
  const int64_t s = int64_t{4} << 30;
  CollectiveTuning t;
  t.channels = 16;
  t.simpleChannelBandwidthGBps = 20;
  const CollectiveSimulator sim(loadTopologyFile(kCases + "h100-2node-ndr.yaml"), t, "flow");
  const double t128 =
      sim.simulate(table(CollectiveOp::AllGather, 2, 8, {{s, "ring", "ll128", 0}}), ModelParameters{})[0];
  const double tSimple =
      sim.simulate(table(CollectiveOp::AllGather, 2, 8, {{s, "ring", "simple", 0}}), ModelParameters{})[0];
  const double capped = 15.0 / 16 * static_cast<double>(s) / (16 * 0.92 * 20e9) * 1e6;
  EXPECT_GE(t128, capped);
  EXPECT_LE(t128, 1.02 * capped + 200);
  EXPECT_GT(t128, tSimple);
}

}  // namespace
}  // namespace fabricsim
