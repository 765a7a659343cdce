#include "sim/routing/IbUpDownPaths.h"

#include <algorithm>

namespace fabricsim {

IbUpDownPaths::IbUpDownPaths(const Topology& topo) : topo_(topo) {
  const size_t n = topo.nodeCount();
  const auto first = static_cast<NodeId>(topo.hostCount());
  linkUp_.assign(topo.linkCount(), 1);
  rank_.assign(n, kUnreachable);
  plane_.assign(n, kInvalid);
  // Planes (connected switch components) and each plane's highest tier: its roots.
  std::vector<NodeId> stack;
  for (NodeId s = first; s < n; ++s) {
    if (plane_[s] != kInvalid) continue;
    const auto id = static_cast<uint32_t>(order_.size());
    order_.emplace_back();
    plane_[s] = id;
    stack.push_back(s);
    while (!stack.empty()) {
      const NodeId v = stack.back();
      stack.pop_back();
      order_[id].push_back(v);
      for (uint32_t p = 0; p < topo.degree(v); ++p) {
        const NodeId w = topo.peerNode(topo.port(v, p));
        if (topo.isHost(w) || plane_[w] != kInvalid) continue;
        plane_[w] = id;
        stack.push_back(w);
      }
    }
  }
  for (auto& members : order_) {
    uint8_t top = 0;
    for (NodeId v : members) top = std::max(top, topo.node(v).tier);
    frontier_.clear();
    for (NodeId v : members)
      if (topo.node(v).tier == top) {
        rank_[v] = 0;
        frontier_.push_back(v);
      }
    for (uint32_t r = 1; !frontier_.empty(); ++r) {
      next_.clear();
      for (NodeId v : frontier_)
        for (uint32_t p = 0; p < topo.degree(v); ++p) {
          const NodeId w = topo.peerNode(topo.port(v, p));
          if (topo.isHost(w) || rank_[w] != kUnreachable) continue;
          rank_[w] = r;
          next_.push_back(w);
        }
      frontier_.swap(next_);
    }
    std::sort(members.begin(), members.end(),
              [&](NodeId a, NodeId b) { return rank_[a] != rank_[b] ? rank_[a] < rank_[b] : a < b; });
    for (NodeId v : members)
      if (rank_[v] != static_cast<uint32_t>(top - topo.node(v).tier)) clos_ = false;
  }
  up_.assign(topo.portCount(), 0);
  upOffset_.assign(n + 1, 0);
  for (NodeId v = 0; v < n; ++v) {
    upOffset_[v] = static_cast<uint32_t>(upPorts_.size());
    if (topo.isHost(v)) continue;
    for (uint32_t l = 0; l < topo.degree(v); ++l) {
      const PortId p = topo.port(v, l);
      const NodeId w = topo.peerNode(p);
      if (topo.isHost(w)) {
        if (topo.node(v).tier != 1) clos_ = false;
        continue;
      }
      const int dt = static_cast<int>(topo.node(w).tier) - static_cast<int>(topo.node(v).tier);
      if (dt != 1 && dt != -1) clos_ = false;
      if (rank_[w] < rank_[v] || (rank_[w] == rank_[v] && w < v)) {
        up_[p] = 1;
        upPorts_.push_back(p);
      }
    }
  }
  upOffset_[n] = static_cast<uint32_t>(upPorts_.size());
  down_.assign(n, kUnreachable);
  hops_.assign(n, kUnreachable);
  candOffset_.assign(n, 0);
  candCount_.assign(n, 0);
}

void IbUpDownPaths::computeFor(NodeId leaf) {
  leaf_ = leaf;
  const std::vector<NodeId>& members = order_[plane_[leaf]];
  for (NodeId v : members) {
    down_[v] = kUnreachable;
    hops_[v] = kUnreachable;
  }
  // Down-only distances: breadth-first from the leaf, stepping to switches for which the link to
  // the current one is a down link.
  down_[leaf] = 0;
  frontier_.assign(1, leaf);
  while (!frontier_.empty()) {
    next_.clear();
    for (NodeId x : frontier_)
      for (uint32_t l = 0; l < topo_.degree(x); ++l) {
        const PortId q = topo_.port(x, l);
        const NodeId s = topo_.peerNode(q);
        if (topo_.isHost(s) || down_[s] != kUnreachable || !portLive(q) || !up_[q]) continue;
        // q goes up from x to s, so s reaches x going down.
        down_[s] = static_cast<uint8_t>(down_[x] + 1);
        next_.push_back(s);
      }
    frontier_.swap(next_);
  }
  // Hops: down-only where possible, else one more than the best up neighbour (roots first).
  cand_.clear();
  for (NodeId s : members) {
    candOffset_[s] = static_cast<uint32_t>(cand_.size());
    if (down_[s] != kUnreachable) {
      hops_[s] = down_[s];
      if (s != leaf)
        for (uint32_t l = 0; l < topo_.degree(s); ++l) {
          const PortId p = topo_.port(s, l);
          const NodeId x = topo_.peerNode(p);
          if (!up_[p] && !topo_.isHost(x) && portLive(p) && down_[x] + 1 == down_[s]) cand_.push_back(p);
        }
    } else {
      uint32_t best = kUnreachable;
      for (PortId p : upPorts(s))
        if (portLive(p)) best = std::min<uint32_t>(best, hops_[topo_.peerNode(p)]);
      if (best + 1 < kUnreachable) {
        hops_[s] = static_cast<uint8_t>(best + 1);
        for (PortId p : upPorts(s))
          if (portLive(p) && hops_[topo_.peerNode(p)] == best) cand_.push_back(p);
      }
    }
    candCount_[s] = static_cast<uint16_t>(cand_.size() - candOffset_[s]);
  }
}

}  // namespace fabricsim
