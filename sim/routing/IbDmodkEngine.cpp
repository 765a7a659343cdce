#include "sim/routing/IbDmodkEngine.h"

#include <algorithm>

namespace fabricsim {
namespace {

/// Up-port count of each tier's switches (all switches of a tier must agree), or -1 where they
/// do not.
std::vector<int64_t> upCounts(const Topology& topo, const IbUpDownPaths& paths) {
  std::vector<int64_t> w(static_cast<size_t>(topo.tiers()) + 2, -2);
  for (NodeId s = static_cast<NodeId>(topo.hostCount()); s < topo.nodeCount(); ++s) {
    const auto n = static_cast<int64_t>(paths.upPorts(s).size());
    int64_t& t = w[topo.node(s).tier];
    if (t == -2)
      t = n;
    else if (t != n)
      t = -1;
  }
  return w;
}

}  // namespace

std::string IbDmodkEngine::check(const Topology& topo, const IbUpDownPaths& paths) {
  if (!paths.isClos())
    return "D-mod-K routes layered fat-trees (switch links between adjacent tiers only, NICs on the "
           "first tier); this fabric is not one (use updn)";
  const std::vector<int64_t> w = upCounts(topo, paths);
  for (size_t t = 1; t < w.size(); ++t)
    if (w[t] == -1)
      return "D-mod-K needs every tier-" + std::to_string(t) +
             " switch to have the same number of up ports; they differ here (use ftree or updn)";
  return "";
}

IbDmodkEngine::IbDmodkEngine(const Topology& topo, const IbUpDownPaths& paths) : topo_(topo) {
  const std::vector<int64_t> w = upCounts(topo, paths);
  divisor_.assign(w.size(), 1);
  for (size_t t = 2; t < w.size(); ++t)
    divisor_[t] = divisor_[t - 1] * static_cast<uint64_t>(std::max<int64_t>(1, w[t - 1]));
}

void IbDmodkEngine::route(const IbUpDownPaths& paths, uint32_t lid, uint64_t d, IbLft& lft) const {
  const NodeId leaf = paths.leaf();
  for (NodeId s : paths.order(leaf)) {
    if (s == leaf) continue;
    const auto cands = paths.candidates(s);
    if (cands.empty()) {
      lft.set(s, lid, kInvalid);
      continue;
    }
    if (paths.goesDown(s)) {
      lft.set(s, lid, cands[d % cands.size()]);
      continue;
    }
    const auto ups = paths.upPorts(s);
    const auto w = static_cast<uint32_t>(ups.size());
    const auto j = static_cast<uint32_t>((d / divisor_[topo_.node(s).tier]) % w);
    const uint8_t want = static_cast<uint8_t>(paths.hops(s) - 1);
    for (uint32_t k = 0; k < w; ++k) {
      const PortId p = ups[(j + k) % w];
      if (paths.portLive(p) && paths.hops(topo_.peerNode(p)) == want) {
        lft.set(s, lid, p);
        break;
      }
    }
  }
}

}  // namespace fabricsim
