// IbUpDnEngine: OpenSM's up/down routing engine (opensm/osm_ucast_updn.c; doc/current-routing.txt
// "UPDN"), for fabrics that are not fat-trees.
//
// Models: on the ranks and legal up*/down* paths of IbUpDownPaths, each switch sends a LID over
// the candidate port (a live port on a legal path of fewest hops) that carries the fewest LIDs so
// far (ties: the lowest port), as OpenSM balances min-hop choices by per-port route counters. With
// LMC > 0, the LIDs of one port prefer candidates toward a switch that the port's earlier LIDs
// did not use at this switch (OpenSM prefers a different remote node for each LID of a group).
// Leaves out: root auto-detection (roots are the top tier), GUID-file roots, routes to switch LIDs.
// Units: LIDs, route counts.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/routing/IbLft.h"
#include "sim/routing/IbUpDownPaths.h"

namespace fabricsim {

class IbUpDnEngine {
 public:
  explicit IbUpDnEngine(const Topology& topo);
  /// Fills the entries for `lid` of every switch of the plane of paths.leaf() but the leaf; `first`
  /// is the base LID of the port `lid` belongs to (its earlier LIDs are first..lid-1).
  void route(const IbUpDownPaths& paths, uint32_t lid, uint32_t first, IbLft& lft);

 private:
  const Topology& topo_;
  std::vector<uint32_t> routes_;  // per port
};

}  // namespace fabricsim
