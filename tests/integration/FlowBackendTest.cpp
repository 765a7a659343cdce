// The flow backend (FlowFabric) on small fabrics: a lone transfer takes bytes / payload rate plus
// the fixed path latency and agrees with the packet backend; an incast shares the receiver's
// link equally and conserves bytes; ECMP paths are exactly the ports the packet backend's packets
// cross (PXN included); flowlet placement avoids a collision ECMP makes, and adaptive routing and
// spraying split evenly; adaptive_bias is refused; the same run twice gives identical records.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/LinkFraming.h"
#include "sim/flow/FlowFabric.h"
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

/// Everything a flow-level run needs, built from one spec and seed (as PacketBench, keeping a
/// record of every transfer).
struct FlowBench {
  explicit FlowBench(const TopologySpec& s, uint64_t seed = 1)
      : spec(s), topo(buildTopology(spec)), sim(seed), fib(*topo, seed), fabric(sim, *topo, spec, fib) {
    fabric.keepFlowRecords(true);
  }
  TopologySpec spec;
  std::unique_ptr<Topology> topo;
  Simulator sim;
  EcmpFib fib;
  FlowFabric fabric;
};

/// Payload bytes per picosecond of a link of `rate` carrying full-MTU frames.
double payloadRate(const TopologySpec& s, BitRate rate) {
  const LinkFraming f = s.links.technology == "infiniband" ? LinkFraming::ib() : LinkFraming::roce();
  const uint32_t mtu = static_cast<uint32_t>(s.links.mtu);
  return static_cast<double>(rate.bitsPerSecond()) / 8e12 * mtu / f.dataWireBytes(mtu);
}

/// The ports the packet backend's tables route a queue pair over: the NIC's port, then the
/// hashed member at every switch (PacketFabric::send and idealNetworkTime), with PXN.
std::vector<PortId> packetPath(const Topology& topo, const EcmpFib& fib, uint32_t srcGpu, uint32_t dstGpu,
                               uint8_t tc, uint16_t qp) {
  uint32_t srcNic = topo.nicOfGpu(srcGpu);
  const uint32_t dstNic = topo.nicOfGpu(dstGpu);
  if (!fib.reachable(topo.attachedSwitch(srcNic), dstNic))
    srcNic = topo.hostOfGpu(srcGpu) * topo.nicsPerHost() + topo.localNic(dstNic);
  const uint64_t tuple = FlowHash::queuePairTuple(srcNic, dstNic, tc, qp);
  std::vector<PortId> ports;
  PortId p = topo.nicPort(srcNic);
  ports.push_back(p);
  NodeId at = topo.peerNode(p);
  while (!topo.isHost(at)) {
    p = fib.nextHop(at, dstNic, tuple);
    ports.push_back(p);
    at = topo.peerNode(p);
  }
  return ports;
}

/// Fixed latency of a path computed from first principles: every link's propagation, and per
/// switch its latency and one frame's serialization on the port it forwards to.
Time fixedLatency(const Topology& topo, const TopologySpec& s, const std::vector<PortId>& ports,
                  uint32_t frame) {
  Time t = topo.portLatency(ports[0]);
  for (size_t i = 1; i < ports.size(); ++i)
    t += s.sw.latency + topo.portLatency(ports[i]) + serializationTime(frame, topo.portRate(ports[i]));
  return t;
}

TransferRequest transfer(uint32_t src, uint32_t dst, Bytes bytes, uint64_t tag = 0, uint16_t qp = 0) {
  TransferRequest r;
  r.srcGpu = src;
  r.dstGpu = dst;
  r.bytes = bytes;
  r.qp = qp;
  r.tag = tag;
  return r;
}

/// A GPU on a different leaf than `gpu` (leaf-spine: the NIC's attached switch differs).
uint32_t gpuOnOtherLeaf(const Topology& topo, uint32_t gpu) {
  for (uint32_t g = 0; g < topo.gpuCount(); ++g)
    if (topo.attachedSwitch(topo.nicOfGpu(g)) != topo.attachedSwitch(topo.nicOfGpu(gpu))) return g;
  ADD_FAILURE() << "no GPU on another leaf";
  return 0;
}

}  // namespace

