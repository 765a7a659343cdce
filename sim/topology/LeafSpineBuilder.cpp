#include "sim/topology/LeafSpineBuilder.h"

#include "sim/core/Error.h"
#include "sim/topology/TopologyBuilder.h"

namespace fabricsim {

std::unique_ptr<Topology> LeafSpineBuilder::build(const TopologySpec& spec) {
  auto topo = std::make_unique<Topology>(spec.hosts.gpusPerHost, spec.hosts.nicsPerHost);
  addHosts(*topo, hostCountOf(spec));
  addPlane(*topo, spec, spec.leafSpine, "", -1, spec.hosts.nicsPerHost, nullptr);
  topo->finalize();
  return topo;
}

std::vector<NodeId> LeafSpineBuilder::addSpines(Topology& topo, const LeafSpineShape& shape,
                                                const std::string& prefix, int32_t plane) {
  std::vector<NodeId> spines;
  spines.reserve(static_cast<size_t>(shape.spines));
  for (int j = 0; j < shape.spines; ++j) spines.push_back(topo.addSwitch(switchName(prefix, "spine", j), 2, plane));
  return spines;
}

void LeafSpineBuilder::addPlane(Topology& topo, const TopologySpec& spec, const LeafSpineShape& shape,
                                const std::string& prefix, int32_t plane, int nicsPerHost,
                                const std::vector<NodeId>* sharedSpines) {
  SIM_CHECK(shape.leaves > 0 && shape.spines > 0 && shape.hostsPerLeaf > 0 && shape.linksPerSpine > 0,
            "leaf-spine sizes must be positive");
  const size_t hosts = static_cast<size_t>(shape.leaves) * shape.hostsPerLeaf;
  SIM_CHECK(hosts == topo.hostCount(), "leaf-spine plane does not match the host count");
  std::vector<NodeId> leaves;
  leaves.reserve(static_cast<size_t>(shape.leaves));
  for (int i = 0; i < shape.leaves; ++i) leaves.push_back(topo.addSwitch(switchName(prefix, "leaf", i), 1, plane));
  std::vector<NodeId> ownSpines;
  if (!sharedSpines) ownSpines = addSpines(topo, shape, prefix, plane);
  const std::vector<NodeId>& spines = sharedSpines ? *sharedSpines : ownSpines;

  const BitRate hostRate = spec.tierSpeed(0);
  const BitRate fabricRate = spec.tierSpeed(1);
  const Time latency = spec.links.latency;
  for (size_t h = 0; h < hosts; ++h) {
    const NodeId leaf = leaves[h / static_cast<size_t>(shape.hostsPerLeaf)];
    for (int r = 0; r < nicsPerHost; ++r) topo.addLink(static_cast<NodeId>(h), leaf, hostRate, latency, 0);
  }
  for (NodeId leaf : leaves)
    for (NodeId spine : spines)
      for (int l = 0; l < shape.linksPerSpine; ++l) topo.addLink(leaf, spine, fabricRate, latency, 1);
}

}  // namespace fabricsim
