// Simulator: the clock, the pending events and the run loop of one simulation.
//
// Models: discrete-event execution. Components schedule events for themselves at absolute
// times no earlier than now(); run() pops them in (time, sequence) order and advances the
// clock. One Simulator per run, passed by reference; no globals, so tests may build many.
// Leaves out: parallel execution (a run is single-threaded and deterministic).
// Units: Time (picoseconds).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "sim/core/Error.h"
#include "sim/core/EventQueue.h"
#include "sim/core/Rng.h"
#include "sim/core/Time.h"

namespace fabricsim {

class Simulator {
 public:
  explicit Simulator(uint64_t seed = 1) : seed_(seed) {}
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }
  uint64_t seed() const { return seed_; }
  /// An independent random stream for a component (see Rng::stream).
  Rng rngStream(uint64_t id) const { return Rng::stream(seed_, id); }

  /// Schedules target->onEvent(tag) at absolute time `when` (>= now()).
  void schedule(Time when, EventHandler* target, uint32_t tag) {
    SIM_DCHECK(when >= now_, "event scheduled in the past");
    queue_.push(when, target, tag);
  }
  void scheduleIn(Time delay, EventHandler* target, uint32_t tag) { schedule(now_ + delay, target, tag); }

  /// A re-armable timer for target->onEvent(tag) (see EventQueue): at most one pending entry.
  TimerId newTimer(EventHandler* target, uint32_t tag) { return queue_.newTimer(target, tag); }
  /// Arms (or moves) timer `id` to fire at absolute time `when` (>= now()).
  void arm(TimerId id, Time when) {
    SIM_DCHECK(when >= now_, "timer armed in the past");
    queue_.arm(id, when);
  }
  void cancel(TimerId id) { queue_.cancel(id); }
  bool armed(TimerId id) const { return queue_.armed(id); }

  /// Runs events until the queue is empty, stop() is called, or the next event is after
  /// `until`. Returns the number of events processed by this call.
  uint64_t run(Time until = Time::max());
  /// Asks run() to return after the current event.
  void stop() { stopRequested_ = true; }

  uint64_t eventsProcessed() const { return events_; }
  size_t pendingEvents() const { return queue_.size(); }
  /// Largest number of pending events seen by run().
  size_t peakPendingEvents() const { return peakPending_; }
  EventQueue& queue() { return queue_; }
  /// Gives back what the event queue's idle buffers hold (after a run).
  void releaseIdleMemory() { queue_.releaseIdleMemory(); }

  /// Called about every `interval` of wall time during run() (for progress reports).
  void setProgressCallback(std::function<void(const Simulator&)> cb,
                           std::chrono::milliseconds interval = std::chrono::milliseconds(500)) {
    progress_ = std::move(cb);
    progressInterval_ = interval;
  }

 private:
  EventQueue queue_;
  Time now_ = Time::zero();
  uint64_t seed_;
  uint64_t events_ = 0;
  size_t peakPending_ = 0;
  bool stopRequested_ = false;
  std::function<void(const Simulator&)> progress_;
  std::chrono::milliseconds progressInterval_{500};
};

}  // namespace fabricsim