TEST(FlowBackend, LoneTransferTakesBytesOverPayloadRatePlusFixedLatency) {
  for (const char* tech : {"roce", "infiniband"}) {
    for (Bytes bytes : {Bytes{1 << 20}, Bytes{1'000'000}, Bytes{64 * 4096}}) {
      SCOPED_TRACE(std::string(tech) + " " + std::to_string(bytes) + " B");
      TopologySpec s = leafSpineSpec(2, 2, 2, tech);
      s.sw.latency = 300_ns;
      FlowBench fb(s);
      const uint32_t dst = gpuOnOtherLeaf(*fb.topo, 0);
      DeliveryLog log;
      fb.fabric.send(transfer(0, dst, bytes, 7), &log);
      fb.sim.run();
      ASSERT_EQ(log.at.count(7), 1u);

      const std::vector<PortId> ports = packetPath(*fb.topo, fb.fib, 0, dst, 0, 0);
      ASSERT_EQ(ports.size(), 4u);  // NIC, leaf up, spine down, leaf down
      const LinkFraming f = std::string(tech) == "infiniband" ? LinkFraming::ib() : LinkFraming::roce();
      const Time latency =
          fixedLatency(*fb.topo, s, ports, f.dataWireBytes(static_cast<uint32_t>(s.links.mtu)));
      const double fluidPs = static_cast<double>(bytes) / payloadRate(s, BitRate::gbps(100));
      const double expected = static_cast<double>(latency.picos()) + fluidPs;
      const double got = static_cast<double>(log.at[7].picos());
      EXPECT_NEAR(got, expected, 1.0 * static_cast<double>(ports.size())) << "got " << got << " ps";
      EXPECT_EQ(fb.fabric.pathLatency(0, dst), latency);

      const FlowRecord& rec = fb.fabric.flowRecords().at(0);
      EXPECT_EQ(rec.finish, log.at[7]);
      EXPECT_FALSE(rec.intraHost);
      // Alone on the fabric it takes exactly its ideal.
      EXPECT_NEAR(static_cast<double>(rec.fct().picos()), static_cast<double>(rec.ideal.picos()), 4.0);

      // The packet backend on the same fabric: its unloaded ideal and its actual delivery.
      PacketBench pb(s);
      DeliveryLog plog;
      pb.fabric.send(transfer(0, dst, bytes, 7), &plog);
      pb.sim.run();
      ASSERT_EQ(plog.at.count(7), 1u);
      const double packetIdeal = static_cast<double>(pb.fabric.flowRecords().at(0).ideal.picos());
      const double packetActual = static_cast<double>(plog.at[7].picos());
      EXPECT_NEAR(got / packetIdeal, 1.0, 0.01)
          << "flow " << got << " ps, packet ideal " << packetIdeal << " ps";
      EXPECT_NEAR(got / packetActual, 1.0, 0.01) << "flow " << got << " ps, packet " << packetActual << " ps";
      EXPECT_EQ(pb.fabric.pathLatency(0, dst), fb.fabric.pathLatency(0, dst));
      std::printf(
          "[ lone %s %lld B ] flow %.6f us, packet ideal %.6f us, packet %.6f us (flow/packet %.5f)\n", tech,
          static_cast<long long>(bytes), got / 1e6, packetIdeal / 1e6, packetActual / 1e6,
          got / packetActual);
    }
  }
}

