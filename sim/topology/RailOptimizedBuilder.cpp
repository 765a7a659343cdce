#include "sim/topology/RailOptimizedBuilder.h"

#include "sim/core/Error.h"
#include "sim/topology/FatTreeBuilder.h"
#include "sim/topology/LeafSpineBuilder.h"
#include "sim/topology/TopologyBuilder.h"

namespace fabricsim {

std::unique_ptr<Topology> RailOptimizedBuilder::build(const TopologySpec& spec) {
  const RailShape& rail = spec.rail;
  SIM_CHECK(rail.rails >= 1 && spec.hosts.nicsPerHost == rail.rails, "a rail-optimized host has one NIC per rail");
  auto topo = std::make_unique<Topology>(spec.hosts.gpusPerHost, spec.hosts.nicsPerHost);
  addHosts(*topo, hostCountOf(spec));
  const bool leafSpine = rail.railKind == TopologyKind::LeafSpine;
  std::vector<NodeId> shared;
  if (rail.sharedSpines)
    shared = leafSpine ? LeafSpineBuilder::addSpines(*topo, rail.leafSpine, "", -1)
                       : FatTreeBuilder::addCores(*topo, rail.fatTree, "", -1);
  // Rail r adds one link per host; rails in order, so every host's links come in NIC order.
  for (int r = 0; r < rail.rails; ++r) {
    const std::string prefix = "rail" + std::to_string(r) + "-";
    const std::vector<NodeId>* top = rail.sharedSpines ? &shared : nullptr;
    if (leafSpine)
      LeafSpineBuilder::addPlane(*topo, spec, rail.leafSpine, prefix, r, 1, top);
    else
      FatTreeBuilder::addPlane(*topo, spec, rail.fatTree, prefix, r, 1, top);
  }
  topo->finalize();
  return topo;
}

}  // namespace fabricsim
