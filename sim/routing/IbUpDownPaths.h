// IbUpDownPaths: the up*/down* paths an InfiniBand subnet manager may route over, toward one
// destination leaf switch at a time.
//
// Models: OpenSM's ranking (doc/current-routing.txt, "UPDN"): root switches (by default the
// highest tier of each plane) get rank 0 and the others their BFS distance from a root. A link
// goes "up" toward the lower rank (between equal ranks, toward the lower node id, as OpenSM breaks
// ties by GUID). A legal path goes up zero or more times and then only down, which keeps the
// channel-dependency graph acyclic (no credit loops). Toward a destination leaf, on the links that
// are up: a switch with a down-only path takes a shortest one (a destination table has no state, so
// a switch reached on the way down must not turn up again); any other switch goes up toward the
// fewest legal hops. candidates() are the ports that do so; the engines choose among them.
// Ranks are computed once on the whole fabric (a failed link does not re-rank).
// Leaves out: OpenSM's statistical root detection, DNUP ranking, routes to switch LIDs.
// Units: hops.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/topology/Topology.h"

namespace fabricsim {

class IbUpDownPaths {
 public:
  static constexpr uint8_t kUnreachable = 0xFF;

  explicit IbUpDownPaths(const Topology& topo);

  void setLinkUp(LinkId l, bool up) { linkUp_[l] = up; }
  bool linkUp(LinkId l) const { return linkUp_[l] != 0; }
  bool portLive(PortId p) const { return linkUp_[topo_.portLink(p)] != 0; }
  uint32_t rank(NodeId sw) const { return rank_[sw]; }
  /// Whether switch port `p` leads up (to a switch of lower rank, or equal rank and lower id).
  bool isUp(PortId p) const { return up_[p] != 0; }
  /// The up ports of switch `sw` in port order, live or not.
  std::span<const PortId> upPorts(NodeId sw) const {
    return {upPorts_.data() + upOffset_[sw], upOffset_[sw + 1] - upOffset_[sw]};
  }
  /// The switches of the plane of `sw`, roots first (rank, then node id): an up neighbour
  /// always comes before the switch.
  const std::vector<NodeId>& order(NodeId sw) const { return order_[plane_[sw]]; }
  /// True when the fabric is a layered Clos: switch links join adjacent tiers only, NICs attach
  /// to tier-1 switches only, and the top tier of each plane is its roots.
  bool isClos() const { return clos_; }

  /// Computes hops() and candidates() toward destination leaf `leaf` (its plane only).
  void computeFor(NodeId leaf);
  NodeId leaf() const { return leaf_; }
  /// Legal hops from `sw` to the leaf (kUnreachable: none over live links).
  uint8_t hops(NodeId sw) const { return hops_[sw]; }
  /// Whether `sw` reaches the leaf going down only.
  bool goesDown(NodeId sw) const { return down_[sw] != kUnreachable; }
  /// Down-only hops from `sw` to the leaf (kUnreachable: none).
  uint8_t downHops(NodeId sw) const { return down_[sw]; }
  /// The live ports of `sw` toward the leaf on its next legal hop (empty at the leaf and where
  /// the leaf cannot be reached).
  std::span<const PortId> candidates(NodeId sw) const {
    return {cand_.data() + candOffset_[sw], candCount_[sw]};
  }

 private:
  const Topology& topo_;
  std::vector<uint8_t> linkUp_;  // per link
  std::vector<uint32_t> rank_;   // per node
  std::vector<uint32_t> plane_;  // per node: index into order_
  std::vector<uint8_t> up_;      // per port
  std::vector<uint32_t> upOffset_;
  std::vector<PortId> upPorts_;
  std::vector<std::vector<NodeId>> order_;
  bool clos_ = true;
  NodeId leaf_ = kInvalid;
  std::vector<uint8_t> down_;  // per node: down-only hops to the leaf
  std::vector<uint8_t> hops_;  // per node
  std::vector<uint32_t> candOffset_;
  std::vector<uint16_t> candCount_;
  std::vector<PortId> cand_;
  std::vector<NodeId> frontier_, next_;
};

}  // namespace fabricsim
