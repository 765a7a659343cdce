// FlowFabric's step for lossless classes without congestion control: PfcSpreading's rates (the
// max-min fill with congested switch egresses pausing the ports upstream of them, and the
// victims of those pauses) replace the solver's max-min rates while any pause holds.
#include "sim/flow/FlowFabric.h"

#include <cmath>
#include <utility>

namespace fabricsim {

void FlowFabric::applyPfcSpreading(Time now) {
  // The whole fabric's live flows: a pause spreads along paths beyond what the solver's
  // incremental solve touched. Capacities are the solver's (hybrid: scaled by the episodes).
  pfc_.clear(solver_.resources());
  for (uint32_t f = 0; f < active_.size(); ++f) {
    const Active& a = active_[f];
    if (!a.live) continue;
    const auto hops = solver_.hops(f);
    const bool pausing = (pfcClasses_ >> a.tc) & 1;
    if (selection_ != Selection::Spray && selection_ != Selection::Adaptive) {
      pfc_.addFlow(f, hops, a.dataHops, a.tc, pausing);  // data hops in path order
      continue;
    }
    // Split flows list their hops by port: their source NIC's uplink (the one data hop out of a
    // host) goes first, the only hop known to be upstream of the rest.
    pfcHops_.assign(hops.begin(), hops.end());
    for (uint32_t k = 0; k < a.dataHops; ++k)
      if (topo_.isHost(topo_.portNode(pfcHops_[k].resource))) {
        std::swap(pfcHops_[0], pfcHops_[k]);
        break;
      }
    pfc_.addFlow(f, pfcHops_, a.dataHops, a.tc, pausing, false);
  }
  const bool paused =
      pfc_.solve([&](uint32_t r) { return solver_.capacity(r); },
                 [&](uint32_t r) { return r < topo_.portCount() && !topo_.isHost(topo_.portNode(r)); });
  if (!paused && !pfcOverride_) return;  // the max-min rates stand
  if (paused) {
    ++pfcPausedRecomputations_;
    pfcVictims_ += pfc_.victims();
  }
  for (uint32_t f = 0; f < active_.size(); ++f) {
    Active& a = active_[f];
    if (!a.live) continue;
    const double target = paused ? pfc_.rate(f) : solver_.rate(f);
    if (std::abs(target - a.rate) <= 1e-12 * a.rate) continue;  // the same rate, up to rounding
    settle(f, now);
    a.rate = target;
    updateFinish(f);
  }
  pfcOverride_ = paused;
}

}  // namespace fabricsim
