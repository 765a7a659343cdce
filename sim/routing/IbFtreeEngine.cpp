#include "sim/routing/IbFtreeEngine.h"

namespace fabricsim {

IbFtreeEngine::IbFtreeEngine(const Topology& topo)
    : topo_(topo),
      mainRoutes_(topo.portCount(), 0),
      routes_(topo.portCount(), 0),
      onMain_(topo.nodeCount(), 0),
      leads_(topo.nodeCount(), 0) {}

void IbFtreeEngine::route(const IbUpDownPaths& paths, uint32_t lid, IbLft& lft) {
  const NodeId leaf = paths.leaf();
  ++stamp_;
  // The main path: up from the leaf over the least-loaded link to a switch that reaches the
  // leaf going down (through the switch below, by construction of the down distances).
  NodeId at = leaf;
  onMain_[at] = stamp_;
  leads_[at] = stamp_;
  for (;;) {
    PortId best = kInvalid;
    for (PortId p : paths.upPorts(at)) {
      const NodeId u = topo_.peerNode(p);
      if (!paths.portLive(p) || paths.downHops(u) != paths.downHops(at) + 1) continue;
      if (best == kInvalid || mainRoutes_[p] < mainRoutes_[best]) best = p;
    }
    if (best == kInvalid) break;
    ++mainRoutes_[best];
    const NodeId u = topo_.peerNode(best);
    lft.set(u, lid, topo_.peerPort(best));
    onMain_[u] = stamp_;
    leads_[u] = stamp_;
    at = u;
  }
  // Everything else, roots first, so a switch's up neighbours are decided before it.
  for (NodeId s : paths.order(leaf)) {
    if (onMain_[s] == stamp_) continue;
    const auto cands = paths.candidates(s);
    if (cands.empty()) {
      lft.set(s, lid, kInvalid);
      continue;
    }
    PortId best = kInvalid;
    bool bestLeads = false;
    for (PortId p : cands) {
      const NodeId x = topo_.peerNode(p);
      const bool leads = leads_[x] == stamp_;
      if (best == kInvalid || (leads && !bestLeads) || (leads == bestLeads && routes_[p] < routes_[best])) {
        best = p;
        bestLeads = leads;
      }
    }
    ++routes_[best];
    lft.set(s, lid, best);
    if (bestLeads && !paths.goesDown(s)) leads_[s] = stamp_;
  }
}

}  // namespace fabricsim
