// The hybrid backend's episodes of one switch share its packet buffer (FlowFabric::
// shareSwitchBuffers): each episode is asked once as if alone, then again with what the other
// episodes' queues hold of the buffer meanwhile. Checked with a model whose queues are known,
// against the dynamic-threshold equilibrium worked out by hand: a lossy queue may hold
// alpha x the free buffer, so queues that would each hold more alone settle at
// T = alpha B / (1 + m alpha) (m of them reaching it), those below keep theirs; a lossless
// queue is not held back at its egress; a queue held only for part of an episode counts for that
// part; InfiniBand credits each port its own buffer.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/flow/CongestionEpisodeModel.h"
#include "sim/flow/FlowFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"
#include "tests/support/PacketBench.h"

using namespace fabricsim;
using fabricsim::testsupport::DeliveryLog;
using fabricsim::testsupport::leafSpineSpec;

namespace {

/// Efficiency 1/2 for every episode; the queue it builds by the episode's largest flow (the
/// two episodes below differ in it); remembers what each ask said the others held.
struct QueueModel final : CongestionEpisodeModel {
  double efficiency(const CongestionEpisode& e) override {
    asked.emplace_back(e.bytesPerFlow, e.bufferHeld);
    last = queues.at(e.bytesPerFlow);
    return 0.5;
  }
  double queueBytes() const override { return last; }
  std::map<Bytes, double> queues;                ///< by bytesPerFlow
  std::vector<std::pair<Bytes, Bytes>> asked;    ///< (bytesPerFlow, bufferHeld) of each ask
  double last = 0;
  /// What the asks about the episode of `bytes` said the others held, in order.
  std::vector<Bytes> heldFor(Bytes bytes) const {
    std::vector<Bytes> out;
    for (const auto& [b, h] : asked)
      if (b == bytes) out.push_back(h);
    return out;
  }
};

constexpr Bytes kBuffer = 32 << 20;
constexpr Bytes kS = 8 << 20;  // the first episode's flows
constexpr Bytes kT = 4 << 20;  // the second's
/// A second episode of S + 4 KiB lasts 2049/2048 of the first: the first's queue is there for
/// 2048/2049 of it.
constexpr Bytes kS2 = kS + 4096;
Bytes partOf(double held) {
  return static_cast<Bytes>(std::llround(held * static_cast<double>(kS) / static_cast<double>(kS2)));
}

/// Two leaves of four hosts under one spine. Hosts 1 and 2 send S each to host 0, hosts 0 and 4
/// (on leaf 1) `second` each to host 3: two episodes at leaf 0 (its ports to hosts 0 and 3), each
/// from two upstream ports, at the same instant.
QueueModel runTwoEpisodesOnOneSwitch(const std::string& technology, bool pfc, Bytes second, double queueS,
                                     double queueT) {
  TopologySpec s = leafSpineSpec(2, 1, 4, technology);
  s.sw.buffer = kBuffer;
  s.sw.dtAlpha = 1.0;
  s.sw.pfc.enabled = pfc;
  // Lossless fabrics without congestion control pause instead (PFC spreading, no episodes).
  if (pfc) s.congestionControl.algorithm = "dcqcn";
  if (technology == "infiniband") s.congestionControl.algorithm = "ibcc";
  QueueModel model;
  model.queues = {{kS, queueS}, {second, queueT}};
  const auto topo = buildTopology(s);
  Simulator sim(1);
  EcmpFib fib(*topo, 1);
  FlowFabric fabric(sim, *topo, s, fib);
  fabric.setEpisodeModel(&model);
  DeliveryLog log;
  for (uint32_t src : {1u, 2u}) fabric.send(TransferRequest{src, 0, kS, 0, 0, src}, &log);
  for (uint32_t src : {0u, 4u}) fabric.send(TransferRequest{src, 3, second, 0, 0, 10 + src}, &log);
  sim.run();
  EXPECT_EQ(log.at.size(), 4u);
  return model;
}

/// The first two asks (the first round; later rounds see the paced flows as a background).
std::vector<Bytes> first2(std::vector<Bytes> v) {
  EXPECT_GE(v.size(), 2u);
  v.resize(2);
  return v;
}

}  // namespace

