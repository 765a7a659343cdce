// A forwarding loop (two switches whose tables point at each other, as a control plane in the
// middle of a change can leave them) must not keep packets circulating: each switch hop takes
// one unit of the packet's TTL and a packet with none left is dropped and counted (issue 17).
#include <gtest/gtest.h>

#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {

struct Sink : TransferObserver {
  int delivered = 0;
  void onTransferDelivered(uint64_t, Time) override { ++delivered; }
};

}  // namespace

TEST(ForwardingLoop, LoopingPacketsExpireAfterTheirHopBudget) {
  TopologySpec s;
  s.kind = TopologyKind::LeafSpine;
  s.leafSpine = {2, 2, 1, 1};  // host-0 under leaf-0, host-1 under leaf-1, spines 0 and 1
  s.links.hostSpeed = s.links.fabricSpeed = BitRate::gbps(100);
  s.links.latency = 1_us;
  s.links.mtu = 4000;
  s.sw.pfc.enabled = false;
  // A packet's 64 hops take about 64 x (1 us + 0.32 us) = 85 us: an RTO of 200 us lets every
  // copy expire before the next is sent and before the connection gives up (the run then stops).
  s.nic.retransmitTimeout = 200_us;
  s.nic.rtoBackoff = 1.0;
  s.nic.retryLimit = 2;
  const auto topo = buildTopology(s);
  Simulator sim(1);
  EcmpFib fib(*topo, 1);
  const EcmpFib intact(*topo, 1);  // ideal times come from the intact fabric's tables
  const NodeId leaf0 = topo->findNode("leaf-0"), leaf1 = topo->findNode("leaf-1");
  const NodeId spine0 = topo->findNode("spine-0");
  auto portTo = [&](NodeId from, NodeId to) {
    for (uint32_t p = 0; p < topo->degree(from); ++p)
      if (topo->peerNode(topo->port(from, p)) == to) return topo->port(from, p);
    return kInvalid;
  };
  // leaf-1 sends traffic for leaf-0 to spine-0, and spine-0 sends it back to leaf-1.
  const PortId up = portTo(leaf1, spine0), back = portTo(spine0, leaf1);
  fib.setRoute(leaf1, leaf0, std::vector<PortId>{up});
  fib.setRoute(spine0, leaf0, std::vector<PortId>{back});
  PacketFabric fabric(sim, *topo, s, fib);
  fabric.setReferenceTables(intact);
  Sink sink;
  TransferRequest r;
  r.srcGpu = topo->gpusPerHost();  // a GPU of host-1
  r.dstGpu = 0;                    // on host-0
  r.bytes = 3 * 4000;              // three full packets
  fabric.send(r, &sink);
  sim.run();  // must end: without a hop limit the first packet would circulate forever
  const PacketCounters& c = fabric.counters();
  EXPECT_EQ(sink.delivered, 0);
  // Nothing is delivered, so nothing is acknowledged: every packet the NIC injected is data, sent
  // three times (the first try and two retries after timeouts), and every one of them expires.
  EXPECT_EQ(c.packetsSent, 3u * 3u);
  EXPECT_EQ(c.ttlExpiredPackets, c.packetsSent);
  EXPECT_EQ(c.blackholedPackets, 0u);
  // A packet crosses its NIC link, then is forwarded by 63 switches (TTL 64 -> 1) and dropped by
  // the 64th: 64 link transmissions each.
  EXPECT_EQ(c.linkTransmissions, 64u * c.packetsSent);
  // The connection gives up after its retries, as a real NIC would.
  ASSERT_EQ(fabric.failures().size(), 1u);
  EXPECT_EQ(fabric.failures()[0].kind, TransferFailure::Kind::RetryExceeded);
}
