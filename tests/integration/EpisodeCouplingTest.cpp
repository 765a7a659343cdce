// The hybrid backend's coupling between congestion episodes and the rate solve (FlowFabric with
// a CongestionEpisodeModel), with a model whose answers are known, so that the rates can be
// worked out by hand: a two-to-one convergence at half efficiency holds each flow to a quarter
// of the line rate, and that pace outlives the episode (for the burst it covered); a flow held
// lower by its NIC is one of the flows of the queue it crosses; flows joining paced ones meet
// them in the queue as a background, and lose what it lost there; each flow draws its own of the episode's
// per-flow outcomes; a NIC's queue pairs arrive at its equal share, not their max-min rates; a queue pair
// an episode left cut starts its next message at its congestion control's rate; a flow already sending
// when others join draws the outcomes of the flows with less left; a pipeline's (group's) members
// are flows of their episodes and the group moves at its slowest member's pace or carried rate;
// the outcome does
// not depend on the order in which the transfers were posted (the solver lists links and flows in that
// order); the rounds are counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "sim/cc/Dcqcn.h"
#include "sim/cc/DcqcnParams.h"
#include "sim/config/TopologySpec.h"
#include "sim/core/EventHandler.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/LinkFraming.h"
#include "sim/fabric/NetworkCounters.h"
#include "sim/flow/CongestionEpisodeModel.h"
#include "sim/flow/FlowFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"
#include "tests/support/PacketBench.h"

using namespace fabricsim;
using fabricsim::testsupport::DeliveryLog;
using fabricsim::testsupport::leafSpineSpec;

