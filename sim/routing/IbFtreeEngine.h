// IbFtreeEngine: OpenSM's fat-tree routing engine (opensm/osm_ucast_ftree.c; Zahavi et al.,
// "Optimized InfiniBand fat-tree routing for shift all-to-all communication patterns", 2010),
// restated over up*/down* candidates.
//
// Models: destinations are routed one LID at a time in index order (NIC order, then LID offset).
// For each, a main path climbs from the destination's leaf: at every switch it takes the up link
// that already carries the fewest main-path destinations going down (ties: the lowest port), and
// the switch above gets the down route to it; so a leaf's up links share its destinations evenly,
// as do the links above, and every destination has one top switch. Every other switch then gets
// its route, roots first: a switch that reaches the destination going down takes a down port
// (toward the main path if it can), any other goes up, preferring an up port whose switch already
// leads to the main path (so all traffic to a destination converges on its top switch, as
// OpenSM's "route upgoing by going down" sets it), and among equals the port with the fewest
// routes so far. On a full fat-tree this gives D-mod-K's tables (each leaf's NICs spread over its
// up ports in order).
// Unlike OpenSM (which falls back to min-hop routing when LMC > 0), each LID of a port is routed
// as its own destination, so the LIDs of a port take different up links; and after a failure the
// same rules run on the live links instead of the topology validation failing over to min-hop.
// Leaves out: compute-node/IO-node lists, reverse hops, the remote switch's load as a tie-break,
// routes to switch LIDs.
// Units: LIDs, route counts.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/routing/IbLft.h"
#include "sim/routing/IbUpDownPaths.h"

namespace fabricsim {

class IbFtreeEngine {
 public:
  explicit IbFtreeEngine(const Topology& topo);
  /// Fills the entries for `lid` of every switch of the plane of paths.leaf() but the leaf.
  void route(const IbUpDownPaths& paths, uint32_t lid, IbLft& lft);

 private:
  const Topology& topo_;
  std::vector<uint32_t> mainRoutes_;  // per up port: main-path destinations routed down its link
  std::vector<uint32_t> routes_;      // per port: other routes assigned to it
  std::vector<uint32_t> onMain_;      // per node: the stamp of the LID whose main path it is on
  std::vector<uint32_t> leads_;       // per node: the stamp of the LID whose main path it leads to
  uint32_t stamp_ = 0;
};

}  // namespace fabricsim
