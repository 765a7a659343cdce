// PacketEpisodeModel: quantization, and the efficiency of congestion episodes against what the
// packet backend's physics must give: a lossless work-conserving switch drains at line rate,
// a lossy one that overflows loses time to retransmission, DCQCN never beats work conservation
// and does nothing below its marking threshold; each distinct episode is simulated once.
#include "sim/runtime/PacketEpisodeModel.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "sim/config/TopologyLoader.h"
#include "sim/fabric/LinkFraming.h"

namespace fabricsim {
namespace {

TopologySpec fabric(const std::string& cc, bool pfc, const std::string& buffer = "4MiB") {
  const std::string yaml = R"(
name: episode-test
topology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 4}
hosts: {gpus_per_host: 1}
links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps, latency: 1us, mtu: 4096}
switch:
  buffer: )" + buffer + R"(
  ecn: {kmin: 100KB, kmax: 400KB, pmax: 0.2}
  pfc: {enabled: )" + (pfc ? "true" : "false") +
                           R"(, xoff: 60KB, xon: 48KB}
congestion_control: {algorithm: )" +
                           cc + R"(}
)";
  return parseTopologyYaml(yaml, "episode-test.yaml");
}

/// `fabric(cc, pfc)` with `seeds` seeds per episode in `replicas` replica groups.
TopologySpec withSeeds(const std::string& cc, bool pfc, int seeds, int replicas) {
  TopologySpec spec = fabric(cc, pfc);
  spec.episodes.seeds = seeds;
  spec.episodes.replicas = replicas;
  return spec;
}

CongestionEpisode episode(uint32_t fanIn, uint32_t flows, Bytes bytes) {
  CongestionEpisode e;
  e.fanIn = fanIn;
  e.flows = flows;
  e.bytesPerFlow = bytes;
  e.lineRate = BitRate::gbps(100);
  e.arrivalRate = BitRate::gbps(100);
  e.pathLatency = Time::us(4);
  return e;
}