namespace {

/// Answers `eff` for every episode and remembers the last one it was asked about.
struct FixedModel final : CongestionEpisodeModel {
  explicit FixedModel(double e) : eff(e) {}
  double efficiency(const CongestionEpisode& e) override {
    last = e;
    ++calls;
    return eff;
  }
  double backgroundEfficiency() const override { return background; }
  double eff;
  double background = 1.0;
  CongestionEpisode last;
  int calls = 0;
};

/// Less efficient the more ports converge and the faster the flows arrive (a shape like the
/// packet-level one), so that episodes interact through the arrival rates.
struct ShapedModel final : CongestionEpisodeModel {
  double efficiency(const CongestionEpisode& e) override {
    const double load = static_cast<double>(e.flows) * static_cast<double>(e.arrivalRate.bitsPerSecond()) /
                        static_cast<double>(e.lineRate.bitsPerSecond());
    return std::clamp(1.0 / (1.0 + 0.15 * (load - 1.0) + 0.05 * (e.fanIn - 1)), 0.2, 1.0);
  }
};

/// Answers `eff` for every episode, and flow by flow the efficiencies `flows` (sorted).
struct SpreadModel final : CongestionEpisodeModel {
  SpreadModel(double e, std::vector<double> f) : eff(e), flows(std::move(f)) {}
  double efficiency(const CongestionEpisode&) override { return eff; }
  std::span<const double> flowEfficiencies() const override { return flows; }
  double eff;
  std::vector<double> flows;
};

/// Answers `eff` for every episode; flow by flow {0.5, 1}, the first leaving its queue pair as
/// DCQCN (paper) leaves one cut by two CNPs at alpha 1 when the episode starts (Rc = C/4, target
/// Rt = C/2), the second as one never cut.
struct StatefulModel final : CongestionEpisodeModel {
  StatefulModel() : cc(dcqcnPreset("dcqcn-paper")) {
    cc.addFlow(0, BitRate::gbps(100), Time::zero());
    cc.onNotification(0, Time::zero());
    cc.onNotification(0, Time::ns(1));
    cc.addFlow(1, BitRate::gbps(100), Time::zero());
    states = {{&cc, 0}, {&cc, 1}};
  }
  double efficiency(const CongestionEpisode&) override { return 0.75; }
  std::span<const double> flowEfficiencies() const override { return flows; }
  std::span<const QueuePairState> flowStates() const override { return states; }
  Dcqcn cc;
  std::vector<double> flows{0.5, 1.0};
  std::vector<QueuePairState> states;
};

/// Answers `eff` for every episode (and remembers the last one); flow by flow {0.25, 1}, the
/// first the outcome of the flows of the smaller sizes (quartiles 0 and 1), the second of the
/// larger (quartiles 2 and 3).
struct SizedModel final : CongestionEpisodeModel {
  double efficiency(const CongestionEpisode& e) override {
    last = e;
    return 0.5;
  }
  std::span<const double> flowEfficiencies() const override { return flows; }
  std::span<const uint32_t> flowQuartiles() const override { return quartiles; }
  std::vector<double> flows{0.25, 1.0};
  std::vector<uint32_t> quartiles{0, 1, 0, 1, 1, 2, 1, 2};
  CongestionEpisode last;
};

/// Payload bytes per picosecond of a 100 Gb/s link, and the fixed part of a 4-link path
/// (4 links of 1 us, and a 4 KiB frame's store-and-forward at 3 switches), in ps.
struct LinkMath {
  LinkMath() {
    const LinkFraming f = LinkFraming::roce();
    c = 100e9 / 8e12 * 4096 / f.dataWireBytes(4096);
    fixed = 4 * 1e6 + 3 * (f.dataWireBytes(4096) * 8.0 / 100e9 * 1e12);
  }
  double c = 0;
  double fixed = 0;
};

/// Calls run(tag) at each instant it is scheduled for (sim.schedule(at, &later, tag)).
struct Later final : EventHandler {
  std::function<void(uint32_t)> run;
  void onEvent(uint32_t tag) override { run(tag); }
};

/// Checks the time a message of S bytes took, alone on the fabric, on a queue pair StatefulModel's
/// episode left (see AQueuePairCutInAnEpisodeStartsItsNextMessageAtItsCarriedRate): S / C plus
/// the fixed path latency if uncut; if cut (only where `mayBeHeld`), between S / (0.55 C) and
/// S / (0.5 C) plus that latency. True if it was held. Tolerance 1 ns: picosecond event times.
bool tookCarriedOrLineTime(double took, Bytes S, bool mayBeHeld, uint32_t label);

/// `s` under DCQCN's paper preset.
TopologySpec dcqcnPaper(TopologySpec s) {
  s.congestionControl.algorithm = "dcqcn";
  s.congestionControl.dcqcn = dcqcnPreset("dcqcn-paper");
  return s;
}

struct HybridBench {
  HybridBench(const TopologySpec& s, CongestionEpisodeModel& model)
      : spec(s), topo(buildTopology(spec)), sim(1), fib(*topo, 1), fabric(sim, *topo, spec, fib) {
    fabric.setEpisodeModel(&model);
  }
  TopologySpec spec;
  std::unique_ptr<Topology> topo;
  Simulator sim;
  EcmpFib fib;
  FlowFabric fabric;
};

bool tookCarriedOrLineTime(double took, Bytes S, bool mayBeHeld, uint32_t label) {
  const LinkMath m;
  const double lineTime = static_cast<double>(S) / m.c + m.fixed;
  if (!mayBeHeld || took <= lineTime + 1e3) {
    EXPECT_NEAR(took, lineTime, 1e3) << label;
    return false;
  }
  EXPECT_GE(took, static_cast<double>(S) / (0.55 * m.c) + m.fixed - 1e3) << label;
  EXPECT_LE(took, static_cast<double>(S) / (0.5 * m.c) + m.fixed + 1e3) << label;
  return true;
}

/// Five leaves of one host under one spine: hosts 1 and 2 send S to host 0 at once, hosts 3 and
/// 4 at t0. Runs to the end; the delivery times are in `log`.
// The group {1 -> 0 of S, 3 -> 2 of S/2} (a pipeline's edges) and the flow 2 -> 0 of S: the
// member 1 -> 0 and the flow meet at the spine's port to leaf 0 from two upstream ports.
void sendPipelineBesideAFlow(HybridBench& b, DeliveryLog& log, Bytes S) {
  const std::vector<TransferRequest> group{TransferRequest{1, 0, S, 0, 0, 1}, TransferRequest{3, 2, S / 2, 0, 0, 3}};
  b.fabric.sendGroup(group, &log);
  b.fabric.send(TransferRequest{2, 0, S, 0, 0, 2}, &log);
}

void runTwoPairsInto0(HybridBench& b, DeliveryLog& log, Bytes S, Time t0) {
  for (uint32_t src : {1u, 2u}) b.fabric.send(TransferRequest{src, 0, S, 0, 0, src}, &log);
  Later later;
  later.run = [&](uint32_t) {
    for (uint32_t src : {3u, 4u}) b.fabric.send(TransferRequest{src, 0, S, 0, 0, src}, &log);
  };
  b.sim.schedule(t0, &later, 0);
  b.sim.run();
}

}  // namespace