// Both queues would hold 30 MiB of the 32 alone: both reach the threshold, T = B / 3 each, so
// each is asked again with the other's B / 3 held.
TEST(SharedBufferEpisode, TwoLossyQueuesThatWouldEachFillTheBufferHoldAThirdEach) {
  const QueueModel m = runTwoEpisodesOnOneSwitch("roce", false, kS2, 30 << 20, 30 << 20);
  EXPECT_EQ(first2(m.heldFor(kS)), (std::vector<Bytes>{0, static_cast<Bytes>(std::llround(kBuffer / 3.0))}));
  EXPECT_EQ(first2(m.heldFor(kS2)), (std::vector<Bytes>{0, partOf(kBuffer / 3.0)}));
}

// 30 MiB and 1 MiB alone: with both at T = B/3 = 10.7 MiB the small one would be over its own
// 1 MiB, so only the large one reaches the threshold: T = (B - 1 MiB) / 2 = 15.5 MiB. The large
// episode's switch holds the small one's 1 MiB, the small one's holds 15.5 MiB.
TEST(SharedBufferEpisode, AShortQueueKeepsItsLengthAndTheLongOneTakesTheRestUpToItsThreshold) {
  const QueueModel m = runTwoEpisodesOnOneSwitch("roce", false, kS2, 1 << 20, 30 << 20);
  EXPECT_EQ(first2(m.heldFor(kS)), (std::vector<Bytes>{0, (kBuffer - (1 << 20)) / 2}));
  EXPECT_EQ(first2(m.heldFor(kS2)), (std::vector<Bytes>{0, partOf(1 << 20)}));
}

// The second episode carries half the bytes at the same efficiency: it lasts half as long, so
// the first holds its queue for its whole time, and it holds the first's for half the first's.
// Queues of 100 KB (ECN keeps them short) reach no threshold: each counts as it is.
TEST(SharedBufferEpisode, AQueueHeldForPartOfAnEpisodeCountsForThatPart) {
  const QueueModel m = runTwoEpisodesOnOneSwitch("roce", false, kT, 100'000, 100'000);
  EXPECT_EQ(first2(m.heldFor(kS)), (std::vector<Bytes>{0, 50'000}));
  EXPECT_EQ(first2(m.heldFor(kT)), (std::vector<Bytes>{0, 100'000}));
}

// With PFC the egress queues are not held to a threshold (the ingress pauses instead): each
// episode's switch holds the other's whole queue (under DCQCN: a lossless fabric without
// congestion control has no episodes, its pauses spread instead).
TEST(SharedBufferEpisode, LosslessQueuesAreNotHeldBackAtTheirEgress) {
  const QueueModel m = runTwoEpisodesOnOneSwitch("roce", true, kS2, 30 << 20, 20 << 20);
  EXPECT_EQ(first2(m.heldFor(kS)), (std::vector<Bytes>{0, 20 << 20}));
  EXPECT_EQ(first2(m.heldFor(kS2)), (std::vector<Bytes>{0, partOf(30 << 20)}));
}

// InfiniBand switches give each input port a credited buffer of its own: asked once, alone
// (under IB CC: credits alone have no episodes, their stalls spread instead).
TEST(SharedBufferEpisode, InfinibandEpisodesShareNoBuffer) {
  const QueueModel m = runTwoEpisodesOnOneSwitch("infiniband", false, kS2, 30 << 20, 30 << 20);
  ASSERT_FALSE(m.asked.empty());
  for (const auto& [bytes, held] : m.asked) EXPECT_EQ(held, 0) << bytes;
}
