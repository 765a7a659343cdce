// TopologySize: the counts of a fabric from its spec alone, checked against the fabric the
// builder wires (an independent count of what exists) and a hand-counted fat-tree.
#include "sim/config/TopologySize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/TopologyLoader.h"
#include "sim/topology/TopologyBuilder.h"

namespace fabricsim {
namespace {

void expectSizeOfBuiltFabric(const TopologySpec& spec, const std::string& what) {
  const TopologySize z = topologySize(spec);
  const auto topo = buildTopology(spec);
  int64_t leaves = 0;
  for (size_t n = topo->hostCount(); n < topo->nodeCount(); ++n)
    if (topo->node(static_cast<NodeId>(n)).tier == 1) ++leaves;
  EXPECT_EQ(z.hosts, static_cast<int64_t>(topo->hostCount())) << what;
  EXPECT_EQ(z.gpus, static_cast<int64_t>(topo->gpuCount())) << what;
  EXPECT_EQ(z.switches, static_cast<int64_t>(topo->switchCount())) << what;
  EXPECT_EQ(z.links, static_cast<int64_t>(topo->linkCount())) << what;
  EXPECT_EQ(z.leaves, leaves) << what;
}

TEST(TopologySize, AFourAryFatTreeCountedByHand) {
  // k = 4: 4 pods of 2 edge and 2 aggregation switches, 4 cores; 2 hosts per edge: 16 hosts,
  // 16 host cables, 16 edge-aggregation and 16 aggregation-core cables.
  const TopologySpec spec = parseTopologyYaml("topology: {kind: fat-tree, radix: 4}\n", "t.yaml");
  const TopologySize z = topologySize(spec);
  EXPECT_EQ(z.hosts, 16);
  EXPECT_EQ(z.switches, 20);
  EXPECT_EQ(z.leaves, 8);
  EXPECT_EQ(z.links, 48);
  EXPECT_EQ(z.switchTiers, 3);
}

TEST(TopologySize, MatchesTheBuiltFabricOfEveryShape) {
  const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/";
  for (const char* f : {"default.yaml", "fat-tree-k8-100g.yaml", "fat-tree-k16-100g.yaml",
                        "leafspine-16.yaml", "leafspine-64.yaml", "leafspine-128-oversub.yaml",
                        "rail-optimized-256.yaml", "rail-optimized-1k.yaml"})
    expectSizeOfBuiltFabric(loadTopologyFile(dir + f), f);
  // The variants the files do not have: partial fat-trees, oversubscribed edges, several links
  // per spine, several NICs per host, rails sharing their top tier, rails of fat-trees.
  const std::vector<std::vector<std::string>> variants{
      {"topology.pods=3"},
      {"topology.hosts_per_edge=6"},
      {"hosts.gpus_per_host=8", "hosts.nics_per_host=2"},
  };
  for (const auto& sets : variants)
    expectSizeOfBuiltFabric(loadTopologyFile(dir + "fat-tree-k8-100g.yaml", sets), sets[0]);
  expectSizeOfBuiltFabric(loadTopologyFile(dir + "leafspine-16.yaml", {"topology.links_per_spine=3"}),
                          "links_per_spine=3");
  expectSizeOfBuiltFabric(loadTopologyFile(dir + "rail-optimized-256.yaml", {"topology.shared_spines=true"}),
                          "shared spines");
  expectSizeOfBuiltFabric(
      loadTopologyFile(dir + "rail-optimized-256.yaml",
                       {"topology={kind: rail-optimized, rails: 4, rail: {kind: fat-tree, radix: 8}}",
                        "hosts.gpus_per_host=4", "hosts.nics_per_host=4"}),
      "rails of fat-trees");
  expectSizeOfBuiltFabric(
      loadTopologyFile(
          dir + "rail-optimized-256.yaml",
          {"topology={kind: rail-optimized, rails: 4, shared_spines: true, rail: {kind: fat-tree, "
           "radix: 8}}",
           "hosts.gpus_per_host=4", "hosts.nics_per_host=4"}),
      "rails of fat-trees sharing cores");
}

}  // namespace
}  // namespace fabricsim