TEST(FlowBackend, InOrderMessagesOfAConnectionGoOneAfterAnother) {
  // Three 1 MiB messages posted at once on one connection (same GPUs, class and qp): marked in
  // order, message k arrives at latency + k S / B, as an RC queue pair streams its messages (the
  // packet backend's QPs do so always); unmarked, they share the path and all arrive at
  // latency + 3 S / B. Tolerance: one picosecond per rounding of the fluid time (3 per message).
  // The packet backend's deliveries of the same three messages bound the model: within 1%.
  TopologySpec s = leafSpineSpec(2, 2, 2);
  const Bytes S = 1 << 20;
  const double B = payloadRate(s, BitRate::gbps(100));  // bytes per ps
  for (bool ordered : {true, false}) {
    SCOPED_TRACE(ordered ? "in order" : "shared");
    // Posts the three messages on one connection and runs the bench to the end.
    auto postThree = [&](auto& bench, uint32_t dst, DeliveryLog& log) {
      for (uint64_t k = 1; k <= 3; ++k) {
        TransferRequest r = transfer(0, dst, S, k);
        r.inOrder = ordered;
        bench.fabric.send(r, &log);
      }
      bench.sim.run();
    };
    FlowBench fb(s);
    const uint32_t dst = gpuOnOtherLeaf(*fb.topo, 0);
    DeliveryLog log;
    postThree(fb, dst, log);
    const double latency = static_cast<double>(fb.fabric.pathLatency(0, dst).picos());
    PacketBench pb(s);
    DeliveryLog plog;
    postThree(pb, dst, plog);
    for (uint64_t k = 1; k <= 3; ++k) {
      const double expected = latency + (ordered ? k : 3) * static_cast<double>(S) / B;
      EXPECT_NEAR(static_cast<double>(log.at[k].picos()), expected, 3.0) << "message " << k;
      if (ordered) {  // the packet backend's QP sends its messages in order whatever the mark
        EXPECT_NEAR(static_cast<double>(log.at[k].picos()) / static_cast<double>(plog.at[k].picos()), 1.0,
                    0.01)
            << "message " << k;
      }
    }
  }
}

TEST(FlowBackend, AGroupMovesAsOnePipelineAtItsMostLoadedLinksRate) {
  // One leaf, 8 hosts, 100G. A group of three members (sendGroup): 0 -> 1 and 2 -> 3 of S bytes
  // and 5 -> 6 of S/2, with a lone transfer 4 -> 3 of 2S sharing host 3's downlink. Worked by
  // hand: the downlink is shared equally by the group (weight 1 there) and the lone flow, so the
  // group moves at B/2 (B: the payload rate): S-byte members take 2S/B, the S/2-byte one moves
  // at B/4 and takes as long, and all arrive together (each after its own path latency), where
  // sent alone 0 -> 1 would take S/B. The lone flow has S left at 2S/B, then the link: 3S/B.
  // Tolerance: 3 ps of fluid rounding. Bytes are conserved. A link failure mid-way splits the
  // group: then 0 -> 1 runs at B on its own and arrives before 2 -> 3.
  TopologySpec s = leafSpineSpec(1, 1, 8);
  const Bytes S = 1 << 20;
  const double B = payloadRate(s, BitRate::gbps(100));
  for (const bool fail : {false, true}) {
    SCOPED_TRACE(fail ? "a link fails mid-way" : "intact");
    FlowBench fb(s);
    ASSERT_TRUE(fb.fabric.couplesGroups());
    DeliveryLog log;
    const std::vector<TransferRequest> group{transfer(0, 1, S, 1), transfer(2, 3, S, 2), transfer(5, 6, S / 2, 3)};
    fb.fabric.sendGroup(group, &log);
    fb.fabric.send(transfer(4, 3, 2 * S, 4), &log);
    struct Fail : EventHandler {
      Fabric* f = nullptr;
      void onEvent(uint32_t) override { f->setLinkUp(7, false); }  // host 7's link: no member's
    } failer;
    failer.f = &fb.fabric;
    if (fail) fb.sim.schedule(Time::ps(static_cast<int64_t>(S / B / 2)), &failer, 0);
    fb.sim.run();
    const auto lat = [&](uint32_t a, uint32_t b) { return static_cast<double>(fb.fabric.pathLatency(a, b).picos()); };
    const auto at = [&](uint64_t tag) { return static_cast<double>(log.at.at(tag).picos()); };
    if (!fail) {
      EXPECT_NEAR(at(1), lat(0, 1) + 2 * S / B, 3.0);
      EXPECT_NEAR(at(2), lat(2, 3) + 2 * S / B, 3.0);
      EXPECT_NEAR(at(3), lat(5, 6) + 2 * S / B, 3.0);
      EXPECT_NEAR(at(4), lat(4, 3) + 3 * S / B, 3.0);
    } else {
      // Split at S/(2B), a quarter of each S-byte member sent: 0 -> 1 then has 3S/4 at B.
      EXPECT_NEAR(at(1), lat(0, 1) + S / (2 * B) + 0.75 * S / B, 3.0);
      EXPECT_LT(at(1), at(2));
    }
    const NetworkCounters c = fb.fabric.networkCounters();
    EXPECT_EQ(c.bytesSent, c.bytesDelivered);
    EXPECT_EQ(c.bytesSent, 2 * S + S / 2 + 2 * S);
    EXPECT_EQ(fb.fabric.transfers().started(), 4u);
  }
}

