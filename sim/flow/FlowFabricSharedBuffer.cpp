// FlowFabric, hybrid mode: the model's answer about each episode, and the switch buffer the
// episodes of one switch share (see FlowFabric.h, "Hybrid mode").
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/Error.h"
#include "sim/flow/FlowFabric.h"

namespace fabricsim {

void FlowFabric::evaluate(Shape& shape) {
  ++episodesEvaluated_;
  const double eff = episodes_->efficiency(shape.episode);
  SIM_CHECK(eff > 0 && eff <= 1, "a congestion-episode efficiency must be in (0, 1]");
  // The episode's bytes through what the background leaves, at the efficiency.
  shape.answer = {shape.link,
                  eff,
                  episodes_->flowEfficiencies(),
                  episodes_->flowStates(),
                  episodes_->flowQuartiles(),
                  episodes_->backgroundEfficiency(),
                  shape.bytes / shape.capacity / eff};
  shape.queue = std::max(0.0, episodes_->queueBytes());
}

void FlowFabric::shareSwitchBuffers() {
  // InfiniBand credits each input port a buffer of its own: no egress queue takes another's.
  if (spec_.links.technology == "infiniband" || shapes_.size() < 2) return;
  switchOf_.clear();
  for (uint32_t i = 0; i < shapes_.size(); ++i) switchOf_.emplace_back(topo_.portNode(shapes_[i].link), i);
  std::sort(switchOf_.begin(), switchOf_.end());
  const auto buffer = static_cast<double>(spec_.sw.buffer);
  const double alpha = spec_.sw.dtAlpha;
  for (size_t i = 0; i < switchOf_.size();) {
    size_t j = i;
    while (j < switchOf_.size() && switchOf_[j].first == switchOf_[i].first) ++j;
    const size_t begin = i;
    i = j;
    if (j - begin < 2) continue;
    // Each queue as its episode built it alone (u), and what the switch lets it keep beside the
    // others: a lossy queue may hold alpha x the free buffer (dynamic thresholds), so at once
    // they settle where each keeps min(u, T) with T = alpha (B - sum of min(u_k, T)) (T found
    // exactly: with the m queues that reach it, T = alpha (B - the others' u) / (1 + m alpha)).
    // A lossless queue is not held back at its egress (its ingress pauses): it keeps u.
    levels_.clear();
    for (size_t k = begin; k < j; ++k) levels_.push_back(shapes_[switchOf_[k].second].queue);
    std::sort(levels_.begin(), levels_.end());
    double cap = std::numeric_limits<double>::infinity();
    if (!spec_.sw.pfc.enabled) {
      double below = 0;  // the queues under the cap, added up
      for (size_t m = levels_.size(); m > 0; --m) {
        const double t = alpha * (buffer - below) / (1 + static_cast<double>(m) * alpha);
        // levels_[0..size-m) stay under t, the m largest reach it.
        const size_t under = levels_.size() - m;
        if (under == 0 || levels_[under - 1] <= t) {
          if (levels_[under] >= t) {
            cap = t;
            break;
          }
        }
        below += levels_[under];
      }
    }
    // What the others hold while this episode lasts: each keeps its queue for as long as its
    // own episode lasts. Every episode's from the answers alone, then each asked again.
    heldBytes_.clear();
    for (size_t k = begin; k < j; ++k) {
      const Shape& shape = shapes_[switchOf_[k].second];
      double held = 0;
      for (size_t o = begin; o < j; ++o) {
        if (o == k) continue;
        const Shape& other = shapes_[switchOf_[o].second];
        held += std::min(other.queue, cap) * std::min(1.0, other.answer.durationPs / shape.answer.durationPs);
      }
      heldBytes_.push_back(std::min(held, buffer));
    }
    for (size_t k = begin; k < j; ++k) {
      if (heldBytes_[k - begin] < 1) continue;
      Shape& shape = shapes_[switchOf_[k].second];
      shape.episode.bufferHeld = static_cast<Bytes>(std::llround(heldBytes_[k - begin]));
      evaluate(shape);
    }
  }
}

}  // namespace fabricsim
