// IbDmodkEngine: D-mod-K routing of a fat-tree (Zahavi, Johnson, Kerbyson and Lang, "Optimized
// InfiniBand fat-tree routing for shift all-to-all communication patterns", CCPE 2010; Gomez et
// al., "Deterministic versus adaptive routing in fat-trees", IPDPS 2007).
//
// Models: destination D (the LID's index in its subnet: NIC index x 2^LMC + LID offset) is routed
// up from level l (leaves are level 0) on up port floor(D / (w_0 x ... x w_{l-1})) mod w_l, where
// w_i is the number of up ports of a level-i switch, taken in port order; down, a switch takes
// the unique down path toward D (among parallel links, link D mod their count). Every destination
// therefore has one top switch, and on a full fat-tree every shift permutation (dst = src + s mod
// N) puts at most one flow on each link. After a failure, where the D-mod-K port is down or no
// longer on a legal path of fewest hops, the next such up port in cyclic order is used.
// Refuses fabrics that are not a layered Clos whose switches of one tier all have the same number
// of up ports.
// Leaves out: port-group (parallel link) ordering by GUID, routes to switch LIDs.
// Units: LIDs, destination indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/routing/IbLft.h"
#include "sim/routing/IbUpDownPaths.h"

namespace fabricsim {

class IbDmodkEngine {
 public:
  /// What makes the fabric one D-mod-K cannot route, or "" if it can.
  static std::string check(const Topology& topo, const IbUpDownPaths& paths);

  IbDmodkEngine(const Topology& topo, const IbUpDownPaths& paths);
  /// Fills the entries for `lid` (destination index `d`) of every switch of the plane of
  /// paths.leaf() but the leaf itself.
  void route(const IbUpDownPaths& paths, uint32_t lid, uint64_t d, IbLft& lft) const;

 private:
  const Topology& topo_;
  std::vector<uint64_t> divisor_;  // per tier: product of the up-port counts of the tiers below
};

}  // namespace fabricsim