TEST(FlowBackend, IncastSharesTheReceiverEquallyAndConservesBytes) {
  const TopologySpec s = leafSpineSpec(2, 2, 4);  // 8 hosts: 3 senders on the receiver's leaf, 4 across
  const Bytes bytes = 1 << 20;
  const double fluid = static_cast<double>(bytes) / payloadRate(s, BitRate::gbps(100));

  FlowBench fb(s);
  const uint32_t n = static_cast<uint32_t>(fb.topo->gpuCount()) - 1;
  DeliveryLog log;
  for (uint32_t g = 1; g <= n; ++g) fb.fabric.send(transfer(g, 0, bytes, g), &log);
  fb.sim.run();
  ASSERT_EQ(log.at.size(), n);
  for (uint32_t g = 1; g <= n; ++g) {
    // Every sender gets 1/n of the receiver's link for the whole transfer.
    const double fluidPart = static_cast<double>((log.at[g] - fb.fabric.pathLatency(g, 0)).picos());
    EXPECT_NEAR(fluidPart / (n * fluid), 1.0, 1e-6) << "sender " << g;
  }
  const NetworkCounters c = fb.fabric.networkCounters();
  EXPECT_EQ(c.bytesSent, static_cast<Bytes>(n) * bytes);
  EXPECT_EQ(c.bytesDelivered, c.bytesSent);
  EXPECT_EQ(c.goodputBytes, c.bytesSent);
  EXPECT_EQ(c.bytesDropped, 0);
  EXPECT_EQ(fb.fabric.solver().activeFlows(), 0u);
  EXPECT_EQ(fb.fabric.flowsStarted(), n);
  EXPECT_EQ(fb.fabric.solver().peakActiveFlows(), n);
  // The receiver's port was busy for the whole run: its tier's peak utilisation is ~1.
  EXPECT_GT(c.linkUtilMax, 0.95);
  EXPECT_LE(c.linkUtilMax, 1.0);
}

