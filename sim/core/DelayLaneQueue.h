// DelayLaneQueue: the one-shot events of a simulation, kept in first-in first-out lanes by the
// delay they were scheduled with, beside a heap for the rest.
//
// Models: nothing physical; it is the pending-event set for events that fire once. A packet
// network schedules most of them a constant delay ahead: a frame's end one serialization time
// after it starts, its arrival one serialization time plus the wire's delay after it starts, for
// the few frame sizes and link kinds of a fabric. Events pushed with the same delay from a clock
// that only moves forward are already in (time, sequence) order, so a FIFO per delay keeps them
// sorted for free: a push is an append, a pop takes the earliest of the lanes' heads, and memory
// is touched in order, whatever the number of pending events (a heap pays O(log n) compares and
// cache misses per event, more as the fabric grows).
// - A delay gets a lane once it has been seen kPromoteAfter times (counted in a small table);
//   at most kMaxLanes lanes. Every other event goes to a 4-ary heap on (time, sequence).
// - The delay is measured from the last popped event's time (the queue's own clock), which only
//   moves forward; that is what keeps each lane sorted, whatever the caller's clock does.
// Order: exactly (time, sequence), as a heap on the same keys, so this queue changes no result
// (tests/integration/PacketEngineReferenceTest.cpp).
// Leaves out: retiring lanes no longer used (an empty lane costs nothing per pop).
// Units: Time (picoseconds).
#pragma once

#include <cstdint>
#include <memory>

#include "sim/core/EventHeap.h"
#include "sim/core/Time.h"

namespace fabricsim {

class DelayLaneQueue {
 public:
  static constexpr int kMaxLanes = 32;
  static constexpr uint32_t kPromoteAfter = 64;

  bool empty() const { return size() == 0; }
  size_t size() const { return laneEvents_ + heap_.size(); }
  /// Lanes in use (for tests and benchmarks).
  int lanes() const { return lanes_; }

  void push(const Event& e) {
    const int64_t delay = (e.when - clock_).picos();
    const int lane = laneFor(delay);
    if (lane >= 0) {
      lane_[lane].push(e);
      nonEmpty_ |= 1u << lane;
      ++laneEvents_;
      return;
    }
    heap_.push(e);
  }
  /// The earliest event, or nullptr when empty.
  const Event* top() {
    const Event* best = heap_.empty() ? nullptr : &heap_.top();
    best_ = -1;
    for (uint32_t m = nonEmpty_; m; m &= m - 1) {
      const int l = __builtin_ctz(m);
      const Event& f = lane_[l].front();
      if (best == nullptr || eventBefore(f, *best)) {
        best = &f;
        best_ = l;
      }
    }
    return best;
  }
  /// Removes the event top() returned (call top() first). Its time becomes the queue's clock.
  Event pop() {
    Event e;
    // The entry behind the popped one becomes a head, and so a candidate for one of the next few
    // pops: its target's first cache line (the handler's vtable pointer and hot fields) is fetched
    // now, while this event runs, rather than when the loop calls it.
    if (best_ >= 0) {
      e = lane_[best_].pop();
      --laneEvents_;
      if (lane_[best_].empty())
        nonEmpty_ &= ~(1u << best_);
      else
        __builtin_prefetch(lane_[best_].front().target);
      best_ = -1;
    } else {
      e = heap_.pop();
      if (!heap_.empty()) __builtin_prefetch(heap_.top().target);
    }
    clock_ = e.when;
    return e;
  }
  /// Moves the queue's clock to `t` (the time of an event taken from elsewhere; never backwards).
  void advance(Time t) {
    if (t > clock_) clock_ = t;
  }
  void clear() {
    for (int l = 0; l < lanes_; ++l) lane_[l].clear();
    nonEmpty_ = 0;
    laneEvents_ = 0;
    heap_.clear();
    best_ = -1;
  }

 private:
  int laneFor(int64_t delay) {
    for (int l = 0; l < lanes_; ++l)
      if (delay_[l] == delay) return l;
    if (lanes_ == kMaxLanes) return -1;
    // Count the delay; promote it once it is common. Colliding delays share a counter slot and
    // restart each other's count, which only delays a promotion.
    Candidate& c =
        candidates_[(static_cast<uint64_t>(delay) * 0x9E3779B97F4A7C15ULL) >> (64 - kCandidateBits)];
    if (c.delay != delay) {
      c.delay = delay;
      c.count = 0;
    }
    if (++c.count < kPromoteAfter) return -1;
    delay_[lanes_] = delay;
    return lanes_++;
  }

  // A growable ring of events (FIFO), allocated on first use.
  class Ring {
   public:
    bool empty() const { return size_ == 0; }
    const Event& front() const { return buf_[head_]; }
    void push(const Event& v) {
      if (size_ == cap_) grow();
      buf_[(head_ + size_) & (cap_ - 1)] = v;
      ++size_;
    }
    Event pop() {
      const Event v = buf_[head_];
      head_ = (head_ + 1) & (cap_ - 1);
      --size_;
      return v;
    }
    void clear() {
      head_ = 0;
      size_ = 0;
    }

   private:
    void grow() {
      const uint32_t cap = cap_ ? cap_ * 2 : 64;
      std::unique_ptr<Event[]> b(new Event[cap]);
      for (uint32_t i = 0; i < size_; ++i) b[i] = buf_[(head_ + i) & (cap_ - 1)];
      buf_ = std::move(b);
      cap_ = cap;
      head_ = 0;
    }
    std::unique_ptr<Event[]> buf_;
    uint32_t cap_ = 0;
    uint32_t head_ = 0;
    uint32_t size_ = 0;
  };
  struct Candidate {
    int64_t delay = -1;
    uint32_t count = 0;
  };
  static constexpr int kCandidateBits = 8;

  Time clock_ = Time::zero();  // the last popped event's time
  uint32_t nonEmpty_ = 0;      // bit per lane with events
  int best_ = -1;              // the lane top() chose, or -1 for the heap
  int lanes_ = 0;
  size_t laneEvents_ = 0;
  int64_t delay_[kMaxLanes]{};
  Ring lane_[kMaxLanes];
  EventHeap<> heap_;  // events of other delays
  Candidate candidates_[1 << kCandidateBits];
};

}  // namespace fabricsim
