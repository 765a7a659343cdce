// Topology specs of the standard shapes for unit tests that build fabrics in memory.
#pragma once

#include "sim/config/TopologySpec.h"

namespace fabricsim::testsupport {

/// A leaf-spine of `leaves` x `spines` (one link per leaf-spine pair), `hostsPerLeaf` hosts each.
inline TopologySpec leafSpine(int leaves, int spines, int hostsPerLeaf) {
  TopologySpec s;
  s.name = "ls";
  s.kind = TopologyKind::LeafSpine;
  s.leafSpine = LeafSpineShape{leaves, spines, hostsPerLeaf, 1};
  return s;
}

/// The k-ary fat-tree (k pods, k^2/4 cores, k/2 hosts per edge switch).
inline TopologySpec fatTree(int k) {
  TopologySpec s;
  s.name = "ft";
  s.kind = TopologyKind::FatTree;
  s.fatTree = FatTreeShape{k, k, k / 2};
  return s;
}

}  // namespace fabricsim::testsupport