TEST(FlowBackend, EcmpPathsAreThePortsThePacketBackendsPacketsCross) {
  // Not a second walk through the tables: each transfer (one full frame) is sent on an idle
  // packet-level fabric built independently from the same spec and seed, and the ports whose
  // wire counters grew by at least a data frame (ACKs are smaller) are the path its packet took.
  struct Case {
    const char* name;
    TopologySpec spec;
  };
  std::vector<Case> cases;
  {
    TopologySpec s = leafSpineSpec(4, 4, 4);
    s.leafSpine.linksPerSpine = 2;
    cases.push_back({"leaf-spine 4x4 x2 links", s});
  }
  {
    TopologySpec s;
    s.kind = TopologyKind::FatTree;
    s.fatTree = {8, 8, 4};
    cases.push_back({"fat-tree k=8", s});
  }
  {
    // Rail-optimized, 2 rails without shared spines: cross-rail transfers leave through PXN.
    TopologySpec s;
    s.kind = TopologyKind::RailOptimized;
    s.rail.rails = 2;
    s.rail.leafSpine = {2, 2, 2, 2};
    s.rail.sharedSpines = false;
    s.hosts.gpusPerHost = 2;
    s.hosts.nicsPerHost = 2;
    cases.push_back({"rail-optimized 2 rails (PXN)", s});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (uint64_t seed : {1u, 9u}) {
      FlowBench fb(c.spec, seed);
      PacketBench pb(c.spec, seed);
      const Topology& topo = *fb.topo;
      const Bytes frame = c.spec.links.mtu;
      std::mt19937_64 rng(seed);
      std::uniform_int_distribution<uint32_t> gpu(0, static_cast<uint32_t>(topo.gpuCount() - 1));
      std::uniform_int_distribution<int> tc(0, 6), qp(0, 15);
      std::set<std::set<PortId>> distinct;
      int interHost = 0;
      std::vector<uint64_t> before(topo.portCount());
      for (int i = 0; i < 400; ++i) {
        const uint32_t src = gpu(rng), dst = gpu(rng);
        TransferRequest r =
            transfer(src, dst, frame, static_cast<uint64_t>(i), static_cast<uint16_t>(qp(rng)));
        r.trafficClass = static_cast<uint8_t>(tc(rng));
        const auto hops = fb.fabric.pathOf(r);
        if (topo.hostOfGpu(src) == topo.hostOfGpu(dst)) {
          // NVLink (NvlinkModel, as on the packet backend): no fabric ports.
          EXPECT_TRUE(hops.empty());
          continue;
        }
        ++interHost;
        for (PortId p = 0; p < topo.portCount(); ++p) before[p] = pb.fabric.port(p).wireBytesSent();
        DeliveryLog log;
        pb.fabric.send(r, &log);
        pb.sim.run();
        ASSERT_EQ(log.at.count(r.tag), 1u);
        std::set<PortId> crossed, routed;
        for (PortId p = 0; p < topo.portCount(); ++p)
          if (pb.fabric.port(p).wireBytesSent() - before[p] >= static_cast<uint64_t>(frame))
            crossed.insert(p);
        for (const auto& h : hops) {
          routed.insert(h.resource);
          EXPECT_EQ(h.weight, 1.0f);
        }
        EXPECT_EQ(routed, crossed) << src << " -> " << dst << " qp " << r.qp << " tc " << int(r.trafficClass);
        distinct.insert(crossed);
      }
      EXPECT_GT(interHost, 250);
      // The hash really spreads paths: many more distinct paths than one per 20 transfers (the
      // small rail-optimized case has 136 in all, the others several hundred).
      EXPECT_GT(distinct.size(), static_cast<size_t>(interHost / 20));
    }
  }
}