TEST(EpisodeCoupling, TwoToOneAtHalfEfficiencyGivesEachFlowAQuarterOfTheLink) {
  // Three leaves of one host each under one spine: hosts 1 and 2 send S to host 0. The spine's
  // port to leaf 0 takes the two flows from two upstream ports (leaf 1, leaf 2), each able to
  // arrive at the full line rate C: an episode of K = 2, F = 2, A = C. At efficiency 1/2 it
  // delivers C/2, so each flow runs at C/4 (payload) and ends at S / (C/4) plus its fixed
  // path latency (4 links of 1 us, and a 4 KiB frame's store-and-forward at 3 switches).
  TopologySpec s = leafSpineSpec(3, 1, 1);
  FixedModel model(0.5);
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  for (uint32_t src : {1u, 2u}) b.fabric.send(TransferRequest{src, 0, S, 0, 0, src}, &log);
  b.sim.run();
  ASSERT_EQ(log.at.size(), 2u);
  EXPECT_EQ(model.last.fanIn, 2u);
  EXPECT_EQ(model.last.flows, 2u);
  EXPECT_EQ(model.last.arrivalRate, BitRate::gbps(100));
  const LinkMath m;
  const double expected = static_cast<double>(S) / (m.c / 4) + m.fixed;
  // Tolerance: 1 ns for rounding of event times to picoseconds across a few rate changes.
  for (uint32_t src : {1u, 2u}) EXPECT_NEAR(static_cast<double>(log.at[src].picos()), expected, 1e3) << src;
  const FlowFabric::Coupling& c = b.fabric.coupling();
  EXPECT_GE(c.rounds, 1u) << "the capacity had to be set once at least";
  EXPECT_EQ(c.unconverged, 0u);
}

TEST(EpisodeCoupling, AGroupMemberIsAFlowOfItsEpisodeAndItsPaceHoldsTheWholePipeline) {
  // Four leaves of one host each under one spine. A group (a pipeline's edges, sendGroup): host
  // 1 sends S to host 0 and host 3 sends S/2 to host 2 (it moves at half the group's rate); host
  // 2 sends S to host 0 on its own. The spine's port to leaf 0 takes the member 1 -> 0 from leaf
  // 1 and the flow 2 -> 0 from leaf 2: an episode of K = 2, F = 2, A = C, as two flows of their
  // own. At efficiency 1/2 each is held to C/4; the group's pace holds every member, so 3 -> 2,
  // alone on its path, moves at half that, C/8, and ends with the others at S / (C/4). Each
  // plus the fixed path latency of 4 links. Tolerance 1 ns: event times rounded to picoseconds.
  TopologySpec s = leafSpineSpec(4, 1, 1);
  FixedModel model(0.5);
  HybridBench b(s, model);
  ASSERT_TRUE(b.fabric.couplesGroups());
  DeliveryLog log;
  const Bytes S = 8 << 20;
  sendPipelineBesideAFlow(b, log, S);
  b.sim.run();
  ASSERT_EQ(log.at.size(), 3u);
  EXPECT_EQ(model.last.fanIn, 2u);
  EXPECT_EQ(model.last.flows, 2u);
  EXPECT_EQ(model.last.arrivalRate, BitRate::gbps(100));
  const LinkMath m;
  const double expected = static_cast<double>(S) / (m.c / 4) + m.fixed;
  for (uint32_t id : {1u, 2u, 3u}) EXPECT_NEAR(static_cast<double>(log.at[id].picos()), expected, 1e3) << id;
}

