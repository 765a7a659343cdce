// EventQueue: the pending events of a simulation, ordered by (time, sequence number), with
// re-armable timers.
//
// Models: the pending-event set of a discrete-event simulation. Equal times pop in the order
// they were pushed or armed (the sequence number breaks ties), so runs are deterministic.
// Records are 32 bytes ({when, seq, target, tag, timer}); no allocation per event beyond
// amortised vector growth. Two kinds of entries:
//  - one-shot events (push): fire once; kept in FIFO lanes by their delay (DelayLaneQueue),
//    which serves the few constant delays of a packet network in O(1) per event;
//  - timers (newTimer, then arm / cancel): a component's timer has at most one entry, in a 4-ary
//    indexed min-heap that knows where each timer sits; arming a timer that is already pending moves
//    its entry in place (it takes a fresh sequence number, exactly as if it had been cancelled
//    and pushed anew), and cancelling removes it. So the queue never holds dead wake-ups: its
//    size is bounded by the live one-shot events plus the number of timers, whatever the number
//    of restarts.
// pop() takes the earlier of the two heads; the shared sequence counter keeps ties in push/arm
// order across both.
// Units: Time (picoseconds).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/DelayLaneQueue.h"
#include "sim/core/EventHandler.h"
#include "sim/core/EventHeap.h"
#include "sim/core/Time.h"

namespace fabricsim {

class EventQueue {
 public:
  EventQueue() { slots_.push_back(TimerSlot{nullptr, 0, kNotQueued}); }  // slot 0: not a timer
  EventQueue(const EventQueue&) = delete;                                // the timer heap points at slots_
  EventQueue& operator=(const EventQueue&) = delete;

  void push(Time when, EventHandler* target, uint32_t tag) {
    oneShot_.push(Event{when, nextSeq_++, target, tag, kNoTimer});
  }
  bool empty() const { return oneShot_.empty() && timers_.empty(); }
  size_t size() const { return oneShot_.size() + timers_.size(); }
  /// Removes and returns the earliest event. Precondition: !empty(). A timer's entry leaves
  /// the queue: the timer is no longer armed when its handler runs.
  Event pop() {
    Event out;
    popUntil(Time::max(), out);
    return out;
  }
  /// Pops the earliest event into `out` if there is one due at or before `until` (one
  /// comparison of the two queues' heads); false otherwise.
  bool popUntil(Time until, Event& out) {
    const Event* head = peek();
    if (head == nullptr || head->when > until) return false;
    if (!timers_.empty() && head == &timers_.top()) {
      out = timers_.pop();
      slots_[out.timer].pos = kNotQueued;
      oneShot_.advance(out.when);
    } else {
      out = oneShot_.pop();
    }
    return true;
  }
  /// The event popUntil would return next (nullptr if none), for look-ahead only.
  const Event* peek() {
    const Event* head = oneShot_.top();
    if (!timers_.empty() && (head == nullptr || eventBefore(timers_.top(), *head))) head = &timers_.top();
    return head;
  }
  /// Gives back the one-shot lanes' empty buffers (after a run).
  void releaseIdleMemory() { oneShot_.releaseIdleMemory(); }
  void clear() {
    oneShot_.clear();
    timers_.clear();
    for (auto& t : slots_) t.pos = kNotQueued;
  }

  // ---- timers ----
  /// A new timer that calls target->onEvent(tag) when it fires. Not armed.
  TimerId newTimer(EventHandler* target, uint32_t tag) {
    slots_.push_back(TimerSlot{target, tag, kNotQueued});
    return static_cast<TimerId>(slots_.size() - 1);
  }
  /// Arms `id` to fire at `when`, replacing any pending expiry.
  void arm(TimerId id, Time when) {
    TimerSlot& t = slots_[id];
    const Event e{when, nextSeq_++, t.target, t.tag, id};
    if (t.pos == kNotQueued) {
      timers_.push(e);
      return;
    }
    // The new key is (when, fresh seq): later than the old one unless `when` moved earlier.
    const size_t i = t.pos;
    timers_.replaceAt(i, e);
  }
  /// Removes the pending expiry of `id`, if any.
  void cancel(TimerId id) {
    if (id == kNoTimer) return;
    TimerSlot& t = slots_[id];
    if (t.pos == kNotQueued) return;
    const size_t i = t.pos;
    t.pos = kNotQueued;
    timers_.removeAt(i);
  }
  bool armed(TimerId id) const { return id != kNoTimer && slots_[id].pos != kNotQueued; }
  /// The pending expiry of `id` (Time::max() when not armed).
  Time expiry(TimerId id) const {
    if (!armed(id)) return Time::max();
    return timers_.at(slots_[id].pos).when;
  }
  size_t timers() const { return slots_.size() - 1; }

 private:
  static constexpr uint32_t kNotQueued = 0xFFFFFFFFu;
  struct TimerSlot {
    EventHandler* target;
    uint32_t tag;
    uint32_t pos;  ///< index of its entry in timers_, or kNotQueued
  };

  // Records where each timer's entry sits, as the heap moves it.
  struct TrackSlot {
    std::vector<TimerSlot>* slots;
    void operator()(const Event& e, size_t i) const { (*slots)[e.timer].pos = static_cast<uint32_t>(i); }
  };

  DelayLaneQueue oneShot_;  // one-shot events
  std::vector<TimerSlot> slots_;
  EventHeap<TrackSlot> timers_{TrackSlot{&slots_}};  // armed timers
  uint64_t nextSeq_ = 0;
};

}  // namespace fabricsim