TEST(FlowBackend, FlowletAvoidsACollisionEcmpMakesAndAdaptiveSplitsEvenly) {
  TopologySpec s = leafSpineSpec(2, 4, 4);
  const Bytes bytes = 1 << 20;
  const double fluid = static_cast<double>(bytes) / payloadRate(s, BitRate::gbps(100));
  // Two transfers from different hosts of leaf 0 to different hosts of leaf 1 whose ECMP hash
  // puts them on the same uplink (and so the same spine and downlink).
  FlowBench probe(s);
  const Topology& topo = *probe.topo;
  std::vector<uint32_t> left, right;
  for (uint32_t g = 0; g < topo.gpuCount(); ++g)
    (topo.attachedSwitch(topo.nicOfGpu(g)) == topo.attachedSwitch(topo.nicOfGpu(0)) ? left : right)
        .push_back(g);
  ASSERT_EQ(left.size(), 4u);
  ASSERT_EQ(right.size(), 4u);
  TransferRequest a = transfer(left[0], right[0], bytes, 1), b;
  const auto pathA = probe.fabric.pathOf(a);
  bool found = false;
  for (uint16_t qp = 0; qp < 64 && !found; ++qp) {
    b = transfer(left[1], right[1], bytes, 2, qp);
    found = probe.fabric.pathOf(b)[1].resource == pathA[1].resource;
  }
  ASSERT_TRUE(found) << "no colliding queue pair in 64";

  // ECMP: they share the uplink, each at half rate.
  {
    FlowBench fb(s);
    DeliveryLog log;
    fb.fabric.send(a, &log);
    fb.fabric.send(b, &log);
    fb.sim.run();
    for (uint64_t t : {1, 2}) {
      const double fluidPart = static_cast<double>((log.at[t] - fb.fabric.pathLatency(0, right[0])).picos());
      EXPECT_NEAR(fluidPart / (2 * fluid), 1.0, 1e-6) << "ecmp transfer " << t;
    }
  }
  // Flowlet (one flowlet per transfer, placed on the least-loaded member): the second transfer
  // sees the first's load on its uplink and takes another spine; both run at full rate.
  {
    s.routing.algorithm = "flowlet";
    FlowBench fb(s);
    const auto placedA = fb.fabric.pathOf(a);  // the path send() gives the first transfer
    DeliveryLog log;
    fb.fabric.send(a, &log);
    EXPECT_EQ(fb.fabric.solver().load(placedA[1].resource), 1.0);
    const auto pathB = fb.fabric.pathOf(b);
    EXPECT_NE(pathB[1].resource, placedA[1].resource);
    EXPECT_NE(topo.peerNode(pathB[1].resource), topo.peerNode(placedA[1].resource));  // another spine
    fb.fabric.send(b, &log);
    fb.sim.run();
    for (uint64_t t : {1, 2}) {
      const double fluidPart = static_cast<double>((log.at[t] - fb.fabric.pathLatency(0, right[0])).picos());
      EXPECT_NEAR(fluidPart / fluid, 1.0, 1e-6) << "flowlet transfer " << t;
    }
  }
  // Spray, and adaptive (per packet: in fluid form the same even split): each of the 4 uplinks
  // and each spine's downlink carries a quarter of each flow; the NIC ports and the last hop
  // carry all of it. Both run at full rate.
  for (const char* algo : {"spray", "adaptive"}) {
    SCOPED_TRACE(algo);
    s.routing.algorithm = algo;
    FlowBench fb(s);
    const auto hops = fb.fabric.pathOf(a);
    ASSERT_EQ(hops.size(), 2u + 4u + 4u);
    int quarter = 0, whole = 0;
    for (const auto& h : hops) {
      if (h.weight == 1.0f)
        ++whole;
      else if (h.weight == 0.25f)
        ++quarter;
      else
        ADD_FAILURE() << "port " << h.resource << " weight " << h.weight;
    }
    EXPECT_EQ(whole, 2);
    EXPECT_EQ(quarter, 8);
    const PortId leafUp = pathA[1].resource;
    for (uint32_t k = 0; k < topo.degree(topo.portNode(leafUp)); ++k) {
      const PortId p = topo.port(topo.portNode(leafUp), k);
      if (topo.isHost(topo.peerNode(p))) continue;
      bool inPath = false;
      for (const auto& h : hops)
        if (h.resource == p) inPath = h.weight == 0.25f;
      EXPECT_TRUE(inPath) << "uplink " << p << " not sprayed with weight 1/4";
    }
    DeliveryLog log;
    fb.fabric.send(a, &log);
    fb.fabric.send(b, &log);
    fb.sim.run();
    for (uint64_t t : {1, 2}) {
      const double fluidPart = static_cast<double>((log.at[t] - fb.fabric.pathLatency(0, right[0])).picos());
      EXPECT_NEAR(fluidPart / fluid, 1.0, 1e-6) << "sprayed transfer " << t;
    }
  }
  // Spray with two links per spine: 8 uplinks of weight 1/8, each spine's two downlinks 1/8.
  {
    s.leafSpine.linksPerSpine = 2;
    FlowBench fb(s);
    const auto hops = fb.fabric.pathOf(a);
    ASSERT_EQ(hops.size(), 2u + 8u + 8u);
    int eighth = 0;
    for (const auto& h : hops) eighth += h.weight == 0.125f;
    EXPECT_EQ(eighth, 16);
  }
}

