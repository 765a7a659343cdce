// EventQueue: a 4-ary min-heap of plain event records ordered by (time, sequence number), with
// re-armable timers.
//
// Models: the pending-event set of a discrete-event simulation. Equal times pop in the order
// they were pushed or armed (the sequence number breaks ties), so runs are deterministic.
// Records are 32 bytes ({when, seq, target, tag, timer}); no allocation per event beyond
// amortised vector growth.
// Two kinds of entries:
//  - one-shot events (push): fire once;
//  - timers (newTimer, then arm / cancel): a component's timer has at most one entry in the
//    heap; arming a timer that is already pending moves its entry in place (it takes a fresh
//    sequence number, exactly as if it had been cancelled and pushed anew), and cancelling
//    removes it. So the queue never holds dead wake-ups: its size is bounded by the live
//    one-shot events plus the number of timers, whatever the number of restarts.
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
  void push(Time when, EventHandler* target, uint32_t tag) {
    heap_.push_back(Event{when, nextSeq_++, target, tag, kNoTimer});
    if (timers_.empty())
      siftUpPlain(heap_.size() - 1);
    else
      siftUp(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  /// Removes and returns the earliest event. Precondition: !empty(). A timer's entry leaves
  /// the heap: the timer is no longer armed when its handler runs.
  Event pop() {
    Event out = heap_.front();
    if (timers_.empty()) return popPlain();
    timers_[out.timer].pos = kNotQueued;  // slot 0 for one-shot events
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) siftDown(0, last);
    return out;
  }
  void clear() {
    heap_.clear();
    for (auto& t : timers_) t.pos = kNotQueued;
  }
  /// Whether `id` names a timer of this queue (not kNoTimer).
  bool isTimer(TimerId id) const { return id != kNoTimer && id < timers_.size(); }
  void reserve(size_t n) { heap_.reserve(n); }

  // ---- timers ----
  /// A new timer that calls target->onEvent(tag) when it fires. Not armed.
  TimerId newTimer(EventHandler* target, uint32_t tag) {
    if (timers_.empty()) timers_.push_back(TimerSlot{nullptr, 0, kNotQueued});  // slot 0: one-shot events
    timers_.push_back(TimerSlot{target, tag, kNotQueued});
    return static_cast<TimerId>(timers_.size() - 1);
  }
  /// Arms `id` to fire at `when`, replacing any pending expiry.
  void arm(TimerId id, Time when) {
    TimerSlot& t = timers_[id];
    const Event e{when, nextSeq_++, t.target, t.tag, id};
    if (t.pos == kNotQueued) {
      heap_.push_back(e);
      t.pos = static_cast<uint32_t>(heap_.size() - 1);
      siftUp(heap_.size() - 1);
      return;
    }
    // The new key is (when, fresh seq): later than the old one unless `when` moved earlier.
    const size_t i = t.pos;
    if (before(e, heap_[i])) {
      heap_[i] = e;
      siftUp(i);
    } else {
      siftDown(i, e);
    }
  }
  /// Removes the pending expiry of `id`, if any.
  void cancel(TimerId id) {
    if (id == kNoTimer) return;
    TimerSlot& t = timers_[id];
    if (t.pos == kNotQueued) return;
    const size_t i = t.pos;
    t.pos = kNotQueued;
    const Event last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;  // it was the last entry
    if (i > 0 && before(last, heap_[(i - 1) >> 2])) {
      place(i, last);
      siftUp(i);
    } else {
      siftDown(i, last);
    }
  }
  bool armed(TimerId id) const { return id != kNoTimer && timers_[id].pos != kNotQueued; }
  /// The pending expiry of `id` (Time::max() when not armed).
  Time expiry(TimerId id) const {
    if (id == kNoTimer) return Time::max();
    const uint32_t p = timers_[id].pos;
    return p == kNotQueued ? Time::max() : heap_[p].when;
  }
  size_t timers() const { return timers_.empty() ? 0 : timers_.size() - 1; }

 private:
  static constexpr uint32_t kNotQueued = 0xFFFFFFFFu;
  struct TimerSlot {
    EventHandler* target;
    uint32_t tag;
    uint32_t pos;  ///< index of its entry in heap_, or kNotQueued
  };

  // One 128-bit key (time, then sequence) so comparisons compile to flag arithmetic rather
  // than unpredictable branches; times are never negative.
  static unsigned __int128 key(const Event& e) {
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.when.picos())) << 64) | e.seq;
  }
  static bool before(const Event& a, const Event& b) { return key(a) < key(b); }
  // Without timers (plain pushes only) the heap needs no position bookkeeping at all; with
  // timers every move records the entry's position, unconditionally (one-shot entries write to
  // the dummy slot 0): a store is cheaper than a branch the heap's data cannot predict.
  void place(size_t i, const Event& e) {
    heap_[i] = e;
    timers_[e.timer].pos = static_cast<uint32_t>(i);
  }
  Event popPlain() {
    Event out = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (heap_.empty()) return out;
    const size_t n = heap_.size();
    const unsigned __int128 lk = key(last);
    size_t i = 0;
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      unsigned __int128 bestKey = key(heap_[first]);
      const size_t end = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < end; ++c) {
        const unsigned __int128 k = key(heap_[c]);
        const bool less = k < bestKey;
        best = less ? c : best;
        bestKey = less ? k : bestKey;
      }
      if (!(bestKey < lk)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return out;
  }
  void siftUpPlain(size_t i) {
    const Event e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) >> 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void siftUp(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) >> 2;
      if (!before(e, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  // Places `e` at position i (a hole) and moves it down to where it belongs.
  void siftDown(size_t i, const Event& e) {
    const size_t n = heap_.size();
    const unsigned __int128 ek = key(e);
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      unsigned __int128 bestKey = key(heap_[first]);
      const size_t end = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < end; ++c) {
        const unsigned __int128 k = key(heap_[c]);
        const bool less = k < bestKey;
        best = less ? c : best;
        bestKey = less ? k : bestKey;
      }
      if (!(bestKey < ek)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, e);
  }

  std::vector<Event> heap_;
  std::vector<TimerSlot> timers_;
  uint64_t nextSeq_ = 0;
};

}  // namespace fabricsim
