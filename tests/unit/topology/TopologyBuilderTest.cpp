// Builders: closed-form counts, stable names, NIC/port wiring, and the example files.
#include "sim/topology/TopologyBuilder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "sim/config/TopologyLoader.h"
#include "sim/topology/TopologySummary.h"

namespace fabricsim {
namespace {

TopologySpec fatTreeSpec(int k) {
  return parseTopologyYaml("topology: {kind: fat-tree, radix: " + std::to_string(k) + "}\n", "ft.yaml");
}

void expectPortsConsistent(const Topology& t) {
  for (PortId p = 0; p < t.portCount(); ++p) {
    ASSERT_EQ(t.peerPort(t.peerPort(p)), p);
    ASSERT_NE(t.peerNode(p), t.portNode(p));
    ASSERT_EQ(t.portLink(p), t.portLink(t.peerPort(p)));
  }
  for (NodeId h = 0; h < t.hostCount(); ++h) {
    ASSERT_EQ(t.degree(h), static_cast<uint32_t>(t.nicsPerHost()));
    for (int r = 0; r < t.nicsPerHost(); ++r) {
      const uint32_t nic = h * t.nicsPerHost() + r;
      ASSERT_EQ(t.nicPort(nic), t.port(h, r));
      ASSERT_EQ(t.portLocal(t.nicPort(nic)), static_cast<uint32_t>(r));
      ASSERT_FALSE(t.isHost(t.attachedSwitch(nic)));
    }
  }
}

TEST(TopologyBuilderTest, FatTreeClosedFormCounts) {
  for (int k : {4, 8, 16}) {
    const auto t = buildTopology(fatTreeSpec(k));
    EXPECT_EQ(t->hostCount(), static_cast<size_t>(k * k * k / 4)) << k;
    EXPECT_EQ(t->switchCount(), static_cast<size_t>(5 * k * k / 4)) << k;
    EXPECT_EQ(t->linkCount(), static_cast<size_t>(3 * k * k * k / 4)) << k;
    EXPECT_EQ(t->tiers(), 3);
    for (NodeId n = static_cast<NodeId>(t->hostCount()); n < t->nodeCount(); ++n)
      EXPECT_EQ(t->degree(n), static_cast<uint32_t>(k)) << t->node(n).name;
    const TopologySummary s = summarizeTopology(fatTreeSpec(k), *t);
    EXPECT_EQ(s.diameter, 6);
    EXPECT_DOUBLE_EQ(s.bisectionBps, k * k * k / 8 * 100e9);
    ASSERT_EQ(s.oversubscription.size(), 2u);
    EXPECT_EQ(s.oversubscription[0].text, "1:1");
    expectPortsConsistent(*t);
  }
}

TEST(TopologyBuilderTest, FatTreeNamesAndWiring) {
  const auto t = buildTopology(fatTreeSpec(4));
  const NodeId agg = t->findNode("agg-1-1");
  ASSERT_NE(agg, kInvalid);
  EXPECT_EQ(t->node(agg).tier, 2);
  EXPECT_EQ(t->node(agg).pod, 1);
  std::set<std::string> peers;
  for (uint32_t p = 0; p < t->degree(agg); ++p) peers.insert(t->node(t->peerNode(t->port(agg, p))).name);
  EXPECT_EQ(peers, (std::set<std::string>{"edge-1-0", "edge-1-1", "core-2", "core-3"}));
  // Edge i of pod p serves hosts (p*k/2 + i) * hostsPerEdge ...
  EXPECT_EQ(t->node(t->attachedSwitch(5)).name, "edge-1-0");
  EXPECT_EQ(t->node(t->attachedSwitch(15)).name, "edge-3-1");
  EXPECT_EQ(t->node(0).name, "host-0");
}

TEST(TopologyBuilderTest, PartialFatTree) {
  const auto spec = parseTopologyYaml("topology: {kind: fat-tree, radix: 8, pods: 3, hosts_per_edge: 8}\n", "p.yaml");
  const auto t = buildTopology(spec);
  EXPECT_EQ(t->hostCount(), 3u * 4 * 8);
  EXPECT_EQ(t->switchCount(), 3u * 8 + 16);
  const TopologySummary s = summarizeTopology(spec, *t);
  EXPECT_DOUBLE_EQ(s.oversubscription[0].ratio, 2.0);
  EXPECT_EQ(s.oversubscription[0].text, "2:1");
}

TEST(TopologyBuilderTest, LeafSpineCountsAndOversubscription) {
  const auto spec = parseTopologyYaml(
      "topology: {kind: leaf-spine, leaves: 6, spines: 3, hosts_per_leaf: 12, links_per_spine: 2}\n"
      "hosts: {gpus_per_host: 4, nics_per_host: 2}\n"
      "links: {host_speed: 100Gbps, fabric_speed: 200Gbps}\n",
      "ls.yaml");
  const auto t = buildTopology(spec);
  EXPECT_EQ(t->hostCount(), 72u);
  EXPECT_EQ(t->gpuCount(), 288u);
  EXPECT_EQ(t->nicCount(), 144u);
  EXPECT_EQ(t->switchCount(), 9u);
  EXPECT_EQ(t->linkCount(), 144u + 6 * 3 * 2);
  EXPECT_EQ(t->node(t->findNode("spine-2")).tier, 2);
  EXPECT_EQ(t->node(t->attachedSwitch(2 * 12 + 1)).name, "leaf-1");  // host 12, NIC 1
  const TopologySummary s = summarizeTopology(spec, *t);
  // Per leaf: 24 NICs x 100G down, 6 x 200G up -> 2:1.
  ASSERT_EQ(s.oversubscription.size(), 1u);
  EXPECT_DOUBLE_EQ(s.oversubscription[0].ratio, 2.0);
  EXPECT_EQ(s.oversubscription[0].text, "2:1");
  EXPECT_DOUBLE_EQ(s.bisectionBps, 36 * 200e9 / 2);
  EXPECT_EQ(s.diameter, 4);
  expectPortsConsistent(*t);
}

TEST(TopologyBuilderTest, RailOptimizedNicsAttachToTheirPlane) {
  for (const char* railShape : {"{kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 4}", "{kind: fat-tree, radix: 4}"}) {
    for (const char* shared : {"false", "true"}) {
      const auto spec = parseTopologyYaml(std::string("topology: {kind: rail-optimized, rails: 4, rail: ") + railShape +
                                              ", shared_spines: " + shared + "}\n",
                                          "r.yaml");
      const auto t = buildTopology(spec);
      EXPECT_EQ(t->nicsPerHost(), 4);
      for (uint32_t nic = 0; nic < t->nicCount(); ++nic) {
        const NodeInfo& sw = t->node(t->attachedSwitch(nic));
        EXPECT_EQ(sw.plane, static_cast<int32_t>(t->localNic(nic)));
        EXPECT_EQ(sw.name.rfind("rail" + std::to_string(t->localNic(nic)) + "-", 0), 0u) << sw.name;
      }
      const bool isShared = std::string(shared) == "true";
      for (NodeId n = static_cast<NodeId>(t->hostCount()); n < t->nodeCount(); ++n) {
        const NodeInfo& sw = t->node(n);
        const bool top = sw.tier == t->tiers();
        EXPECT_EQ(sw.plane < 0, isShared && top) << sw.name;
      }
      expectPortsConsistent(*t);
      const TopologySummary s = summarizeTopology(spec, *t);
      EXPECT_EQ(s.diameter, t->tiers() == 2 ? 4 : 6);
    }
  }
  const auto t = buildTopology(parseTopologyYaml(
      "topology: {kind: rail-optimized, rails: 2, rail: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2}}\n",
      "r.yaml"));
  EXPECT_NE(t->findNode("rail1-leaf-1"), kInvalid);
  EXPECT_NE(t->findNode("rail0-spine-0"), kInvalid);
  EXPECT_EQ(t->node(t->attachedSwitch(3 * 2 + 1)).name, "rail1-leaf-1");
}

TEST(TopologyBuilderTest, EveryExampleTopologyLoadsAndBuilds) {
  const std::filesystem::path dir = std::filesystem::path(FABRICSIM_SOURCE_DIR) / "topologies";
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    SCOPED_TRACE(e.path().string());
    const TopologySpec spec = loadTopologyFile(e.path().string());
    const auto t = buildTopology(spec);
    EXPECT_EQ(t->hostCount(), hostCountOf(spec));
    if (!spec.workload.empty()) {
      EXPECT_TRUE(std::filesystem::exists(spec.workload)) << spec.workload;
    }
    const TopologySummary s = summarizeTopology(spec, *t);
    EXPECT_GT(s.diameter, 0);
    if (spec.name == "rail-optimized-98k") {
      EXPECT_EQ(t->gpuCount(), 98'304u);
      EXPECT_EQ(t->switchCount(), 8u * (12 * 64 + 32 * 32));
    }
    if (spec.name == "leafspine-128-oversub") {
      EXPECT_EQ(s.oversubscription.at(0).text, "2:1");
    }
    if (spec.name == "leafspine-16") {
      EXPECT_EQ(t->gpuCount(), 16u);
    }
  }
  EXPECT_GE(files, 9);
}

}  // namespace
}  // namespace fabricsim
