#include "sim/routing/IbUpDnEngine.h"

namespace fabricsim {

IbUpDnEngine::IbUpDnEngine(const Topology& topo) : topo_(topo), routes_(topo.portCount(), 0) {}

void IbUpDnEngine::route(const IbUpDownPaths& paths, uint32_t lid, uint32_t first, IbLft& lft) {
  const NodeId leaf = paths.leaf();
  for (NodeId s : paths.order(leaf)) {
    if (s == leaf) continue;
    const auto cands = paths.candidates(s);
    if (cands.empty()) {
      lft.set(s, lid, kInvalid);
      continue;
    }
    PortId best = kInvalid;
    bool bestFresh = false;
    for (PortId p : cands) {
      const NodeId x = topo_.peerNode(p);
      bool fresh = true;  // no earlier LID of this port goes to x from here
      for (uint32_t e = first; e < lid && fresh; ++e) {
        const PortId used = lft.port(s, e);
        fresh = used == kInvalid || topo_.peerNode(used) != x;
      }
      if (best == kInvalid || (fresh && !bestFresh) || (fresh == bestFresh && routes_[p] < routes_[best])) {
        best = p;
        bestFresh = fresh;
      }
    }
    ++routes_[best];
    lft.set(s, lid, best);
  }
}

}  // namespace fabricsim
