// RailOptimizedBuilder: rail-optimized GPU clusters (one network per NIC index).
//
// Models: hosts with R NICs; NIC r of every host is cabled to rail r, and each rail is its
// own leaf-spine or fat-tree whose switches are named with the prefix `rail<r>-` and carry
// plane r (host h attaches to rail r's leaf h / hosts_per_leaf, or to the matching fat-tree
// edge). With shared_spines, the top tier (spines, or fat-tree cores) is one set without a
// prefix and with plane -1, reached from every rail.
// Leaves out: NVLink between the GPUs of a host (a fluid model in the backends), rails of
// different shapes.
// Units: BitRate bit/s, Time ps.
#pragma once

#include <memory>

#include "sim/config/TopologySpec.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class RailOptimizedBuilder {
 public:
  /// Builds a whole rail-optimized topology from spec.rail.
  static std::unique_ptr<Topology> build(const TopologySpec& spec);
};

}  // namespace fabricsim
