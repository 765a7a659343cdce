// LeafSpineBuilder: two-tier leaf-spine (folded Clos) fabrics.
//
// Models: `leaves` leaf switches (tier 1) `leaf-<i>`, `spines` spine switches (tier 2)
// `spine-<j>`, every leaf cabled to every spine with links_per_spine parallel links (tier 1),
// and host h cabled to leaf h / hosts_per_leaf with one link per NIC (tier 0, added in NIC
// order). A plane can be prefixed (`rail2-leaf-0`) and can reuse a shared set of spines,
// which is how RailOptimizedBuilder builds its rails.
// Leaves out: leaf pairs (MLAG), multi-homed hosts across leaves, spine tiers above two.
// Units: BitRate bit/s, Time ps.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class LeafSpineBuilder {
 public:
  /// Builds a whole leaf-spine topology from spec.leafSpine.
  static std::unique_ptr<Topology> build(const TopologySpec& spec);

  /// Adds the spines of one plane (tier 2) and returns their node ids.
  static std::vector<NodeId> addSpines(Topology& topo, const LeafSpineShape& shape, const std::string& prefix,
                                       int32_t plane);

  /// Adds one plane over the topology's hosts (already added): its leaves, its spines unless
  /// `sharedSpines` is given, `nicsPerHost` links from every host to its leaf (host-major,
  /// NIC-minor) and the leaf-spine links. Switch names get `prefix`; switches get `plane`.
  static void addPlane(Topology& topo, const TopologySpec& spec, const LeafSpineShape& shape,
                       const std::string& prefix, int32_t plane, int nicsPerHost,
                       const std::vector<NodeId>* sharedSpines);
};

}  // namespace fabricsim
