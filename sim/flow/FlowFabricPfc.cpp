// FlowFabric's step for lossless classes without congestion control: PfcSpreading's rates (the
// max-min fill with congested switch egresses pausing the ports upstream of them, and the
// victims of those pauses) replace the solver's max-min rates while any pause holds.
#include "sim/flow/FlowFabric.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fabricsim {

void FlowFabric::applyPfcSpreading(Time now) {
  // PfcSpreading's fill decomposes over the connected components of the live flows (flows
  // sharing a resource, transitively): a pause spreads only along the paths of its component's
  // flows, and the max-min fill of one component never reads another's. A component none of
  // whose flows or capacities changed since the last fill (the solver's change log) keeps its
  // rates; the fill is redone over the components the log reaches, found by a walk from the
  // logged resources through the flows on them. On a training job at 8,192 GPUs on InfiniBand
  // those hold about 460 of 6,000 live flows per recomputation.
  const auto changed = solver_.changedResources();
  if (changed.empty()) return;
  if (pfcResStamp_.size() < solver_.resources()) pfcResStamp_.resize(solver_.resources(), 0);
  if (pfcFlowStamp_.size() < active_.size()) pfcFlowStamp_.resize(active_.size(), 0);
  if (++pfcEpoch_ == 0) {  // stamps wrapped
    std::fill(pfcResStamp_.begin(), pfcResStamp_.end(), 0);
    std::fill(pfcFlowStamp_.begin(), pfcFlowStamp_.end(), 0);
    pfcEpoch_ = 1;
  }
  pfcRes_.clear();
  pfcFlows_.clear();
  for (uint32_t r : changed)
    if (pfcResStamp_[r] != pfcEpoch_) {
      pfcResStamp_[r] = pfcEpoch_;
      pfcRes_.push_back(r);
    }
  solver_.clearChanges();
  for (size_t i = 0; i < pfcRes_.size(); ++i)
    for (const MaxMinSolver::User& u : solver_.users(pfcRes_[i])) {
      if (pfcFlowStamp_[u.flow] == pfcEpoch_) continue;
      pfcFlowStamp_[u.flow] = pfcEpoch_;
      if (!active_[u.flow].live) continue;
      pfcFlows_.push_back(u.flow);
      for (const MaxMinSolver::Hop& h : solver_.hops(u.flow))
        if (pfcResStamp_[h.resource] != pfcEpoch_) {
          pfcResStamp_[h.resource] = pfcEpoch_;
          pfcRes_.push_back(h.resource);
        }
    }
  if (pfcFlows_.empty()) return;                  // the changes left no flow behind
  std::sort(pfcFlows_.begin(), pfcFlows_.end());  // the fill's order: by flow, as over all of them
  // Capacities are the solver's (hybrid: scaled by the episodes).
  pfc_.clear(solver_.resources());
  for (uint32_t f : pfcFlows_) {
    const Active& a = active_[f];
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
  if (paused) {
    ++pfcPausedRecomputations_;
    pfcVictims_ += pfc_.victims();
  }
  // Without a pause in these components the max-min rates stand (they may still hold the
  // rates of an earlier pause).
  for (uint32_t f : pfcFlows_) {
    Active& a = active_[f];
    const double target = paused ? pfc_.rate(f) : solver_.rate(f);
    if (std::abs(target - a.rate) <= 1e-12 * a.rate) continue;  // the same rate, up to rounding
    settle(f, now);
    a.rate = target;
    updateFinish(f);
  }
}

}  // namespace fabricsim
