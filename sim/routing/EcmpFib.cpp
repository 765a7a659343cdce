#include "sim/routing/EcmpFib.h"

#include <algorithm>
#include <unordered_map>

#include "sim/core/Error.h"

namespace fabricsim {

EcmpFib::EcmpFib(const Topology& topo, uint64_t hashSeed) : topo_(topo) {
  const size_t n = topo.nodeCount();
  seeds_.resize(n);
  for (NodeId v = 0; v < n; ++v) seeds_[v] = FlowHash::switchSeed(hashSeed, v);

  // Connected components of the switch-only graph (hosts never transit).
  component_.assign(n, kInvalid);
  std::vector<std::vector<NodeId>> compSwitches;
  std::vector<NodeId> stack;
  for (NodeId s = static_cast<NodeId>(topo.hostCount()); s < n; ++s) {
    if (component_[s] != kInvalid) continue;
    const uint32_t c = static_cast<uint32_t>(compSwitches.size());
    compSwitches.emplace_back();
    component_[s] = c;
    stack.push_back(s);
    while (!stack.empty()) {
      const NodeId v = stack.back();
      stack.pop_back();
      compSwitches[c].push_back(v);
      for (uint32_t p = 0; p < topo.degree(v); ++p) {
        const NodeId w = topo.peerNode(topo.port(v, p));
        if (topo.isHost(w) || component_[w] != kInvalid) continue;
        component_[w] = c;
        stack.push_back(w);
      }
    }
    std::sort(compSwitches[c].begin(), compSwitches[c].end());
  }

  // Leaves: switches with at least one host attached, indexed per component.
  leafIndex_.assign(n, kInvalid);
  auto& leafIndex = leafIndex_;
  compLeaves_.assign(compSwitches.size(), {});
  auto& compLeaves = compLeaves_;
  for (uint32_t c = 0; c < compSwitches.size(); ++c)
    for (NodeId s : compSwitches[c]) {
      bool hasHost = false;
      for (uint32_t p = 0; p < topo.degree(s) && !hasHost; ++p)
        hasHost = topo.isHost(topo.peerNode(topo.port(s, p)));
      if (hasHost) {
        leafIndex[s] = static_cast<uint32_t>(compLeaves[c].size());
        compLeaves[c].push_back(s);
      }
    }

  nicRoute_.resize(topo.nicCount());
  for (uint32_t nic = 0; nic < topo.nicCount(); ++nic) {
    const PortId np = topo.nicPort(nic);
    const NodeId leaf = topo.peerNode(np);
    SIM_CHECK(!topo.isHost(leaf), "a NIC must be cabled to a switch");
    nicRoute_[nic] = NicRoute{leaf, leafIndex[leaf], topo.peerPort(np)};
  }

  switchRow_.assign(n, 0);
  size_t rows = 0;
  for (uint32_t c = 0; c < compSwitches.size(); ++c)
    for (NodeId s : compSwitches[c]) {
      switchRow_[s] = rows;
      rows += compLeaves[c].size();
    }
  table_.assign(rows, kInvalid);

  interned_.assign(n, {});
  std::vector<uint32_t> dist(n, kInvalid);
  std::vector<NodeId> frontier, next;
  std::vector<PortId> members;
  for (uint32_t c = 0; c < compSwitches.size(); ++c) {
    for (const NodeId leaf : compLeaves[c]) {
      // BFS from the leaf over switch links.
      for (NodeId s : compSwitches[c]) dist[s] = kInvalid;
      dist[leaf] = 0;
      frontier.assign(1, leaf);
      while (!frontier.empty()) {
        next.clear();
        for (NodeId v : frontier)
          for (uint32_t p = 0; p < topo.degree(v); ++p) {
            const NodeId w = topo.peerNode(topo.port(v, p));
            if (topo.isHost(w) || dist[w] != kInvalid) continue;
            dist[w] = dist[v] + 1;
            next.push_back(w);
          }
        frontier.swap(next);
      }
      const uint32_t li = leafIndex[leaf];
      for (NodeId s : compSwitches[c]) {
        if (s == leaf) continue;
        members.clear();
        for (uint32_t p = 0; p < topo.degree(s); ++p) {
          const PortId gp = topo.port(s, p);
          const NodeId w = topo.peerNode(gp);
          if (topo.isHost(w) || dist[w] + 1 != dist[s]) continue;
          members.push_back(gp);
        }
        SIM_CHECK(!members.empty(), "switch without a next hop toward a reachable leaf");
        const uint32_t gid = intern(s, members);
        table_[switchRow_[s] + li] = gid;
      }
    }
  }
  // The intern index is only needed when a control plane changes routes: free it now and
  // rebuild it on the first setRoute, so static tables stay small.
  interned_.clear();
  interned_.shrink_to_fit();
  groups_.shrink_to_fit();
  groupPorts_.shrink_to_fit();
}

void EcmpFib::rebuildIntern() {
  interned_.assign(topo_.nodeCount(), {});
  for (NodeId s = static_cast<NodeId>(topo_.hostCount()); s < topo_.nodeCount(); ++s) {
    const size_t leaves = compLeaves_[component_[s]].size();
    for (size_t i = 0; i < leaves; ++i) {
      const uint32_t gid = table_[switchRow_[s] + i];
      if (gid == kInvalid) continue;
      const Group& g = groups_[gid];
      interned_[s].emplace(internKey({groupPorts_.data() + g.offset, g.size}), gid);
    }
  }
}

uint64_t EcmpFib::internKey(std::span<const PortId> members) {
  uint64_t h = 0x12345678ULL;
  for (PortId p : members) h = FlowHash::mix(h ^ p);
  return h ^ (static_cast<uint64_t>(members.size()) << 56);
}

uint32_t EcmpFib::intern(NodeId sw, std::span<const PortId> members) {
  if (interned_.empty()) rebuildIntern();
  auto& table = interned_[sw];
  uint64_t key = internKey(members);
  // Resolve hash collisions by comparing members; probe with a modified key.
  for (;;) {
    auto it = table.find(key);
    if (it == table.end()) break;
    const Group& g = groups_[it->second];
    if (g.size == members.size() &&
        std::equal(members.begin(), members.end(), groupPorts_.begin() + g.offset))
      return it->second;
    key = FlowHash::mix(key + 1);
  }
  const uint32_t gid = static_cast<uint32_t>(groups_.size());
  groups_.push_back(Group{static_cast<uint32_t>(groupPorts_.size()), static_cast<uint32_t>(members.size())});
  groupPorts_.insert(groupPorts_.end(), members.begin(), members.end());
  table.emplace(key, gid);
  return gid;
}

void EcmpFib::setRoute(NodeId sw, NodeId leaf, std::span<const PortId> ports) {
  SIM_CHECK(!topo_.isHost(sw) && leafIndex_[leaf] != kInvalid && component_[sw] == component_[leaf],
            "setRoute: not a switch and a leaf of the same plane");
  for (PortId p : ports) SIM_CHECK(topo_.portNode(p) == sw, "setRoute: port of another switch");
  std::vector<PortId> sorted(ports.begin(), ports.end());
  std::sort(sorted.begin(), sorted.end());
  const uint32_t gid = intern(sw, sorted);
  uint32_t& entry = table_[switchRow_[sw] + leafIndex_[leaf]];
  if (entry == gid) return;
  entry = gid;
  if (onChange_) onChange_(sw);
}

std::span<const PortId> EcmpFib::routeToLeaf(NodeId sw, NodeId leaf) const {
  if (sw == leaf) return {};
  const Group& g = groups_[table_[switchRow_[sw] + leafIndex_[leaf]]];
  return {groupPorts_.data() + g.offset, g.size};
}

std::span<const PortId> EcmpFib::group(NodeId sw, uint32_t dstNic) const {
  const NicRoute& d = nicRoute_[dstNic];
  if (sw == d.leaf) return {};
  const Group& g = groups_[table_[switchRow_[sw] + d.leafIndex]];
  return {groupPorts_.data() + g.offset, g.size};
}

size_t EcmpFib::memoryBytes() const {
  return component_.capacity() * sizeof(uint32_t) + switchRow_.capacity() * sizeof(size_t) +
         table_.capacity() * sizeof(uint32_t) + groups_.capacity() * sizeof(Group) +
         groupPorts_.capacity() * sizeof(PortId) + nicRoute_.capacity() * sizeof(NicRoute) +
         seeds_.capacity() * sizeof(uint64_t) + leafIndex_.capacity() * sizeof(uint32_t) + internedBytes();
}

size_t EcmpFib::internedBytes() const {
  // Approximate: one hash node (key, value, next pointer, cached hash) per distinct group, plus
  // each map's bucket array and header.
  size_t bytes = 0;
  for (const auto& m : interned_) bytes += sizeof(m) + m.size() * 32 + m.bucket_count() * sizeof(void*);
  return bytes;
}

}  // namespace fabricsim
