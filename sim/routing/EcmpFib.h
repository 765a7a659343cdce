// EcmpFib: forwarding tables of every switch, derived from shortest paths, with every minimal
// next hop in the ECMP group.
//
// Models: destination-based forwarding toward host prefixes, aggregated per destination leaf
// (top-of-rack switch) as a Clos fabric does: a switch that is not the destination's leaf
// forwards on any port whose neighbour is one hop closer to that leaf; the leaf itself forwards
// on the port cabled to the NIC. Lookup is O(1): one table read (switch, leaf) -> group id,
// then the hash picks one slot of the group's slot table (EcmpSlots), which names the member.
// Distinct groups are stored once per switch, so memory is (switches x leaves in the same
// connected plane) x 4 bytes plus the distinct groups.
//
// The hash is the switch's (routing.hash_fields, routing.seeds: per_switch or equal, FlowHash).
// Three things may make the forwarding group differ from the installed one:
// - local fast failover (setLocalPortUp): a locally dead port is left out of every group of its
//   switch, whatever the control plane installs, until it comes back; a group whose members are
//   all dead is empty (black hole);
// - weighted ECMP (routing.wcmp): each member gets slots in proportion to the capacity it has
//   toward the destination leaf, bottom-up over the installed groups: cap(leaf) = infinite,
//   cap(sw) = sum over its live members p of min(rate(p), cap(peer of p)); members with no
//   capacity left are dropped while another has some. Weights are reduced by their greatest
//   common divisor, at most 512 slots per group. Recomputed at once whenever a group changes
//   (an ideal controller: no delay);
// - resilient hashing (routing.resilient_hashing): every group of two or more members is a
//   table of B buckets; a change of members moves only the buckets of members that left and
//   the excess of members above their new share (exactly the departed member's flows when
//   B >= n(n-1)); a member coming back takes a fair share from the others.
// Path selectors other than the hash (flowlet, adaptive, spray) choose among the forwarding
// members (group()) without weights.
// A control plane (BgpControlPlane) may replace any installed group at run time with setRoute;
// an empty group means no route. Listeners (onChange) hear of every change of a switch's
// forwarding table. Rates in bit/s.
// Leaves out: a dead port between a leaf and a NIC (the leaf forwards on it regardless), the
// timing of failure detection (the caller decides when to call setLocalPortUp), hosts transiting.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/routing/FlowHash.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class EcmpFib {
 public:
  /// How the switches hash and group (routing.hash_fields, seeds, resilient_hashing, wcmp).
  struct Options {
    uint8_t hashFields = FlowHash::kAllFields;  ///< FlowHash::Field bits
    bool equalSeeds = false;                    ///< every switch hashes with the same seed
    uint32_t resilientBuckets = 0;              ///< buckets per group; 0: plain hash-mod-n groups
    bool wcmp = false;                          ///< weights by capacity toward the destination
  };
  /// The options a routing spec asks for.
  static Options optionsFor(const RoutingSpec& routing);

  /// Builds tables for every switch by breadth-first search from every leaf over switch links.
  EcmpFib(const Topology& topo, uint64_t hashSeed, const Options& options);
  /// The same with default options (five-tuple, per-switch seeds, plain groups).
  EcmpFib(const Topology& topo, uint64_t hashSeed);

  /// Egress port (global directed-port id) at switch `sw` for a packet to NIC `dstNic` whose
  /// five-tuple digest is `tuple`. Precondition: reachable(sw, dstNic).
  /// Returns kInvalid when the switch has no route (an empty group: traffic is black-holed).
  PortId nextHop(NodeId sw, uint32_t dstNic, uint64_t tuple) const {
    const NicRoute& d = nicRoute_[dstNic];
    if (sw == d.leaf) return d.leafPort;
    const uint32_t g = table_[switchRow_[sw] + d.leafIndex];
    const Group& grp = groups_[g];
    if (grp.slots == 1) return groupPorts_[grp.slotOffset];
    if (grp.slots == 0) return kInvalid;
    return groupPorts_[grp.slotOffset + FlowHash::select(tuple, seeds_[sw], grp.slots)];
  }
  /// The digest of a queue pair's five-tuple as these switches hash it (only the configured
  /// header fields); both backends take their QP digests from here.
  uint64_t queuePairTuple(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex,
                          bool reverse = false) const {
    return FlowHash::queuePairTuple(srcNic, dstNic, tc, qpIndex, reverse, options_.hashFields);
  }

  // ---- control-plane interface (BgpControlPlane installs routes here) ----
  /// Replaces the installed group of switch `sw` toward destination leaf `leaf` (a switch with
  /// hosts in the same connected plane) by `ports` (egress ports of `sw`; empty: no route).
  /// Locally dead ports are filtered out of what forwards.
  void setRoute(NodeId sw, NodeId leaf, std::span<const PortId> ports);
  /// The installed group of switch `sw` toward leaf `leaf` (the control plane's view, before
  /// local port state and weights; ascending ports; empty when sw == leaf or no route).
  std::span<const PortId> routeToLeaf(NodeId sw, NodeId leaf) const;
  /// Leaves (switches with hosts) of connected plane `component`.
  const std::vector<NodeId>& leavesOf(uint32_t component) const { return compLeaves_[component]; }
  size_t components() const { return compLeaves_.size(); }
  /// The members that forward at `sw` toward the leaf of `dstNic` (empty at the leaf itself):
  /// the installed group less locally dead ports and (WCMP) members without capacity.
  std::span<const PortId> group(NodeId sw, uint32_t dstNic) const;
  /// The same toward a leaf.
  std::span<const PortId> groupToLeaf(NodeId sw, NodeId leaf) const;
  /// The slot table the hash indexes at `sw` toward `leaf`: the members themselves, members
  /// repeated by weight (WCMP), or the resilient buckets.
  std::span<const PortId> slotsToLeaf(NodeId sw, NodeId leaf) const;
  /// True when a packet at `sw` can reach `dstNic` (same connected plane).
  bool reachable(NodeId sw, uint32_t dstNic) const {
    return component_[sw] == component_[nicRoute_[dstNic].leaf];
  }
  /// Connected plane (component of the switch graph) of a switch.
  uint32_t component(NodeId sw) const { return component_[sw]; }
  uint64_t switchSeed(NodeId sw) const { return seeds_[sw]; }
  const Options& options() const { return options_; }
  size_t distinctGroups() const { return groups_.size(); }
  /// Bytes held by the tables (for the README's memory figures).
  size_t memoryBytes() const;

  // ---- local fast failover (data plane) ----
  /// Marks switch port `p` (a global directed-port id of a switch) up or down as its switch
  /// sees it. Down: `p` leaves every group of its switch at once (resilient: only its buckets
  /// move); up: the installed groups that contain it take it back. Other switches' groups change
  /// only through WCMP weights. Idempotent. Listeners hear of every switch whose table changed.
  void setLocalPortUp(PortId p, bool up);
  bool localPortUp(PortId p) const { return portDown_.empty() || !portDown_[p]; }
  /// WCMP: the capacity (bit/s) switch `sw` has toward `leaf` over its forwarding group
  /// (0 when wcmp is off; UINT64_MAX at the leaf itself).
  uint64_t capacityToLeaf(NodeId sw, NodeId leaf) const;

  // ---- change listener (not on the per-packet path) ----
  using ChangeListener = std::function<void(NodeId sw)>;
  /// Registers `f`, called after every change of switch `sw`'s forwarding table (a group
  /// toward some leaf changed: setRoute, setLocalPortUp, WCMP reweighting), once per switch per
  /// call that changed it, in increasing switch order. Not called for calls that change nothing.
  void onChange(ChangeListener f) { listeners_.push_back(std::move(f)); }

 private:
  struct alignas(32) Group {  // one cache line holds whole groups
    uint32_t offset;          // members (sorted) in groupPorts_
    uint32_t size;
    uint32_t slotOffset;  // the slot table the hash indexes (== offset for a plain group)
    uint32_t slots;
    // setRoute's memo: the group this one became, the last time a route grew from it by the
    // one port grownPort (kInvalid: none yet). Exact: contents name one group per switch.
    PortId grownPort = kInvalid;
    uint32_t grownGid = kInvalid;
  };
  struct NicRoute {
    NodeId leaf;
    uint32_t leafIndex;  // index of the leaf among the leaves of its component
    PortId leafPort;     // the leaf's port toward the NIC
  };
  const Topology& topo_;
  Options options_;
  std::vector<uint32_t> component_;  // per node (hosts: kInvalid)
  std::vector<size_t> switchRow_;    // per node: offset of its row in table_
  std::vector<uint32_t> table_;      // forwarding group id per (switch, leaf of its component)
  // Installed group id per row; empty while it equals table_ (no dead port, no weights, no buckets).
  std::vector<uint32_t> installed_;
  std::vector<uint64_t> cap_;      // WCMP: capacity per row toward the leaf (bit/s)
  std::vector<uint8_t> portDown_;  // per global port; empty: all up
  std::vector<Group> groups_;
  std::vector<PortId> groupPorts_;
  std::vector<NicRoute> nicRoute_;
  std::vector<uint64_t> seeds_;
  std::vector<std::vector<NodeId>> compLeaves_;
  std::vector<uint32_t> leafIndex_;  // per node: index among its component's leaves, or kInvalid
  std::vector<ChangeListener> listeners_;
  // scratch for refresh
  std::vector<PortId> members_, slots_, old_;
  std::vector<uint64_t> weights_;
  std::vector<uint32_t> counts_, held_;
  // While the constructor runs: forwarding group per (installed group, weights).
  std::map<std::pair<uint32_t, std::vector<uint64_t>>, uint32_t>* buildMemo_ = nullptr;

  /// The group id of (members, slots) at switch `sw`, created when new. Groups are distinct per
  /// switch (a switch's groups hold its own ports; the empty group is one per switch).
  uint32_t intern(NodeId sw, std::span<const PortId> members, std::span<const PortId> slots);
  void rebuildIntern();
  static uint64_t internKey(NodeId sw, std::span<const PortId> members, std::span<const PortId> slots);
  /// Adds group `gid` of `sw` (hash `key`) to the index unless a group of equal contents is there.
  uint32_t internInsert(NodeId sw, uint64_t key, uint32_t gid);
  size_t internedBytes() const;
  /// The intern index: open addressing over (switch, contents), power-of-two size, at most half full.
  struct InternSlot {
    uint64_t key;  // internKey of the group
    NodeId sw;
    uint32_t gid;  // kInvalid: free
  };
  std::vector<InternSlot> interned_;  // empty until needed (constructor, first setRoute)
  size_t internedCount_ = 0;
  std::vector<PortId> route_;  // scratch for setRoute
  /// setRoute: the group of the sorted `route_` at `sw`, replacing group `cur` (kInvalid: none).
  uint32_t internRoute(NodeId sw, uint32_t cur);

  bool derived() const { return !installed_.empty(); }
  void ensureInstalled();
  uint64_t capOf(NodeId node, uint32_t li, NodeId leaf) const;
  /// Recomputes the forwarding group of (sw, leaf index li) from the installed group, port state,
  /// weights and (resilient) the current buckets. Returns whether the forwarding group changed;
  /// `capChanged` tells whether the WCMP capacity changed.
  bool refresh(NodeId sw, uint32_t li, bool& capChanged);
  /// WCMP: recomputes the switches upstream of `sw` toward leaf index `li` whose capacity may
  /// have changed; adds every switch whose group changed to `changed`.
  void propagate(NodeId sw, uint32_t li, std::vector<NodeId>& changed);
  void notify(std::vector<NodeId>& changed);
  std::span<const PortId> members(uint32_t gid) const {
    const Group& g = groups_[gid];
    return {groupPorts_.data() + g.offset, g.size};
  }
};

}  // namespace fabricsim
