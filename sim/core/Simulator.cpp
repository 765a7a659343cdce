#include "sim/core/Simulator.h"

namespace fabricsim {

uint64_t Simulator::run(Time until) {
  stopRequested_ = false;
  const uint64_t startEvents = events_;
  auto nextReport = std::chrono::steady_clock::now() + progressInterval_;
  Event e;
  while (!stopRequested_) {
    const size_t pending = queue_.size();
    if (!queue_.popUntil(until, e)) {
      if (pending > 0) now_ = until;  // nothing is due before `until`: the clock reaches it
      break;
    }
    if (pending > peakPending_) peakPending_ = pending;
    now_ = e.when;
    // The next event (as things stand) reads its handler's lines, prefetched when it became a lane
    // head, and then what they point to: that is fetched now, while this event runs.
    if (const Event* next = queue_.peek()) next->target->prefetchFor(next->tag);
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
