// FatTreeBuilder: three-tier k-ary fat-trees (Al-Fares et al., SIGCOMM 2008).
//
// Models: `pods` pods (default k) of k/2 edge switches `edge-<pod>-<i>` (tier 1) and k/2
// aggregation switches `agg-<pod>-<i>` (tier 2), every edge cabled to every agg of its pod
// (tier-1 links), and (k/2)^2 core switches `core-<j>` (tier 3), aggregation switch i of each
// pod cabled to cores i*k/2 ... i*k/2+k/2-1 (tier-2 links). Edge i of pod p serves hosts
// (p*k/2 + i)*hosts_per_edge ... +hosts_per_edge-1, each with one link per NIC (tier 0, in
// NIC order). Fewer pods than k give a partial tree with the same wiring; the core count
// stays (k/2)^2. A plane can be prefixed (`rail3-edge-0-1`) and reuse shared cores.
// Leaves out: more than three tiers, oversubscribed agg-core wiring.
// Units: BitRate bit/s, Time ps.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class FatTreeBuilder {
 public:
  /// Builds a whole fat-tree topology from spec.fatTree.
  static std::unique_ptr<Topology> build(const TopologySpec& spec);

  /// Adds the (k/2)^2 cores of one plane (tier 3) and returns their node ids.
  static std::vector<NodeId> addCores(Topology& topo, const FatTreeShape& shape, const std::string& prefix,
                                      int32_t plane);

  /// Adds one plane over the topology's hosts (already added): edges and aggs of every pod,
  /// cores unless `sharedCores` is given, `nicsPerHost` links per host to its edge
  /// (host-major, NIC-minor), edge-agg and agg-core links.
  static void addPlane(Topology& topo, const TopologySpec& spec, const FatTreeShape& shape,
                       const std::string& prefix, int32_t plane, int nicsPerHost,
                       const std::vector<NodeId>* sharedCores);
};

}  // namespace fabricsim