TEST(EpisodeCoupling, AFailureSplitsAPacedGroupIntoItsMembersWhichLeaveItsPace) {
  // As above (five leaves, host 4 idle): the group {1 -> 0 of S, 3 -> 2 of S/2} and the flow
  // 2 -> 0 of S, each held to C/4 by the two-to-one episode at efficiency 1/2. At t0 = 2S/C,
  // half-way, host 4's link fails (no transfer's): the group splits into its members, which
  // start without its pace. 1 -> 0 then has S/2 left beside the paced 2 -> 0 (one upstream
  // port: no new episode) and takes the rest of the link, 3C/4: it ends at t0 + 2S/(3C); 2 -> 0
  // keeps its pace and ends at 4S/C as before; 3 -> 2, S/4 left on idle links, ends first. Each
  // plus the fixed path latency. Tolerance 1 ns: event times rounded to picoseconds.
  TopologySpec s = leafSpineSpec(5, 1, 1);
  FixedModel model(0.5);
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  sendPipelineBesideAFlow(b, log, S);
  const LinkMath m;
  const double t0 = 2 * static_cast<double>(S) / m.c;
  struct Fail final : EventHandler {
    Fabric* fabric = nullptr;
    LinkId link = 0;
    void onEvent(uint32_t) override { fabric->setLinkUp(link, false); }
  } failer;
  failer.fabric = &b.fabric;
  failer.link = b.topo->portLink(b.topo->nicPort(4));
  b.sim.schedule(Time::ps(static_cast<int64_t>(t0)), &failer, 0);
  b.sim.run();
  ASSERT_EQ(log.at.size(), 3u);
  EXPECT_NEAR(static_cast<double>(log.at[1].picos()), t0 + static_cast<double>(S) / 2 / (0.75 * m.c) + m.fixed, 1e3);
  EXPECT_NEAR(static_cast<double>(log.at[2].picos()), 4 * static_cast<double>(S) / m.c + m.fixed, 1e3);
  EXPECT_LT(log.at[3], log.at[1]);
  const NetworkCounters c = b.fabric.networkCounters();
  EXPECT_EQ(c.bytesSent, c.bytesDelivered);
  EXPECT_EQ(c.bytesSent, S + S / 2 + S);
}

TEST(EpisodeCoupling, FixedPointDoesNotDependOnTheOrderTransfersArePosted) {
  // 40 transfers on a 4-leaf, 2-spine fabric (ECMP collisions, several congested links that
  // feed each other through the arrival rates), posted in one order and in the reverse order at
  // the same instants. The solver lists flows and links in posting order; the fixed point must
  // not care. Tolerance: 1e-9 relative, what double-precision sums in another order can move.
  TopologySpec s = leafSpineSpec(4, 2, 4);
  std::mt19937_64 rng(7);
  std::vector<TransferRequest> reqs;
  for (uint64_t i = 0; i < 40; ++i) {
    const uint32_t src = static_cast<uint32_t>(rng() % 16);
    uint32_t dst = static_cast<uint32_t>(rng() % 16);
    if (dst / 4 == src / 4) dst = (dst + 4) % 16;  // across the spines
    reqs.push_back(TransferRequest{src, dst, static_cast<Bytes>((1 + rng() % 8) << 20), 0,
                                   static_cast<uint16_t>(i % 3), i});
  }
  auto run = [&](bool reversed) {
    ShapedModel model;
    HybridBench b(s, model);
    DeliveryLog log;
    std::vector<TransferRequest> order = reqs;
    if (reversed) std::reverse(order.begin(), order.end());
    for (const auto& r : order) b.fabric.send(r, &log);
    b.sim.run();
    EXPECT_EQ(b.fabric.coupling().unconverged, 0u);
    EXPECT_GT(b.fabric.episodesEvaluated(), 0u) << "the scenario must have congestion episodes";
    return log.at;
  };
  const auto forward = run(false);
  const auto backward = run(true);
  ASSERT_EQ(forward.size(), reqs.size());
  ASSERT_EQ(backward.size(), reqs.size());
  for (const auto& [tag, t] : forward)
    EXPECT_NEAR(static_cast<double>(backward.at(tag).picos()), static_cast<double>(t.picos()),
                1e-9 * static_cast<double>(t.picos()) + 1)
        << "transfer " << tag;
}

