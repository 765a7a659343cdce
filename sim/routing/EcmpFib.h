// EcmpFib: forwarding tables of every switch, derived from shortest paths, with every minimal
// next hop in the ECMP group.
//
// Models: destination-based forwarding toward host prefixes, aggregated per destination leaf
// (top-of-rack switch) as a Clos fabric does: a switch that is not the destination's leaf
// forwards on any port whose neighbour is one hop closer to that leaf; the leaf itself forwards
// on the port cabled to the NIC. Lookup is O(1): one table read (switch, leaf) -> group id,
// then the hash picks a member. Distinct groups are stored once per switch, so memory is
// (switches x leaves in the same connected plane) x 4 bytes plus the distinct groups.
// A control plane (BgpControlPlane) may replace any group at run time with setRoute; an empty
// group means no route. Leaves out: weighted groups. Hosts never transit traffic.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/routing/FlowHash.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class EcmpFib {
 public:
  /// Builds tables for every switch by breadth-first search from every leaf over switch links.
  EcmpFib(const Topology& topo, uint64_t hashSeed);

  /// Egress port (global directed-port id) at switch `sw` for a packet to NIC `dstNic` whose
  /// five-tuple digest is `tuple`. Precondition: reachable(sw, dstNic).
  /// Returns kInvalid when the switch has no route (an empty group: traffic is black-holed).
  PortId nextHop(NodeId sw, uint32_t dstNic, uint64_t tuple) const {
    const NicRoute& d = nicRoute_[dstNic];
    if (sw == d.leaf) return d.leafPort;
    const uint32_t g = table_[switchRow_[sw] + d.leafIndex];
    const Group& grp = groups_[g];
    if (grp.size == 1) return groupPorts_[grp.offset];
    if (grp.size == 0) return kInvalid;
    return groupPorts_[grp.offset + FlowHash::select(tuple, seeds_[sw], grp.size)];
  }

  // ---- control-plane interface (BgpControlPlane installs routes here) ----
  /// Replaces the group of switch `sw` toward destination leaf `leaf` (a switch with hosts in
  /// the same connected plane) by `ports` (egress ports of `sw`; empty: no route).
  void setRoute(NodeId sw, NodeId leaf, std::span<const PortId> ports);
  /// Called with the switch after every change of its table (not on the per-packet path): the
  /// flow backend re-routes its flows.
  void setChangeListener(std::function<void(NodeId)> listener) { onChange_ = std::move(listener); }
  /// The group of switch `sw` toward leaf `leaf` (empty when sw == leaf or no route).
  std::span<const PortId> routeToLeaf(NodeId sw, NodeId leaf) const;
  /// Leaves (switches with hosts) of connected plane `component`.
  const std::vector<NodeId>& leavesOf(uint32_t component) const { return compLeaves_[component]; }
  size_t components() const { return compLeaves_.size(); }
  /// All members of the group at `sw` toward the leaf of `dstNic` (empty at the leaf itself).
  std::span<const PortId> group(NodeId sw, uint32_t dstNic) const;
  /// True when a packet at `sw` can reach `dstNic` (same connected plane).
  bool reachable(NodeId sw, uint32_t dstNic) const {
    return component_[sw] == component_[nicRoute_[dstNic].leaf];
  }
  /// Connected plane (component of the switch graph) of a switch.
  uint32_t component(NodeId sw) const { return component_[sw]; }
  uint64_t switchSeed(NodeId sw) const { return seeds_[sw]; }
  size_t distinctGroups() const { return groups_.size(); }
  /// Bytes held by the tables (for the README's memory figures).
  size_t memoryBytes() const;

 private:
  struct Group {
    uint32_t offset;
    uint32_t size;
  };
  struct NicRoute {
    NodeId leaf;
    uint32_t leafIndex;  // index of the leaf among the leaves of its component
    PortId leafPort;     // the leaf's port toward the NIC
  };
  const Topology& topo_;
  std::vector<uint32_t> component_;  // per node (hosts: kInvalid)
  std::vector<size_t> switchRow_;    // per node: offset of its row in table_
  std::vector<uint32_t> table_;      // group id per (switch, leaf of its component)
  std::vector<Group> groups_;
  std::vector<PortId> groupPorts_;
  std::vector<NicRoute> nicRoute_;
  std::vector<uint64_t> seeds_;
  std::vector<std::vector<NodeId>> compLeaves_;
  std::vector<uint32_t> leafIndex_;  // per node: index among its component's leaves, or kInvalid
  uint32_t intern(NodeId sw, std::span<const PortId> ports);
  void rebuildIntern();
  static uint64_t internKey(std::span<const PortId> members);
  size_t internedBytes() const;
  std::vector<std::unordered_map<uint64_t, uint32_t>> interned_;
  std::function<void(NodeId)> onChange_;
};

}  // namespace fabricsim
