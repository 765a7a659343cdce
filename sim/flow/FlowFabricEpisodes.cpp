// FlowFabric, hybrid mode: congestion episodes on the links a solve leaves congested, and the
// capacities they give those links (see FlowFabric.h, "Hybrid mode").
#include <algorithm>
#include <cmath>

#include "sim/core/Error.h"
#include "sim/flow/FlowFabric.h"

namespace fabricsim {

double FlowFabric::adjustCapacities(double tolerance, bool apply) {
  // Jacobi: every congested link's episode is read from the same solution, and the new
  // capacities are set only after all of them are known, so the outcome does not depend on the
  // order in which the solver lists the links (an episode's arrival rates read its upstream
  // links' capacities). Copied: the next solve rewrites the list.
  touched_.assign(solver_.touchedResources().begin(), solver_.touchedResources().end());
  std::sort(touched_.begin(), touched_.end());
  targets_.clear();
  double change = 0;
  for (uint32_t r : touched_) {
    // A NIC's own uplink is shared by its scheduler, without a switch queue: never an episode.
    if (topo_.isHost(topo_.portNode(r))) continue;
    const double target = solver_.saturated(r) ? nominal_[r] * episodeEfficiency(r) : nominal_[r];
    const double delta = std::abs(target - solver_.capacity(r)) / nominal_[r];
    if (delta > kCapacityTolerance) targets_.emplace_back(r, target);
    change = std::max(change, delta);
  }
  // Converged: no capacity moves by more than the tolerance; the solution stands as it is.
  if (change <= tolerance || !apply) return change;
  for (const auto& [r, target] : targets_) {
    solver_.setCapacity(r, target);
    ++capacityChanges_;
  }
  return change;
}

double FlowFabric::episodeEfficiency(uint32_t r) {
  // The flows bottlenecked here are those at its top rate; the upstream port of each (the hop
  // before this one) tells how many ingress ports converge on this egress.
  double top = 0;
  for (const MaxMinSolver::User& u : solver_.users(r)) top = std::max(top, solver_.rate(u.flow));
  const double cut = top * (1 - 1e-9);
  arrivals_.clear();
  double bytes = 0;
  double latencyPs = 0;
  uint32_t n = 0;
  for (const MaxMinSolver::User& u : solver_.users(r)) {
    const Active& a = active_[u.flow];
    const uint32_t hop = solver_.hopIndex(u);
    if (hop >= a.dataHops || solver_.rate(u.flow) < cut) continue;  // ACK share, or limited elsewhere
    const auto hops = solver_.hops(u.flow);
    // Sprayed flows (fractional weights) have no single upstream port: each counts as its own.
    const bool single = hop > 0 && hops[hop].weight == 1.0f && hops[hop - 1].weight == 1.0f;
    // The most this flow could send here: on each link before this one, the capacity the other
    // flows leave it.
    double most = nominal_[r];
    for (uint32_t k = 0; k < hop; ++k) {
      const uint32_t h = hops[k].resource;
      const double own = solver_.rate(u.flow) * hops[k].weight;
      most = std::min(most, (solver_.capacity(h) - solver_.usage(h) + own) / hops[k].weight);
    }
    const double rate = solver_.rate(u.flow) * hops[hop].weight;
    arrivals_.push_back(
        {single ? hops[hop - 1].resource : (0x80000000u | u.flow), std::max(most, rate), rate});
    // What it has left to bring through the episode (a pipelined ring's step at most).
    const double left = a.remaining - a.rate * static_cast<double>((sim_.now() - a.last).picos());
    bytes += std::clamp(left, 0.0, static_cast<double>(a.burst));
    latencyPs += static_cast<double>(a.latency.picos());
    ++n;
  }
  // What each upstream port can bring: its flows' bounds added up, but no more than the port
  // itself carries (its capacity less what its other flows use). Flows sharing a port arrive
  // through one link: counting each flow's own bound would make them arrive faster than that
  // link runs, and queue there, which is a congestion point of its own (its own episode).
  std::sort(arrivals_.begin(), arrivals_.end(),
            [](const Arrival& x, const Arrival& y) { return x.port < y.port; });
  double arrival = 0;  // bytes/ps, over the ports
  uint32_t fanIn = 0;
  for (size_t i = 0; i < arrivals_.size();) {
    const uint32_t port = arrivals_[i].port;
    double sum = 0, own = 0;
    for (; i < arrivals_.size() && arrivals_[i].port == port; ++i) {
      sum += arrivals_[i].most;
      own += arrivals_[i].rate;
    }
    if (!(port & 0x80000000u)) sum = std::min(sum, solver_.capacity(port) - solver_.usage(port) + own);
    arrival += sum;
    ++fanIn;
  }
  // No queue builds unless two ports feed it and the flows can arrive faster than it drains.
  if (fanIn < 2 || arrival <= nominal_[r] * (1 + kArrivalMargin)) return 1.0;
  CongestionEpisode e;
  e.fanIn = fanIn;
  e.arrivalRate = BitRate::bps(static_cast<int64_t>(std::min(arrival / fanIn / nominal_[r], 1.0) *
                                                    static_cast<double>(topo_.portRate(r).bitsPerSecond())));
  e.flows = n;
  e.bytesPerFlow = static_cast<Bytes>(bytes / n);
  e.lineRate = topo_.portRate(r);
  e.pathLatency = Time::ps(static_cast<int64_t>(latencyPs / n));
  ++episodesEvaluated_;
  const double eff = episodes_->efficiency(e);
  SIM_CHECK(eff > 0 && eff <= 1, "a congestion-episode efficiency must be in (0, 1]");
  return eff;
}

}  // namespace fabricsim