TEST(EpisodeCoupling, AFlowHeldLowerByItsNicIsInTheQueueItCrosses) {
  // Three leaves of two hosts under one spine. Host 3 sends c to host 1 and three flows to host 2
  // (same leaf): its NIC gives each C/4. Hosts 2 and 4 send a and b to host 0. By max-min the
  // spine's port to leaf 0 carries c at C/4 (held by its NIC) and a and b at 3C/8 each: it is
  // full. c is not bottlenecked there, but it sits in that queue and is marked as a and b are:
  // the episode has F = 3 flows from K = 2 ports (leaf 1's uplink brings a and c, thinned to
  // what it carries, C; leaf 2's brings b, C): A = C. At efficiency 1/2 each is held to half its
  // rate to the end: a and b to 3C/16, ending at 16S/3C; c to C/8, ending at 8S/C (its NIC's
  // other flows and then a and b leave, but the pace holds). Tolerance: 1 ns of event-time
  // rounding.
  TopologySpec s = leafSpineSpec(3, 1, 2);
  FixedModel model(0.5);
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  b.fabric.send(TransferRequest{2, 0, S, 0, 0, 1}, &log);  // a
  b.fabric.send(TransferRequest{4, 0, S, 0, 0, 2}, &log);  // b
  b.fabric.send(TransferRequest{3, 1, S, 0, 0, 3}, &log);  // c
  for (uint16_t q = 0; q < 3; ++q) b.fabric.send(TransferRequest{3, 2, S, 0, q, 10u + q}, &log);
  b.sim.run();
  ASSERT_EQ(model.calls, 1);
  EXPECT_EQ(model.last.flows, 3u);
  EXPECT_EQ(model.last.fanIn, 2u);
  EXPECT_NEAR(static_cast<double>(model.last.arrivalRate.bitsPerSecond()), 100e9, 1e3);
  const LinkMath m;
  const double S3 = static_cast<double>(S);
  EXPECT_NEAR(static_cast<double>(log.at.at(1).picos()), 16 * S3 / (3 * m.c) + m.fixed, 1e3);
  EXPECT_NEAR(static_cast<double>(log.at.at(2).picos()), 16 * S3 / (3 * m.c) + m.fixed, 1e3);
  EXPECT_NEAR(static_cast<double>(log.at.at(3).picos()), 8 * S3 / m.c + m.fixed, 1e3);
}

TEST(EpisodeCoupling, FlowsJoiningPacedOnesMeetThemInTheQueueAsABackground) {
  // Five leaves of one host under one spine. Hosts 1 and 2 send to host 0 at once: an episode
  // at half efficiency holds each to C/4. 100 us later hosts 3 and 4 send to host 0 too. The
  // spine's port to leaf 0 is full again (the paced flows take C/2, the new ones C/4 each); the
  // new episode is the two new flows (K = 2, each port at C) on the whole link, C, with the
  // paced flows in its queue as a background of C/2. At half efficiency the new flows are held
  // to C/8 and end S/(C/8) after they start. Tolerance: 1 ns of event-time rounding.
  TopologySpec s = leafSpineSpec(5, 1, 1);
  FixedModel model(0.5);
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  const Time t0 = Time::us(100);
  runTwoPairsInto0(b, log, S, t0);
  ASSERT_EQ(model.calls, 2);
  EXPECT_EQ(model.last.fanIn, 2u);
  EXPECT_EQ(model.last.flows, 2u);
  EXPECT_EQ(model.last.lineRate, BitRate::gbps(100));
  EXPECT_NEAR(static_cast<double>(model.last.background.bitsPerSecond()), 50e9, 1e3);
  EXPECT_EQ(model.last.arrivalRate, BitRate::gbps(100));
  const LinkMath m;
  for (uint32_t src : {3u, 4u})
    EXPECT_NEAR(static_cast<double>(log.at.at(src).picos()),
                static_cast<double>(t0.picos()) + 8 * static_cast<double>(S) / m.c + m.fixed, 1e3)
        << src;
}

TEST(EpisodeCoupling, FlowsPacedEarlierLoseWhatTheBackgroundLostInTheNewQueue) {
  // As above, with a model whose background keeps half its rate: the second episode (two flows
  // of S through the C/2 the paced flows leave, at efficiency 1/2) lasts 2S/(C/2)/(1/2) = 8S/C,
  // and flows 1 and 2 lose half of it, 4S/C, spread over what they have left: they end at
  // 4S/C + 4S/C. Flows 3 and 4 are held to C/8 as before and end 8S/C after they start. (Flows
  // paced at the same instant as an episode are not cut by it: the synchronous-burst test covers
  // that.) Tolerance: 1 ns of event-time rounding.
  TopologySpec s = leafSpineSpec(5, 1, 1);
  FixedModel model(0.5);
  model.background = 0.5;
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  const Time t0 = Time::us(100);
  runTwoPairsInto0(b, log, S, t0);
  ASSERT_EQ(model.calls, 2);
  EXPECT_EQ(b.fabric.backgroundCuts(), 2u);
  const LinkMath m;
  const double S8 = static_cast<double>(S);
  for (uint32_t src : {1u, 2u})
    EXPECT_NEAR(static_cast<double>(log.at.at(src).picos()), 8 * S8 / m.c + m.fixed, 1e3) << src;
  for (uint32_t src : {3u, 4u})
    EXPECT_NEAR(static_cast<double>(log.at.at(src).picos()),
                static_cast<double>(t0.picos()) + 8 * S8 / m.c + m.fixed, 1e3)
        << src;
}

