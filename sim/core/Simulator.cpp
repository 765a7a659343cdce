#include "sim/core/Simulator.h"

namespace fabricsim {

uint64_t Simulator::run(Time until) {
  stopRequested_ = false;
  const uint64_t startEvents = events_;
  auto nextReport = std::chrono::steady_clock::now() + progressInterval_;
  while (!queue_.empty() && !stopRequested_) {
    if (queue_.top().when > until) {
      now_ = until;  // nothing is due before `until`: the clock reaches it
      break;
    }
    if (queue_.size() > peakPending_) peakPending_ = queue_.size();
    const Event e = queue_.pop();
    now_ = e.when;
    e.target->onEvent(e.tag);
    ++events_;
    if (progress_ && (events_ & 0xFFFF) == 0) {
      const auto wall = std::chrono::steady_clock::now();
      if (wall >= nextReport) {
        progress_(*this);
        nextReport = wall + progressInterval_;
      }
    }
  }
  return events_ - startEvents;
}

}  // namespace fabricsim
