#include "sim/routing/LocalFailover.h"

#include <algorithm>

#include "sim/core/Error.h"

namespace fabricsim {

LocalFailover::LocalFailover(Simulator& sim, const Topology& topo, EcmpFib& fib, Time delay)
    : sim_(sim), topo_(topo), fib_(fib), delay_(delay), linkUp_(topo.linkCount(), 1) {
  SIM_CHECK(delay >= Time::zero(), "negative failover delay");
  fib_.onChange([this](NodeId sw) {
    if (applying_) changed_.push_back(sw);
  });
}

uint32_t LocalFailover::linksChanged(std::span<const LinkId> links, bool up) {
  for (LinkId l : links) linkUp_[l] = up ? 1 : 0;
  const auto index = static_cast<uint32_t>(records_.size());
  records_.push_back(Record{sim_.now()});
  pending_.emplace_back(links.begin(), links.end());
  sim_.schedule(sim_.now() + delay_, this, index);
  return index;
}

void LocalFailover::onEvent(uint32_t index) {
  applying_ = true;
  changed_.clear();
  for (LinkId l : pending_[index]) {
    const LinkInfo& info = topo_.link(l);
    // The state the port has now: a link that came back within the delay is never taken out.
    const std::pair<NodeId, uint32_t> ends[] = {{info.a, info.aPort}, {info.b, info.bPort}};
    for (const auto& [node, local] : ends)
      if (!topo_.isHost(node)) fib_.setLocalPortUp(topo_.port(node, local), linkUp_[l] != 0);
  }
  applying_ = false;
  std::sort(changed_.begin(), changed_.end());
  records_[index].applied = sim_.now();
  records_[index].switchesChanged =
      static_cast<uint32_t>(std::unique(changed_.begin(), changed_.end()) - changed_.begin());
  pending_[index].clear();
  pending_[index].shrink_to_fit();
}

}  // namespace fabricsim