TEST(EpisodeCoupling, APaceOutlivesTheEpisodeThatSetIt) {
  // The two-to-one episode at efficiency 1/2 holds each flow to C/4. Flow 2 (S/2) ends at
  // (S/2)/(C/4); flow 1 is left alone on the link, but its congestion control still runs at
  // its pace: it ends at S/(C/4), not at (S/2)/(C/4) + (S/2)/C as a link given back at once
  // would have it. Tolerance: 1 ns of event-time rounding.
  TopologySpec s = leafSpineSpec(3, 1, 1);
  FixedModel model(0.5);
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  b.fabric.send(TransferRequest{1, 0, S, 0, 0, 1}, &log);
  b.fabric.send(TransferRequest{2, 0, S / 2, 0, 0, 2}, &log);
  b.sim.run();
  const LinkMath m;
  EXPECT_NEAR(static_cast<double>(log.at.at(2).picos()), static_cast<double>(S / 2) / (m.c / 4) + m.fixed,
              1e3);
  EXPECT_NEAR(static_cast<double>(log.at.at(1).picos()), static_cast<double>(S) / (m.c / 4) + m.fixed, 1e3);
  EXPECT_EQ(b.fabric.pacesSet(), 2u);
}

TEST(EpisodeCoupling, APaceEndsWithTheBurstItsEpisodeCovered) {
  // Flow 1 stands for bursts of S/4 (a pipelined ring's steps): its pace of C/4 holds for S/4,
  // until S/C. Then it is free while flow 2 (S, paced to the end) still runs at C/4: flow 1
  // takes the other 3C/4 for its last 3S/4 and ends at S/C + S/C = 2S/C; flow 2 at 4S/C. (The
  // link then has one episodic flow: no new episode.) Tolerance: 1 ns of event-time rounding.
  TopologySpec s = leafSpineSpec(3, 1, 1);
  FixedModel model(0.5);
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  TransferRequest one{1, 0, S, 0, 0, 1};
  one.burst = S / 4;
  b.fabric.send(one, &log);
  b.fabric.send(TransferRequest{2, 0, S, 0, 0, 2}, &log);
  b.sim.run();
  const LinkMath m;
  EXPECT_NEAR(static_cast<double>(log.at.at(1).picos()), 2 * static_cast<double>(S) / m.c + m.fixed, 1e3);
  EXPECT_NEAR(static_cast<double>(log.at.at(2).picos()), 4 * static_cast<double>(S) / m.c + m.fixed, 1e3);
}

TEST(EpisodeCoupling, EachFlowDrawsItsOwnOutcomeOfTheEpisode) {
  // An episode whose flows fared 0.25 and 0.75 of the fluid makespan at packet level: of the two
  // flows (C/2 each in the fluid), one is held to C/8 and the other to 3C/8, whichever is which
  // (a draw). They end at S/(3C/8) and S/(C/8): the slow one keeps its pace after the fast one
  // is gone. Tolerance: 1 ns of event-time rounding.
  TopologySpec s = leafSpineSpec(3, 1, 1);
  SpreadModel model(0.25, {0.25, 0.75});
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 8 << 20;
  for (uint32_t src : {1u, 2u}) b.fabric.send(TransferRequest{src, 0, S, 0, 0, src}, &log);
  b.sim.run();
  const LinkMath m;
  std::vector<double> ends{static_cast<double>(log.at.at(1).picos()),
                           static_cast<double>(log.at.at(2).picos())};
  std::sort(ends.begin(), ends.end());
  EXPECT_NEAR(ends[0], static_cast<double>(S) / (3 * m.c / 8) + m.fixed, 1e3);
  EXPECT_NEAR(ends[1], static_cast<double>(S) / (m.c / 8) + m.fixed, 1e3);
}

