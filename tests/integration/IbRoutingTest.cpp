// InfiniBand subnet-manager routing end to end: a run with a link failure and repair completes
// with every credit back and the SM's two sweeps reported; the packet and flow backends carry an
// IB queue pair over the same ports (the packet run's ports measured from the bytes they sent);
// bad routing input exits with status 2 and the file:line of the key.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "sim/config/TopologySpec.h"
#include "sim/flow/FlowFabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/runtime/Experiment.h"
#include "sim/topology/TopologyBuilder.h"
#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

using namespace fabricsim;

namespace {

// With LMC 1 some packets reach spine-0 for leaf-0 after the reroute and are black-holed there:
// their credits must come back too.
TEST(IbRouting, FailureAndRepairRerouteAndCompleteWithEveryCreditBack) {
  for (int lmc : {0, 1}) {
    RunOptions o;
    o.topologyPath = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/leafspine-64.yaml";
    o.workloadPaths = {std::string(FABRICSIM_SOURCE_DIR) + "/workloads/permutation-1mib.yaml"};
    o.progress = false;
    o.routing = "ib-sm";
    o.sets = {
        "links.technology=infiniband", "switch.credit_buffer=64KiB",
        "routing.ib_sm={reroute_delay: 100us, lmc: " + std::to_string(lmc) + "}",
        "failures=[{at: 20us, action: down, link: [leaf-0, spine-0]}, {at: 300us, action: up, link: [leaf-0, "
        "spine-0]}]"};
    Experiment e(o);
    e.run();
    ASSERT_FALSE(e.failed()) << "lmc " << lmc;
    const nlohmann::json r = e.results();
    const auto& sm = r["routing"]["ib_sm"];
    EXPECT_EQ(r["routing"]["algorithm"], "ib-sm");
    EXPECT_EQ(sm["engine"], "ftree");             // leaf-spine is a Clos: auto picks ftree
    EXPECT_EQ(sm["sweeps"].get<uint64_t>(), 2u);  // one after the failure, one after the repair
    EXPECT_NEAR(sm["last_sweep_s"].get<double>(), 400e-6, 1e-12);  // repair at 300 us + 100 us
    EXPECT_GT(r["routing"]["packets_lost_dead_links"].get<uint64_t>(), 0u) << "lmc " << lmc;
    EXPECT_EQ(r["network"]["goodput_bytes"].get<int64_t>(), 64LL * 1024 * 1024) << "lmc " << lmc;
    EXPECT_EQ(r["network"]["credits_outstanding_bytes"].get<int64_t>(), 0) << "lmc " << lmc;
    EXPECT_EQ(r["flows"]["count"].get<uint64_t>(), 64u);
  }
}

/// The data ports of one transfer (src GPU 0 -> dst GPU 15, QP `qp`) on each backend, k=4
/// fat-tree, LMC 1 (QPs 0 and 1 use the two LIDs of the destination).
std::set<PortId> packetPorts(const TopologySpec& spec, uint16_t qp) {
  const auto topo = buildTopology(spec);
  Simulator sim(1);
  EcmpFib fib(*topo, 1);
  PacketFabric fabric(sim, *topo, spec, fib);
  IbSubnetManager sm(sim, *topo, spec, &fib);
  fabric.setSubnetManager(sm);
  const Bytes bytes = 1 << 20;
  fabric.send(TransferRequest{0, 15, bytes, 0, qp, 1}, nullptr);
  sim.run();
  std::set<PortId> ports;
  // Data ports sent at least the payload; ports on the ACK path sent a few percent of it.
  for (PortId p = 0; p < topo->portCount(); ++p)
    if (fabric.port(p).wireBytesSent() >= static_cast<uint64_t>(bytes)) ports.insert(p);
  return ports;
}

std::set<PortId> flowPorts(const TopologySpec& spec, uint16_t qp) {
  const auto topo = buildTopology(spec);
  Simulator sim(1);
  EcmpFib fib(*topo, 1);
  FlowFabric fabric(sim, *topo, spec, fib);
  IbSubnetManager sm(sim, *topo, spec, &fib);
  fabric.setSubnetManager(sm);
  std::set<PortId> ports;
  for (const auto& h : fabric.pathOf(TransferRequest{0, 15, 1 << 20, 0, qp, 1}))
    if (h.weight == 1.0f) ports.insert(h.resource);  // the ACK share has a weight below 1
  return ports;
}

TEST(IbRouting, PacketAndFlowBackendsCarryAQueuePairOverTheSamePorts) {
  TopologySpec s;
  s.name = "k4";
  s.kind = TopologyKind::FatTree;
  s.fatTree = FatTreeShape{4, 4, 2};
  s.links.technology = "infiniband";
  s.nic.reorder = "tolerant";
  s.routing.algorithm = "ib-sm";
  s.routing.ibSm.lmc = 1;
  std::set<PortId> seen;
  for (uint16_t qp : {0, 1}) {
    const std::set<PortId> packet = packetPorts(s, qp), flow = flowPorts(s, qp);
    EXPECT_EQ(packet.size(), 6u);  // host-0 to host-15 crosses pods: NIC, edge, agg, core, agg, edge
    EXPECT_EQ(packet, flow) << "QP " << qp;
    seen.insert(packet.begin(), packet.end());
  }
  EXPECT_GT(seen.size(), 6u);  // the two LIDs take different paths
}

TEST(IbRouting, BadRoutingInputExitsWithStatusTwoAndTheLine) {
  testsupport::TempDir dir;
  const std::string path = dir.path() + "/ib.yaml";
  std::ofstream(path) << "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2}\n"
                         "links: {technology: infiniband}\n"
                         "routing:\n"
                         "  ib_sm: {lmc: 8}\n";
  const auto r = testsupport::runFabricsim("run '" + path + "' --quiet", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("ib.yaml:4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("routing.ib_sm.lmc"), std::string::npos) << r.out;
}

}  // namespace