TEST(FlowBackend, AQueuePairKeepsItsFlowletUntilItIdlesLongerThanTheGap) {
  // Leaf-spine 2 x 4 x 4: transfers from leaf 0 to leaf 1 choose among 4 uplinks.
  TopologySpec s = leafSpineSpec(2, 4, 4);
  s.routing.algorithm = "flowlet";
  const Bytes bytes = 1 << 20;
  for (const Time gap : {Time::ms(1), Time::ps(1)}) {
    SCOPED_TRACE(gap.picos());
    s.routing.flowletGap = gap;
    FlowBench fb(s);
    const Topology& topo = *fb.topo;
    std::vector<uint32_t> left, right;
    for (uint32_t g = 0; g < topo.gpuCount(); ++g)
      (topo.attachedSwitch(topo.nicOfGpu(g)) == topo.attachedSwitch(topo.nicOfGpu(0)) ? left : right)
          .push_back(g);
    DeliveryLog log;
    const TransferRequest a = transfer(left[0], right[0], bytes, 1);
    fb.fabric.send(a, &log);
    const PortId up = fb.fabric.pathOf(a)[1].resource;  // a is in flight: its flowlet's path
    EXPECT_EQ(fb.fabric.solver().load(up), 1.0);
    // The same queue pair while a is in flight continues a's flowlet, on the loaded uplink;
    // another queue pair of the same host is placed on an idle one.
    EXPECT_EQ(fb.fabric.pathOf(transfer(left[0], right[0], bytes, 2))[1].resource, up);
    EXPECT_NE(fb.fabric.pathOf(transfer(left[0], right[0], bytes, 3, 1))[1].resource, up);
    fb.sim.run();
    ASSERT_EQ(log.at.count(1), 1u);
    // Idle now. A transfer of another host whose placement lands on a's uplink loads it.
    TransferRequest b;
    bool found = false;
    for (uint16_t qp = 0; qp < 64 && !found; ++qp) {
      b = transfer(left[1], right[1], bytes, 4, qp);
      found = fb.fabric.pathOf(b)[1].resource == up;
    }
    ASSERT_TRUE(found);
    fb.fabric.send(b, &log);
    // a's queue pair again, some microseconds after its last byte: within a 1 ms gap it is still
    // a's flowlet, on the uplink b now shares; past a 1 ps gap a new flowlet, on an idle one.
    const PortId again = fb.fabric.pathOf(transfer(left[0], right[0], bytes, 5))[1].resource;
    if (gap == Time::ms(1))
      EXPECT_EQ(again, up);
    else
      EXPECT_NE(again, up);
  }
}

TEST(FlowBackend, SameRunTwiceGivesIdenticalRecords) {
  for (const char* algo : {"ecmp", "adaptive", "spray", "flowlet"}) {
    SCOPED_TRACE(algo);
    TopologySpec s;
    s.kind = TopologyKind::FatTree;
    s.fatTree = {8, 8, 4};
    s.routing.algorithm = algo;
    auto once = [&](uint64_t seed) {
      FlowBench fb(s, seed);
      WorkloadSpec w;
      w.name = "perm";
      w.pattern.messageSize = 1'000'000;
      w.pattern.repetitions = 3;
      w.pattern.qpsPerPair = 2;
      PatternWorkload job(fb.sim, fb.fabric, w, fb.topo->gpuCount());
      job.start();
      fb.sim.run();
      EXPECT_TRUE(job.finished());
      return std::make_pair(fb.fabric.flowRecords(), fb.sim.eventsProcessed());
    };
    const auto [a, ea] = once(4);
    const auto [b, eb] = once(4);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.size(), 128u * 3);
    EXPECT_EQ(ea, eb);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].srcGpu, b[i].srcGpu) << i;
      EXPECT_EQ(a[i].dstGpu, b[i].dstGpu) << i;
      EXPECT_EQ(a[i].bytes, b[i].bytes) << i;
      EXPECT_EQ(a[i].start, b[i].start) << i;
      EXPECT_EQ(a[i].finish, b[i].finish) << i;
      EXPECT_EQ(a[i].ideal, b[i].ideal) << i;
      EXPECT_TRUE(a[i].done()) << i;
      EXPECT_GE(a[i].fct(), a[i].ideal - 4_ps) << i;  // never faster than alone
    }
  }
}
