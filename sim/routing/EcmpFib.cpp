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
  std::vector<uint32_t> leafIndex(n, kInvalid);
  std::vector<std::vector<NodeId>> compLeaves(compSwitches.size());
  for (uint32_t c = 0; c < compSwitches.size(); ++c)
    for (NodeId s : compSwitches[c]) {
      bool hasHost = false;
      for (uint32_t p = 0; p < topo.degree(s) && !hasHost; ++p) hasHost = topo.isHost(topo.peerNode(topo.port(s, p)));
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

  // Per-switch interning of groups: hash of the member list -> group id.
  std::vector<std::unordered_map<uint64_t, uint32_t>> interned(n);
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
        uint64_t h = 0x12345678ULL;
        for (uint32_t p = 0; p < topo.degree(s); ++p) {
          const PortId gp = topo.port(s, p);
          const NodeId w = topo.peerNode(gp);
          if (topo.isHost(w) || dist[w] + 1 != dist[s]) continue;
          members.push_back(gp);
          h = FlowHash::mix(h ^ gp);
        }
        SIM_CHECK(!members.empty(), "switch without a next hop toward a reachable leaf");
        auto& intern = interned[s];
        uint64_t key = h ^ (static_cast<uint64_t>(members.size()) << 56);
        uint32_t gid = kInvalid;
        // Resolve hash collisions by comparing members; probe with a modified key.
        for (;;) {
          auto it = intern.find(key);
          if (it == intern.end()) break;
          const Group& g = groups_[it->second];
          if (g.size == members.size() &&
              std::equal(members.begin(), members.end(), groupPorts_.begin() + g.offset)) {
            gid = it->second;
            break;
          }
          key = FlowHash::mix(key + 1);
        }
        if (gid == kInvalid) {
          gid = static_cast<uint32_t>(groups_.size());
          groups_.push_back(Group{static_cast<uint32_t>(groupPorts_.size()), static_cast<uint32_t>(members.size())});
          groupPorts_.insert(groupPorts_.end(), members.begin(), members.end());
          intern.emplace(key, gid);
        }
        table_[switchRow_[s] + li] = gid;
      }
    }
  }
  groups_.shrink_to_fit();
  groupPorts_.shrink_to_fit();
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
         seeds_.capacity() * sizeof(uint64_t);
}

}  // namespace fabricsim