TEST(EpisodeCoupling, ANicServesItsQueuePairsInTurnWhateverTheirBottlenecks) {
  // Hosts 1-4 each send one flow to host 0 (through the spine's port to leaf 0: C/4 each) and
  // one to a host of its own (5-8, uncongested: 3C/4 each), so max-min fills every sending NIC.
  // A NIC does not know where its queue pairs' bottlenecks are: it serves both in turn, so the
  // flows to host 0 arrive at C/2 each, 2C in all, and the spine port is an episode of four ports
  // at A = C/2 (by the max-min rates they would fill it exactly, and none would be seen).
  TopologySpec s = leafSpineSpec(9, 1, 1);
  FixedModel model(1.0);
  HybridBench b(s, model);
  DeliveryLog log;
  for (uint32_t h = 1; h <= 4; ++h) {
    b.fabric.send(TransferRequest{h, 0, 8 << 20, 0, 0, h}, &log);
    b.fabric.send(TransferRequest{h, h + 4, 8 << 20, 0, 1, 10 + h}, &log);
  }
  b.sim.run();
  ASSERT_GE(model.calls, 1);
  EXPECT_EQ(model.last.fanIn, 4u);
  EXPECT_EQ(model.last.flows, 4u);
  EXPECT_NEAR(static_cast<double>(model.last.arrivalRate.bitsPerSecond()), 50e9, 1e3);
  EXPECT_EQ(model.last.lineRate, BitRate::gbps(100));
}

TEST(EpisodeCoupling, AQueuePairCutInAnEpisodeStartsItsNextMessageAtItsCarriedRate) {
  // Hosts 1 and 2 send S to host 0 at once (an episode, StatefulModel under DCQCN paper): one
  // flow's queue pair ends it cut to Rc = C/4 with target C/2, the other's uncut. Then each
  // host sends S to host 0 again, alone on the fabric, on the same queue pair (host 1 at 2 ms,
  // host 2 at 4 ms) and, 1 ms later, on queue pair 1, never cut. The uncut ones run at line rate
  // C: S / C plus the fixed path latency. The cut one starts at its congestion control's rate
  // then: fast recovery has brought Rc to Rt = C/2 within five 55 us periods, and additive
  // increase (R_AI 40 Mb/s per 55 us; no bytes counted at the flow level, so no hyper increase)
  // adds at most 4 ms / 55 us x 40 Mb/s = 2.9 Gb/s: it takes between S / (0.55 C) and
  // S / (0.5 C). Tolerance 1 ns: event times rounded to picoseconds.
  const TopologySpec s = dcqcnPaper(leafSpineSpec(3, 1, 1));
  StatefulModel model;
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 4 << 20;
  for (uint32_t src : {1u, 2u}) b.fabric.send(TransferRequest{src, 0, S, 0, 0, src}, &log);
  Later later;
  // Tag 10 q + src: host src's message on queue pair q.
  later.run = [&](uint32_t tag) {
    b.fabric.send(TransferRequest{tag % 10, 0, S, 0, static_cast<uint16_t>(tag / 10 - 1), tag}, &log);
  };
  const auto startOf = [](uint32_t tag) { return Time::ms(2 * (tag % 10) + (tag / 10 - 1)); };
  for (uint32_t tag : {11u, 12u, 21u, 22u}) b.sim.schedule(startOf(tag), &later, tag);
  b.sim.run();
  ASSERT_EQ(log.at.size(), 6u);
  int held = 0;
  for (uint32_t tag : {11u, 12u, 21u, 22u})
    held += tookCarriedOrLineTime(static_cast<double>((log.at[tag] - startOf(tag)).picos()), S, tag < 20, tag);
  EXPECT_EQ(held, 1) << "exactly one queue pair left the episode cut";
  EXPECT_EQ(b.fabric.carriedHolds(), 1u);
  EXPECT_EQ(b.fabric.carriedQueuePairs(), 2u);
}

