// EventQueue: the pending events of a simulation, ordered by (time, sequence number), with
// re-armable timers.
//
// Models: the pending-event set of a discrete-event simulation. Equal times pop in the order
// they were pushed or armed (the sequence number breaks ties), so runs are deterministic.
// Records are 32 bytes ({when, seq, target, tag, timer}); no allocation per event beyond
// amortised vector growth. Two kinds of entries, in two 4-ary min-heaps:
//  - one-shot events (push): fire once; a plain heap with no bookkeeping per move;
//  - timers (newTimer, then arm / cancel): a component's timer has at most one entry, in an
//    indexed heap that knows where each timer sits; arming a timer that is already pending moves
//    its entry in place (it takes a fresh sequence number, exactly as if it had been cancelled
//    and pushed anew), and cancelling removes it. So the queue never holds dead wake-ups: its
//    size is bounded by the live one-shot events plus the number of timers, whatever the number
//    of restarts.
// pop() takes the earlier of the two heads; the shared sequence counter keeps ties in push/arm
// order across both heaps.
// Units: Time (picoseconds).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/EventHandler.h"
#include "sim/core/Time.h"

namespace fabricsim {

using TimerId = uint32_t;
/// Not a timer (one-shot events carry it). Timer ids start at 1.
inline constexpr TimerId kNoTimer = 0;

struct Event {
  Time when;
  uint64_t seq;  ///< insertion order, for deterministic ties
  EventHandler* target;
  uint32_t tag;
  TimerId timer = kNoTimer;  ///< the timer this entry belongs to, or kNoTimer (one-shot)
};

class EventQueue {
 public:
  EventQueue() { slots_.push_back(TimerSlot{nullptr, 0, kNotQueued}); }  // slot 0: not a timer

  void push(Time when, EventHandler* target, uint32_t tag) {
    events_.push_back(Event{when, nextSeq_++, target, tag, kNoTimer});
    siftUpPlain(events_.size() - 1);
  }
  bool empty() const { return events_.empty() && timers_.empty(); }
  size_t size() const { return events_.size() + timers_.size(); }
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return timerFirst() ? timers_.front() : events_.front(); }
  /// Removes and returns the earliest event. Precondition: !empty(). A timer's entry leaves
  /// the queue: the timer is no longer armed when its handler runs.
  Event pop() {
    if (timerFirst()) {
      const Event out = timers_.front();
      slots_[out.timer].pos = kNotQueued;
      removeTimerAt(0);
      return out;
    }
    return popPlain();
  }
  /// Pops the earliest event into `out` if there is one due at or before `until` (one
  /// comparison of the two heaps' heads); false otherwise.
  bool popUntil(Time until, Event& out) {
    const bool fromTimers = timerFirst();
    const Event* head = fromTimers ? &timers_.front() : events_.empty() ? nullptr : &events_.front();
    if (head == nullptr || head->when > until) return false;
    if (fromTimers) {
      out = timers_.front();
      slots_[out.timer].pos = kNotQueued;
      removeTimerAt(0);
    } else {
      out = popPlain();
    }
    return true;
  }
  void clear() {
    events_.clear();
    timers_.clear();
    for (auto& t : slots_) t.pos = kNotQueued;
  }
  void reserve(size_t n) { events_.reserve(n); }

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
      timers_.push_back(e);
      siftUpTimer(timers_.size() - 1, e);
      return;
    }
    // The new key is (when, fresh seq): later than the old one unless `when` moved earlier.
    const size_t i = t.pos;
    if (before(e, timers_[i]))
      siftUpTimer(i, e);
    else
      siftDownTimer(i, e);
  }
  /// Removes the pending expiry of `id`, if any.
  void cancel(TimerId id) {
    if (id == kNoTimer) return;
    TimerSlot& t = slots_[id];
    if (t.pos == kNotQueued) return;
    const size_t i = t.pos;
    t.pos = kNotQueued;
    removeTimerAt(i);
  }
  bool armed(TimerId id) const { return id != kNoTimer && slots_[id].pos != kNotQueued; }
  /// The pending expiry of `id` (Time::max() when not armed).
  Time expiry(TimerId id) const {
    if (!armed(id)) return Time::max();
    return timers_[slots_[id].pos].when;
  }
  size_t timers() const { return slots_.size() - 1; }

 private:
  static constexpr uint32_t kNotQueued = 0xFFFFFFFFu;
  struct TimerSlot {
    EventHandler* target;
    uint32_t tag;
    uint32_t pos;  ///< index of its entry in timers_, or kNotQueued
  };

  // One 128-bit key (time, then sequence) so comparisons compile to flag arithmetic rather
  // than unpredictable branches; times are never negative.
  static unsigned __int128 key(const Event& e) {
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.when.picos())) << 64) | e.seq;
  }
  static bool before(const Event& a, const Event& b) { return key(a) < key(b); }
  bool timerFirst() const {
    if (timers_.empty()) return false;
    return events_.empty() || before(timers_.front(), events_.front());
  }

  // ---- the two heaps share their sift loops; the timer heap also records each entry's
  // position in its slot (kTrack), the one-shot heap does no bookkeeping per move ----
  template <bool kTrack>
  void put(std::vector<Event>& h, size_t i, const Event& e) {
    h[i] = e;
    if constexpr (kTrack) slots_[e.timer].pos = static_cast<uint32_t>(i);
  }
  // Places `e` at hole i of `h` and moves it up to where it belongs.
  template <bool kTrack>
  void siftUp(std::vector<Event>& h, size_t i, const Event& e) {
    while (i > 0) {
      const size_t parent = (i - 1) >> 2;
      if (!before(e, h[parent])) break;
      put<kTrack>(h, i, h[parent]);
      i = parent;
    }
    put<kTrack>(h, i, e);
  }
  // Places `e` at hole i of `h` and moves it down to where it belongs.
  template <bool kTrack>
  void siftDown(std::vector<Event>& h, size_t i, const Event& e) {
    const size_t n = h.size();
    const unsigned __int128 ek = key(e);
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      unsigned __int128 bestKey = key(h[first]);
      const size_t end = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < end; ++c) {
        const unsigned __int128 k = key(h[c]);
        const bool less = k < bestKey;
        best = less ? c : best;
        bestKey = less ? k : bestKey;
      }
      if (!(bestKey < ek)) break;
      put<kTrack>(h, i, h[best]);
      i = best;
    }
    put<kTrack>(h, i, e);
  }
  void siftUpPlain(size_t i) {
    const Event e = events_[i];  // a copy: the sift overwrites slot i
    siftUp<false>(events_, i, e);
  }
  Event popPlain() {
    const Event out = events_.front();
    const Event last = events_.back();
    events_.pop_back();
    if (!events_.empty()) siftDown<false>(events_, 0, last);
    return out;
  }
  void siftUpTimer(size_t i, const Event& e) { siftUp<true>(timers_, i, e); }
  void siftDownTimer(size_t i, const Event& e) { siftDown<true>(timers_, i, e); }
  // Removes the entry at i (its slot already cleared by the caller).
  void removeTimerAt(size_t i) {
    const Event last = timers_.back();
    timers_.pop_back();
    if (i == timers_.size()) return;  // it was the last entry
    if (i > 0 && before(last, timers_[(i - 1) >> 2]))
      siftUpTimer(i, last);
    else
      siftDownTimer(i, last);
  }

  std::vector<Event> events_;  // one-shot events
  std::vector<Event> timers_;  // armed timers
  std::vector<TimerSlot> slots_;
  uint64_t nextSeq_ = 0;
};

}  // namespace fabricsim