TEST(PacketEpisodeModelTest, QuantizationKeepsSmallCountsAndRoundsTheRest) {
  CongestionEpisode q = PacketEpisodeModel::quantize(episode(5, 7, 1 << 20));
  EXPECT_EQ(q.fanIn, 5u);
  EXPECT_EQ(q.flows, 7u);
  EXPECT_EQ(q.bytesPerFlow, 1 << 20);
  EXPECT_EQ(q.pathLatency, Time::us(4));
  q = PacketEpisodeModel::quantize(episode(37, 37, 3'000'000));
  EXPECT_EQ(q.fanIn, 40u) << "four steps per octave above 8: 32, 40, 48, 56";
  EXPECT_EQ(q.flows, 40u);
  EXPECT_NEAR(static_cast<double>(q.bytesPerFlow), 2.0 * 1024 * 1024 * std::sqrt(2.0), 64.0)
      << "two steps per octave";
  q = PacketEpisodeModel::quantize(episode(1000, 100000, Bytes{1} << 30));
  EXPECT_EQ(q.fanIn, 128u);
  EXPECT_LE(static_cast<double>(q.flows) * static_cast<double>(q.bytesPerFlow), double(Bytes{1} << 30));
  EXPECT_GE(q.flows, q.fanIn);
  CongestionEpisode slow = episode(3, 3, 1 << 20);
  slow.arrivalRate = BitRate::gbps(30);  // 90 Gb/s into 100: no overload to keep
  EXPECT_EQ(PacketEpisodeModel::quantize(slow).arrivalRate, BitRate::bps(25'000'000'000))
      << "to the nearest eighth of C";
  CongestionEpisode late = episode(2, 2, 4096);
  late.pathLatency = Time::ns(4130);
  EXPECT_EQ(PacketEpisodeModel::quantize(late).pathLatency, Time::ns(4250));
}

TEST(PacketEpisodeModelTest, QuantizationNeverTurnsAnOverloadIntoNone) {
  // Two flows at 0.55 C each overload C by 10%; the nearest eighth (0.5 C) would make them fill
  // it exactly, with no queue: the arrival rate must be rounded up instead.
  CongestionEpisode two = episode(2, 2, 1 << 20);
  two.arrivalRate = BitRate::gbps(55);
  const CongestionEpisode q = PacketEpisodeModel::quantize(two);
  EXPECT_GT(static_cast<double>(q.flows) * static_cast<double>(q.arrivalRate.bitsPerSecond()), 100e9);
  // Every overloaded episode on a grid of counts and rates (flow counts that round down
  // included: 17 -> 16, 45 -> 40) stays overloaded; one that does not overload is not made to.
  for (uint32_t flows : {2u, 3u, 5u, 9u, 17u, 23u, 45u, 100u, 300u})
    for (double gbps = 1; gbps <= 100; gbps += 0.7) {
      CongestionEpisode e = episode(2, flows, 1 << 20);
      e.arrivalRate = BitRate::bps(static_cast<int64_t>(gbps * 1e9));
      const CongestionEpisode qe = PacketEpisodeModel::quantize(e);
      const double demand =
          static_cast<double>(qe.flows) * static_cast<double>(qe.arrivalRate.bitsPerSecond());
      if (static_cast<double>(flows) * static_cast<double>(e.arrivalRate.bitsPerSecond()) > 100e9) {
        EXPECT_GT(demand, 100e9) << flows << " flows at " << gbps << " Gb/s";
      }
    }
}

TEST(PacketEpisodeModelTest, TheBackgroundIsQuantizedInEighthsOfTheLinkAndKeepsTheOverload) {
  // 70 Gb/s of paced flows on a 100 Gb/s link: 5.6 eighths, rounded to 6 (75 Gb/s). Three ports
  // at 20 Gb/s (1.6 eighths: 2, 25 Gb/s) overload what is left either way.
  CongestionEpisode e = episode(3, 3, 1 << 20);
  e.nicRate = BitRate::gbps(100);
  e.background = BitRate::gbps(70);
  e.arrivalRate = BitRate::gbps(20);
  CongestionEpisode q = PacketEpisodeModel::quantize(e);
  EXPECT_EQ(q.lineRate, BitRate::gbps(100));
  EXPECT_EQ(q.background, BitRate::bps(75'000'000'000));
  EXPECT_EQ(q.arrivalRate, BitRate::bps(25'000'000'000));
  // 30 Gb/s of background (2 eighths) and two ports at 40 Gb/s (3 eighths): 110 Gb/s into 100,
  // but 2 x 3 + 2 = 8 eighths would only fill it; A goes up to 4 eighths.
  e = episode(2, 2, 1 << 20);
  e.background = BitRate::gbps(30);
  e.arrivalRate = BitRate::gbps(40);
  q = PacketEpisodeModel::quantize(e);
  EXPECT_EQ(q.background, BitRate::bps(25'000'000'000));
  EXPECT_EQ(q.arrivalRate, BitRate::gbps(50));
  // At most seven eighths: the episode's flows always have some of the link.
  e.background = BitRate::gbps(99);
  EXPECT_EQ(PacketEpisodeModel::quantize(e).background, BitRate::bps(87'500'000'000));
  // The link itself is quantized in eighths of the NIC rate (30 Gb/s behind 100 Gb/s NICs: 2.4
  // eighths, 25 Gb/s), at least one.
  e = episode(3, 3, 1 << 20);
  e.nicRate = BitRate::gbps(100);
  e.lineRate = BitRate::gbps(30);
  e.arrivalRate = BitRate::gbps(20);
  EXPECT_EQ(PacketEpisodeModel::quantize(e).lineRate, BitRate::bps(25'000'000'000));
  e.lineRate = BitRate::gbps(1);
  EXPECT_EQ(PacketEpisodeModel::quantize(e).lineRate, BitRate::bps(12'500'000'000));
  // On a grid: every episode whose K ports and background overload the link still do once
  // quantized; and none that did not is made to.
  for (uint32_t k : {2u, 3u, 5u, 9u, 17u})
    for (double b = 0; b < 100; b += 5)
      for (double a = 1; a <= 100; a += 0.7) {
        CongestionEpisode g = episode(k, k, 1 << 20);
        g.background = BitRate::bps(static_cast<int64_t>(b * 1e9));
        g.arrivalRate = BitRate::bps(static_cast<int64_t>(a * 1e9));
        const CongestionEpisode qg = PacketEpisodeModel::quantize(g);
        const double load =
            static_cast<double>(qg.fanIn) * static_cast<double>(qg.arrivalRate.bitsPerSecond()) +
            static_cast<double>(qg.background.bitsPerSecond());
        const double given = static_cast<double>(k) * static_cast<double>(g.arrivalRate.bitsPerSecond()) +
                             static_cast<double>(g.background.bitsPerSecond());
        if (given > 100e9) {
          EXPECT_GT(load, 100e9) << k << " ports at " << a << " Gb/s over " << b;
        }
      }
}

TEST(PacketEpisodeModelTest, TheBackgroundTakesItsFifoShareOfTheQueue) {
  // Two ports at C/2 and a background of C/2 into C, no congestion control, a buffer that never
  // fills: a FIFO serves each sender in proportion to what it brings, C/3 each. Each flow of S
  // ends at 3S/C (its last byte arrives at 2S/C behind a queue of S, which drains in S/C),
  // sooner than the fluid makespan on what the background leaves (2S through C/2: 4S/C), so the
  // flows' own efficiencies are 4/3 and the episode's is capped at 1. Tolerance 2%: the start
  // of the queue and the last frames' interleaving, some 50 frames of the 1 ms.
  PacketEpisodeModel m(fabric("none", false, "64MiB"), 1);
  const Bytes S = 4 << 20;
  CongestionEpisode e = episode(2, 2, S);
  e.arrivalRate = BitRate::gbps(50);
  e.background = BitRate::gbps(50);
  const auto r = m.simulate(e, 1);
  EXPECT_EQ(r.packetsDropped, 0u);
  const double payload = 100e9 / 8 * 4096 / LinkFraming::roce().dataWireBytes(4096);
  ASSERT_EQ(r.flowTimesS.size(), 2u);
  for (double t : r.flowTimesS) EXPECT_NEAR(t, 3 * static_cast<double>(S) / payload, 0.02 * t);
  EXPECT_NEAR(r.fluidTimeS, 4 * static_cast<double>(S) / payload, 1e-9);
  EXPECT_EQ(r.efficiency, 1.0);
  // Meanwhile the background delivers its third of C, two thirds of its rate. Tolerance 3%: its
  // first bytes arrive a path latency late (0.4% of the 1 ms) and it is counted in whole 64 KiB
  // messages (1.6% of what it delivers).
  EXPECT_NEAR(r.backgroundBytes / r.backgroundIdeal, 2.0 / 3, 0.03);
  // A background faster than the ports (3C/4 against C/4 each): 5C/4 arrives, each flow gets a
  // fifth of C and ends at 5S/C (its last byte arrives at 4S/C behind a queue of S).
  e.arrivalRate = BitRate::gbps(25);
  e.background = BitRate::gbps(75);
  const auto fast = m.simulate(e, 1);
  EXPECT_EQ(fast.packetsDropped, 0u);
  for (double t : fast.flowTimesS) EXPECT_NEAR(t, 5 * static_cast<double>(S) / payload, 0.02 * t);
  // The background gets 3/5 of C, 4/5 of its rate (tolerance as above).
  EXPECT_NEAR(fast.backgroundBytes / fast.backgroundIdeal, 0.8, 0.03);
}

TEST(PacketEpisodeModelTest, SizeQuartilesRoundToQuartersOfTheLargest) {
  CongestionEpisode e = episode(2, 8, 1 << 20);
  e.sizeQuartiles = {0.05, 0.43, 0.9, 1.0};
  const CongestionEpisode q = PacketEpisodeModel::quantize(e);
  EXPECT_EQ(q.sizeQuartiles[0], 0.25) << "at least a quarter";
  EXPECT_EQ(q.sizeQuartiles[1], 0.5);
  EXPECT_EQ(q.sizeQuartiles[2], 1.0);
  EXPECT_EQ(q.sizeQuartiles[3], 1.0);
}

TEST(PacketEpisodeModelTest, FlowsWithLessLeftEndSoonerAsAFifoServesThem) {
  // Two ports at C into C, no congestion control, a buffer that never fills; one flow has S/2
  // left, the other S (size quartiles 1/2, 1/2, 1, 1: flow 0 is the first quartile, flow 1 the
  // third). Both arrive at C: the queue grows at C and a FIFO passes C/2 of each. The small flow
  // has arrived by S/(2C), behind a queue of S/2: its last byte leaves at S/C. The large one
  // arrives until S/C, then the S/2 queued of it drains: 3S/(2C), the fluid makespan too. Each
  // flow's efficiency is its bytes at the starting share C/2 over its time: (S/2)/(C/2) / (S/C)
  // = 1 and S/(C/2) / (3S/(2C)) = 4/3; the model gives the first quartiles the small flow's
  // outcomes and the last ones the large flow's. Tolerance 2%: the start of the queue and the
  // last frames' interleaving (some 50 frames of the 0.5 ms).
  PacketEpisodeModel m(fabric("none", false, "64MiB"), 1);
  const Bytes S = 4 << 20;
  CongestionEpisode e = episode(2, 2, S);
  e.sizeQuartiles = {0.5, 0.5, 1.0, 1.0};
  const auto r = m.simulate(e, 1);
  EXPECT_EQ(r.packetsDropped, 0u);
  const double payload = 100e9 / 8 * 4096 / LinkFraming::roce().dataWireBytes(4096);
  const double sc = static_cast<double>(S) / payload;
  ASSERT_EQ(r.flowTimesS.size(), 2u);
  EXPECT_NEAR(r.flowTimesS[0], sc, 0.02 * sc);
  EXPECT_NEAR(r.flowTimesS[1], 1.5 * sc, 0.02 * 1.5 * sc);
  EXPECT_NEAR(r.fluidTimeS, 1.5 * sc, 1e-9);
  EXPECT_NEAR(r.efficiency, 1.0, 0.02);
  m.efficiency(e);
  const auto flows = m.flowEfficiencies();
  const auto quartiles = m.flowQuartiles();
  ASSERT_EQ(quartiles.size(), 8u);
  // [begin, end) of quartile q at 2q, 2q + 1: the small flows' outcomes, then the large ones'.
  EXPECT_EQ(quartiles[0], 0u);
  EXPECT_EQ(quartiles[1], quartiles[4]);
  EXPECT_EQ(quartiles[5], flows.size());
  EXPECT_EQ(quartiles[1] - quartiles[0], quartiles[5] - quartiles[4]) << "one flow of each per seed";
  // Quartiles of one size share their range.
  EXPECT_EQ(quartiles[2], quartiles[0]);
  EXPECT_EQ(quartiles[3], quartiles[1]);
  EXPECT_EQ(quartiles[6], quartiles[4]);
  EXPECT_EQ(quartiles[7], quartiles[5]);
  for (uint32_t i = quartiles[0]; i < quartiles[1]; ++i) EXPECT_NEAR(flows[i], 1.0, 0.02) << i;
  for (uint32_t i = quartiles[4]; i < quartiles[5]; ++i) EXPECT_NEAR(flows[i], 4.0 / 3, 0.03) << i;
}

TEST(PacketEpisodeModelTest, LosslessSwitchWithoutCcDrainsAtLineRate) {
  // PFC keeps every byte; the bottleneck never idles from the first arrival to the last byte, so
  // the drain takes the fluid time up to one frame and the path's fixed part (< 0.5% here).
  PacketEpisodeModel m(fabric("none", true), 1);
  const auto r = m.simulate(episode(8, 8, 1 << 20), 1);
  EXPECT_GT(r.pfcPauseFrames, 0u) << "an 8:1 incast of 1 MiB each must pause with 60 KB XOFF";
  EXPECT_EQ(r.packetsDropped, 0u);
  EXPECT_NEAR(r.efficiency, 1.0, 0.005);
}

TEST(PacketEpisodeModelTest, LossySwitchThatOverflowsLosesTimeToRetransmission) {
  PacketEpisodeModel m(fabric("none", false, "1MiB"), 1);
  const auto r = m.simulate(episode(8, 8, 1 << 20), 1);
  EXPECT_GT(r.packetsDropped, 0u) << "7 MiB of excess arrivals into a 1 MiB buffer";
  EXPECT_LT(r.efficiency, 0.9);
  EXPECT_GT(r.efficiency, 0.0);
}

// What other queues of the switch hold of its buffer is taken out of the episode's switch: a
// lossy queue may hold alpha x the free shared buffer (dynamic thresholds, alpha 1 here), so,
// alone in what is left (B' = B - held), it stays within B' / 2, plus the ingress ports' one-frame
// reserves a refused packet may still use (at most 16 ports x 4 KiB + headers: 72 KiB), the
// mean as the queue histogram's bucket midpoints report it (at most 12.5% above). 8 MiB arriving
// at four times the drain rate fill it: less buffer, a shorter queue and more drops.
TEST(PacketEpisodeModelTest, ALossyQueueStaysUnderItsThresholdInTheBufferTheOthersLeave) {
  PacketEpisodeModel m(fabric("none", false), 1);  // 4 MiB buffer
  CongestionEpisode e = episode(4, 4, 2 << 20);
  const auto alone = m.simulate(e, 1);
  e.bufferHeld = 2 << 20;
  const auto shared = m.simulate(e, 1);
  const auto bound = [](double buffer) { return (buffer / 2 + 72 * 1024) * 1.125; };
  EXPECT_GT(alone.queueBytes, 0.0);
  EXPECT_LE(alone.queueBytes, bound(4 << 20));
  EXPECT_LE(shared.queueBytes, bound(2 << 20));
  EXPECT_LT(shared.queueBytes, alone.queueBytes);
  EXPECT_GT(shared.packetsDropped, alone.packetsDropped);
  EXPECT_GT(alone.packetsDropped, 0u) << "8 MiB into a queue of at most 2 MiB";
}

TEST(PacketEpisodeModelTest, WhatOtherQueuesHoldIsQuantizedIn32ndsOfTheBufferLeavingAnEighth) {
  const Bytes buffer = 32 << 20;
  CongestionEpisode e = episode(4, 4, 1 << 20);
  e.bufferHeld = buffer / 3;  // 10.67 32nds
  EXPECT_EQ(PacketEpisodeModel::quantize(e, buffer).bufferHeld, 11 * (buffer / 32));
  e.bufferHeld = buffer / 70;  // under half a 32nd
  EXPECT_EQ(PacketEpisodeModel::quantize(e, buffer).bufferHeld, 0);
  e.bufferHeld = buffer;  // never the whole buffer: the episode keeps 4 32nds
  EXPECT_EQ(PacketEpisodeModel::quantize(e, buffer).bufferHeld, 28 * (buffer / 32));
  EXPECT_EQ(PacketEpisodeModel::quantize(e).bufferHeld, 0) << "no buffer given: nothing is shared";
}

TEST(PacketEpisodeModelTest, DcqcnActsOnlyAboveItsMarkingThreshold) {
  PacketEpisodeModel m(fabric("dcqcn", true), 1);
  // 2 x 32 KiB: the queue never reaches Kmin = 100 KB, so no marks and no rate cuts.
  const auto small = m.simulate(episode(2, 2, 32 << 10), 1);
  EXPECT_EQ(small.ecnMarks, 0u);
  EXPECT_NEAR(small.efficiency, 1.0, 0.02) << "two 32 KiB bursts: start-up of a few frames at most";
  // 8 x 4 MiB: marks, CNPs and rate cuts; never better than a work-conserving drain.
  const auto big = m.simulate(episode(8, 8, 4 << 20), 1);
  EXPECT_GT(big.ecnMarks, 0u);
  EXPECT_LE(big.efficiency, 1.0);
  EXPECT_LT(big.efficiency, small.efficiency);
}

TEST(PacketEpisodeModelTest, FlowsThatCannotArriveFasterThanTheLinkDrainsBuildNoQueue) {
  // Four flows held to a quarter of the line rate each before the link (as QPs sharing one NIC
  // are): they fill it exactly, DCQCN sees no mark and the drain takes the fluid time.
  PacketEpisodeModel m(fabric("dcqcn", false), 1);
  CongestionEpisode e = episode(4, 4, 1 << 20);
  e.arrivalRate = BitRate::gbps(25);
  const auto r = m.simulate(e, 1);
  EXPECT_EQ(r.ecnMarks, 0u);
  EXPECT_NEAR(r.efficiency, 1.0, 0.01);
  // The same flows at full speed: a 4:1 convergence that DCQCN must act on.
  const auto fast = m.simulate(episode(4, 4, 1 << 20), 1);
  EXPECT_GT(fast.ecnMarks, 0u);
  EXPECT_LT(fast.efficiency, r.efficiency);
}

TEST(PacketEpisodeModelTest, QueuePairsStartAtTheNicLineRateNotAtTheirShareOfIt) {
  // Four senders whose NICs give these QPs 40 Gb/s each (4 x 40 = 160 Gb/s into 100). DCQCN starting at 40
  // Gb/s cuts to 20 at the first CNP, which the host link feels at once; starting at the NIC's 100 Gb/s, the
  // first cut (to 50) changes nothing while the queue keeps growing, so the episode can only take longer.
  // Without congestion control the starting rate means nothing: the same time to the picosecond.
  PacketEpisodeModel m(fabric("dcqcn", false), 1);
  CongestionEpisode share = episode(4, 4, 4 << 20);
  share.arrivalRate = BitRate::gbps(40);
  share.nicRate = share.arrivalRate;
  CongestionEpisode line = share;
  line.nicRate = BitRate::gbps(100);
  const auto atShare = m.simulate(share, 1);
  const auto atLine = m.simulate(line, 1);
  EXPECT_GT(atShare.ecnMarks, 0u);
  EXPECT_LT(atLine.efficiency, atShare.efficiency);
  PacketEpisodeModel none(fabric("none", false, "64MiB"), 1);
  EXPECT_EQ(none.simulate(share, 1).packetTimeS, none.simulate(line, 1).packetTimeS);
}

TEST(PacketEpisodeModelTest, FlowEfficienciesAreEachFlowsAndTheSlowestIsTheEpisodes) {
  // One seed: every flow's efficiency, sorted; the slowest flow's is the episode's (its last
  // byte is the episode's last byte). Several seeds: pooled, and the episode's (the fluid time
  // over the mean makespan) lies between the slowest flow's and the fastest's.
  TopologySpec one = fabric("dcqcn", false);
  one.episodes.seeds = 1;
  one.episodes.replicas = 1;
  PacketEpisodeModel a(one, 3);
  const double eff = a.efficiency(episode(6, 6, 2 << 20));
  const auto flows = a.flowEfficiencies();
  ASSERT_EQ(flows.size(), 6u);
  EXPECT_TRUE(std::is_sorted(flows.begin(), flows.end()));
  EXPECT_DOUBLE_EQ(flows.front(), eff);
  EXPECT_LT(eff, 1.0) << "a 6:1 DCQCN convergence costs time";
  TopologySpec three = one;
  three.episodes.seeds = 3;
  PacketEpisodeModel b(three, 3);
  const double mean = b.efficiency(episode(6, 6, 2 << 20));
  const auto pooled = b.flowEfficiencies();
  ASSERT_EQ(pooled.size(), 18u);
  EXPECT_LE(pooled.front(), mean);
  EXPECT_GE(pooled.back(), mean);
}

TEST(PacketEpisodeModelTest, EachDistinctEpisodeIsSimulatedOnceAndDeterministically) {
  TopologySpec one = fabric("dcqcn", false);
  one.episodes.seeds = 1;
  one.episodes.replicas = 1;
  PacketEpisodeModel a(one, 7);
  PacketEpisodeModel b(one, 7);
  const double e1 = a.efficiency(episode(4, 4, 1 << 20));
  const double e2 = a.efficiency(episode(4, 4, (1 << 20) + 1000));  // same bucket
  EXPECT_EQ(e1, e2);
  EXPECT_EQ(a.queries(), 2u);
  EXPECT_EQ(a.simulated(), 1u);
  EXPECT_EQ(b.efficiency(episode(4, 4, 1 << 20)), e1) << "same spec and seed, same result";
  const auto j = a.episodesJson(10);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["uses"], 2);
  EXPECT_EQ(j[0]["fan_in"], 4);
}

// Under DCQCN two 2 MiB flows keep their queue near the marking thresholds (100-400 KB), far
// under a 32 MiB buffer's dynamic threshold: 8 MiB held by other queues changes no admission,
// so the runs are those of the episode alone (checked by simulating it both ways), and the
// model answers from the episode alone without simulating again. Lossy without congestion
// control, 8 MiB into a 4 MiB buffer overflows: what others hold matters, and it is simulated.
TEST(PacketEpisodeModelTest, ABufferHeldThatChangesNoAdmissionIsAnsweredByTheEpisodeAlone) {
  TopologySpec spec = fabric("dcqcn", false, "32MiB");
  spec.episodes.seeds = 2;
  spec.episodes.replicas = 1;
  PacketEpisodeModel m(spec, 3);
  CongestionEpisode e = episode(2, 2, 2 << 20);
  const double alone = m.efficiency(e);
  e.bufferHeld = 8 << 20;  // 8 32nds of the buffer
  const double held = m.efficiency(e);
  EXPECT_EQ(held, alone);
  EXPECT_EQ(m.simulated(), 1u) << "answered by the episode alone";
  CongestionEpisode q = PacketEpisodeModel::quantize(e, spec.sw.buffer);
  const auto withHeld = m.simulate(q, m.episodeSeed(0));
  q.bufferHeld = 0;
  const auto without = m.simulate(q, m.episodeSeed(0));
  EXPECT_EQ(withHeld.flowTimesS, without.flowTimesS) << "the held buffer changes nothing";
  EXPECT_GT(without.bufferSlack, 8 << 20);

  TopologySpec lossy = fabric("none", false);  // 4 MiB
  lossy.episodes.seeds = 1;
  lossy.episodes.replicas = 1;
  PacketEpisodeModel n(lossy, 3);
  CongestionEpisode o = episode(4, 4, 2 << 20);
  n.efficiency(o);
  o.bufferHeld = 2 << 20;
  n.efficiency(o);
  EXPECT_EQ(n.simulated(), 2u) << "an overflowing queue feels every byte held";
}

TEST(PacketEpisodeModelTest, SeedsGiveTheExpectedDrainTimeAndReplicasGiveGroupsOfSeeds) {
  // Six seeds of an 8:1 DCQCN incast (random ECN marking) in three replica groups. Drain times
  // add, efficiencies do not: the run's efficiency must be the fluid time over the seeds' mean
  // packet time, i.e. the harmonic mean of their efficiencies (the same fluid time for all),
  // and replica r the same over seeds r-1 and r+2. Still one cache entry.
  PacketEpisodeModel m(withSeeds("dcqcn", false, 6, 3), 5);
  const CongestionEpisode e = episode(8, 8, 1 << 20);
  const double all = m.efficiency(e);
  std::vector<double> each;
  for (int k = 0; k < 6; ++k)
    each.push_back(m.simulate(PacketEpisodeModel::quantize(e), m.episodeSeed(k)).efficiency);
  auto harmonic = [](std::initializer_list<double> xs) {
    double inv = 0;
    for (double x : xs) inv += 1 / x;
    return static_cast<double>(xs.size()) / inv;
  };
  EXPECT_NEAR(all, harmonic({each[0], each[1], each[2], each[3], each[4], each[5]}), 1e-9);
  for (int r = 1; r <= 3; ++r) {
    m.setReplica(r);
    EXPECT_NEAR(m.efficiency(e),
                harmonic({each[static_cast<size_t>(r - 1)], each[static_cast<size_t>(r + 2)]}), 1e-9)
        << "replica " << r;
  }
  EXPECT_EQ(m.simulated(), 1u);
  EXPECT_NE(m.episodeSeed(0), m.episodeSeed(1));
  const auto j = m.episodesJson(1);
  ASSERT_EQ(j[0]["seeds"].size(), 6u);
  const double lo = j[0]["efficiency_ci95"][0], hi = j[0]["efficiency_ci95"][1];
  EXPECT_LE(lo, all);
  EXPECT_GE(hi, all);
}

TEST(PacketEpisodeModelTest, AnEpisodeThatDoesNotDependOnItsSeedRunsOneSeedPerReplicaGroup) {
  // A lossless switch without congestion control: PFC pauses, nothing is dropped and no rate is
  // cut, so no random choice (ECN marks are made but nothing reads them) changes a flow's time.
  // Its first three seeds (one per replica group) agree flow by flow and the model stops there;
  // the seeds it skipped, simulated here, would indeed have repeated them, and every replica
  // answers as the run does. DCQCN's cuts follow its random marks: all eight seeds run.
  PacketEpisodeModel m(withSeeds("none", true, 8, 3), 3);
  const CongestionEpisode e = episode(4, 8, 1 << 20);
  const double all = m.efficiency(e);
  EXPECT_EQ(m.seedDependent(), 0u);
  auto j = m.episodesJson(1);
  EXPECT_EQ(j[0]["seed_independent"], true);
  ASSERT_EQ(j[0]["seeds"].size(), 3u);
  const PacketEpisodeModel::Measured first = m.simulate(PacketEpisodeModel::quantize(e), m.episodeSeed(0));
  for (int k = 3; k < 8; ++k)
    EXPECT_EQ(m.simulate(PacketEpisodeModel::quantize(e), m.episodeSeed(k)).flowTimesS, first.flowTimesS)
        << "seed " << k;
  for (int r = 1; r <= 3; ++r) {
    m.setReplica(r);
    EXPECT_EQ(m.efficiency(e), all) << "replica " << r;
  }

  PacketEpisodeModel d(withSeeds("dcqcn", false, 8, 3), 3);
  d.efficiency(episode(8, 8, 1 << 20));
  EXPECT_EQ(d.seedDependent(), 1u);
  j = d.episodesJson(1);
  EXPECT_EQ(j[0]["seed_independent"], false);
  EXPECT_EQ(j[0]["seeds"].size(), 8u);
}

TEST(PacketEpisodeModelTest, SeedsOnThreadsGiveExactlyTheRunsOfOneThread) {
  // Each seed's run is a simulation of its own: run on three threads, an episode's answers (its
  // efficiency, every flow's, the queue pairs' states and each replica group's) must be those of
  // the same seeds run one after another, bit for bit.
  const CongestionEpisode e = episode(8, 8, 1 << 20);
  PacketEpisodeModel one(withSeeds("dcqcn", false, 6, 3), 11);
  PacketEpisodeModel three(withSeeds("dcqcn", false, 6, 3), 11);
  one.setThreads(1);
  three.setThreads(3);
  for (int r = 0; r <= 3; ++r) {
    one.setReplica(r);
    three.setReplica(r);
    EXPECT_EQ(one.efficiency(e), three.efficiency(e)) << "replica " << r;
    const auto a = one.flowEfficiencies(), b = three.flowEfficiencies();
    EXPECT_EQ(std::vector<double>(a.begin(), a.end()), std::vector<double>(b.begin(), b.end())) << "replica " << r;
    ASSERT_EQ(one.flowStates().size(), three.flowStates().size());
    for (size_t i = 0; i < one.flowStates().size(); ++i) {
      // Each state read through a controller of its own (the model's are shared and const).
      const auto& x = one.flowStates()[i];
      const auto& y = three.flowStates()[i];
      EXPECT_EQ(x.qp, y.qp);
      ASSERT_NE(x.cc, nullptr);
      ASSERT_NE(y.cc, nullptr);
      auto cx = makeCongestionControl(fabric("dcqcn", false).congestionControl);
      auto cy = makeCongestionControl(fabric("dcqcn", false).congestionControl);
      cx->copyQueuePair(0, *x.cc, x.qp, Time::zero());
      cy->copyQueuePair(0, *y.cc, y.qp, Time::zero());
      EXPECT_EQ(cx->rate(0, Time::us(1)).bitsPerSecond(), cy->rate(0, Time::us(1)).bitsPerSecond()) << "flow " << i;
      EXPECT_EQ(cx->nextTimer(0, Time::us(1)), cy->nextTimer(0, Time::us(1))) << "flow " << i;
    }
    EXPECT_EQ(one.backgroundEfficiency(), three.backgroundEfficiency());
  }
  auto ja = one.episodesJson(1), jb = three.episodesJson(1);
  ja[0].erase("wall_s");  // the one figure that is the machine's, not the model's
  jb[0].erase("wall_s");
  EXPECT_EQ(ja, jb);
  EXPECT_THROW(one.setThreads(0), std::exception);
}

}  // namespace
}  // namespace fabricsim