TEST(EpisodeCoupling, AGroupStartsHeldByTheCarriedStateOfItsMostCutMember) {
  // As above, hosts 1 and 2 send S to host 0 at once: one queue pair ends the episode cut (Rc =
  // C/4, target C/2), the other uncut. Then two pipelines, each alone on the fabric: at 2 ms
  // the group {1 -> 0, 3 -> 2}, at 4 ms the group {2 -> 0, 3 -> 2 on queue pair 1}, S bytes per
  // member. The group whose member's queue pair was cut moves at that member's carried rate
  // (between C/2 and 0.55 C, as worked out above), both its members with it; the other at line
  // rate C. Tolerance 1 ns: event times rounded to picoseconds.
  const TopologySpec s = dcqcnPaper(leafSpineSpec(4, 1, 1));
  StatefulModel model;
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 4 << 20;
  for (uint32_t src : {1u, 2u}) b.fabric.send(TransferRequest{src, 0, S, 0, 0, src}, &log);
  Later later;
  // Group g (1 or 2): host g -> 0 (id 10 g) and host 3 -> 2 on queue pair g - 1 (id 10 g + 1).
  later.run = [&](uint32_t g) {
    const std::vector<TransferRequest> group{TransferRequest{g, 0, S, 0, 0, 10 * g},
                                             TransferRequest{3, 2, S, 0, static_cast<uint16_t>(g - 1), 10 * g + 1}};
    b.fabric.sendGroup(group, &log);
  };
  for (uint32_t g : {1u, 2u}) b.sim.schedule(Time::ms(2 * g), &later, g);
  b.sim.run();
  ASSERT_EQ(log.at.size(), 6u);
  int held = 0;
  for (uint32_t g : {1u, 2u}) {
    const double a = static_cast<double>((log.at[10 * g] - Time::ms(2 * g)).picos());
    const double c = static_cast<double>((log.at[10 * g + 1] - Time::ms(2 * g)).picos());
    EXPECT_NEAR(a, c, 1e3) << "a pipeline's members end together (same path latency)";
    held += tookCarriedOrLineTime(a, S, true, g);
  }
  EXPECT_EQ(held, 1) << "exactly one queue pair left the episode cut";
  EXPECT_EQ(b.fabric.carriedHolds(), 1u);
}

TEST(EpisodeCoupling, AFlowAlreadySendingDrawsTheOutcomesOfFlowsWithLessLeft) {
  // Host 1 sends S to host 0 alone at line rate C; host 2 sends S to host 0 when host 1 has S/2
  // left (t0 = S/(2C)): an episode of two flows, sizes S/2 and S (quartiles 1/2, 1/2, 1, 1).
  // SizedModel gives the smaller sizes' flows 1/4 and the larger 1: host 1's flow is held to
  // C/2 x 1/4 = C/8 for its S/2, ending at t0 + 4S/C; host 2's to C/2 for its S, ending at
  // t0 + 2S/C (a random draw would swap them half the time: t0 + S/C and t0 + 8S/C). Each plus
  // the fixed path latency. Tolerance 1 ns: event times rounded to picoseconds.
  TopologySpec s = leafSpineSpec(3, 1, 1);
  SizedModel model;
  HybridBench b(s, model);
  DeliveryLog log;
  const Bytes S = 4 << 20;
  const LinkMath m;
  const Time t0 = Time::ps(static_cast<int64_t>(static_cast<double>(S) / 2 / m.c));
  b.fabric.send(TransferRequest{1, 0, S, 0, 0, 1}, &log);
  Later later;
  later.run = [&](uint32_t) { b.fabric.send(TransferRequest{2, 0, S, 0, 0, 2}, &log); };
  b.sim.schedule(t0, &later, 0);
  b.sim.run();
  ASSERT_EQ(log.at.size(), 2u);
  EXPECT_NEAR(model.last.sizeQuartiles[0], 0.5, 1e-3);
  EXPECT_NEAR(model.last.sizeQuartiles[1], 0.5, 1e-3);
  EXPECT_EQ(model.last.sizeQuartiles[2], 1.0);
  EXPECT_EQ(model.last.sizeQuartiles[3], 1.0);
  EXPECT_NEAR(static_cast<double>(model.last.bytesPerFlow), static_cast<double>(S), 1.0);
  const double start = static_cast<double>(t0.picos());
  EXPECT_NEAR(static_cast<double>(log.at[1].picos()), start + 4 * static_cast<double>(S) / m.c + m.fixed,
              1e3);
  EXPECT_NEAR(static_cast<double>(log.at[2].picos()), start + 2 * static_cast<double>(S) / m.c + m.fixed,
              1e3);
}
