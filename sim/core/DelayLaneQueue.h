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
//   at most kMaxLanes lanes, found by a hash of the delay. Every other event goes to a 4-ary heap
//   on (time, sequence).
// - The non-empty lanes' heads are kept in a small binary heap, so a pop costs O(log lanes) key
//   compares (a 1,024-host fat-tree with PFC fills 32 lanes: a scan of every head per pop was
//   40% of its instructions).
// - The delay is measured from the last popped event's time (the queue's own clock), which only
//   moves forward; that is what keeps each lane sorted, whatever the caller's clock does.
// Order: exactly (time, sequence), as a heap on the same keys, so this queue changes no result
// (tests/integration/PacketEngineReferenceTest.cpp).
// Leaves out: retiring lanes no longer used (an empty lane costs nothing per pop).
// Units: Time (picoseconds).
#pragma once

#include <cstdint>

#include "sim/core/EventHandler.h"
#include "sim/core/EventHeap.h"
#include "sim/core/Ring.h"
#include "sim/core/Time.h"

namespace fabricsim {

class DelayLaneQueue {
 public:
  static constexpr int kMaxLanes = 64;
  static constexpr uint32_t kPromoteAfter = 64;

  DelayLaneQueue() {
    for (int8_t& s : slot_) s = -1;
  }

  bool empty() const { return size() == 0; }
  size_t size() const { return laneEvents_ + heap_.size(); }
  /// Lanes in use (for tests and benchmarks).
  int lanes() const { return lanes_; }

  void push(const Event& e) {
    const int64_t delay = (e.when - clock_).picos();
    const int lane = laneFor(delay);
    if (lane >= 0) {
      Lane& r = lane_[lane];
      if (r.empty()) addHead(eventKey(e), lane);  // else behind the lane's head: the heads keep their order
      r.push(e);
      ++laneEvents_;
      return;
    }
    heap_.push(e);
  }
  /// The earliest event, or nullptr when empty.
  const Event* top() {
    const Event* best = heap_.empty() ? nullptr : &heap_.top();
    best_ = -1;
    if (heads_ > 0 && (best == nullptr || head_[0].key < eventKey(*best))) {
      best_ = head_[0].lane;
      best = &lane_[best_].front();
    }
    return best;
  }
  /// Removes the event top() returned (call top() first). Its time becomes the queue's clock.
  Event pop() {
    Event e;
    // The entry behind the popped one becomes a head, and so a candidate for one of the next few
    // pops: its target's hot lines (see prefetchHandler) are fetched now, while this event runs,
    // rather than when the loop calls it.
    if (best_ >= 0) {
      Lane& r = lane_[best_];
      e = r.pop();
      --laneEvents_;
      if (r.empty()) {
        removeHead();
      } else {
        prefetchHandler(r.front().target);
        head_[0].key = eventKey(r.front());  // a later key: it can only move down
        siftDown(0);
      }
      best_ = -1;
    } else {
      e = heap_.pop();
      if (!heap_.empty()) prefetchHandler(heap_.top().target);
    }
    clock_ = e.when;
    return e;
  }
  /// Moves the queue's clock to `t` (the time of an event taken from elsewhere; never backwards).
  void advance(Time t) {
    if (t > clock_) clock_ = t;
  }
  /// Gives back the buffers of empty lanes, and the heap's when it is empty.
  void releaseIdleMemory() {
    for (int l = 0; l < lanes_; ++l) lane_[l].releaseIfEmpty();
    if (heap_.empty()) heap_.release();
  }
  void clear() {
    for (int l = 0; l < lanes_; ++l) lane_[l].clear();
    heads_ = 0;
    laneEvents_ = 0;
    heap_.clear();
    best_ = -1;
  }

 private:
  int laneFor(int64_t delay) {
    // The lanes' delays sit in a small open-addressed table (at most half full): one probe for
    // most pushes, however many lanes there are.
    for (uint32_t i = slotOf(delay);; i = (i + 1) & (kSlots - 1)) {
      if (slot_[i] < 0) break;
      if (delay_[slot_[i]] == delay) return slot_[i];
    }
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
    const int lane = lanes_++;
    delay_[lane] = delay;
    uint32_t i = slotOf(delay);
    while (slot_[i] >= 0) i = (i + 1) & (kSlots - 1);
    slot_[i] = static_cast<int8_t>(lane);
    return lane;
  }
  static uint32_t slotOf(int64_t delay) {
    return static_cast<uint32_t>((static_cast<uint64_t>(delay) * 0x9E3779B97F4A7C15ULL) >> (64 - kSlotBits));
  }

  // The non-empty lanes ordered by their head's key: a binary min-heap of at most kMaxLanes
  // entries, so a pop costs O(log lanes) rather than a look at every lane.
  struct Head {
    unsigned __int128 key;
    int lane;
  };
  void addHead(unsigned __int128 key, int lane) {
    int i = heads_++;
    while (i > 0) {
      const int parent = (i - 1) >> 1;
      if (!(key < head_[parent].key)) break;
      head_[i] = head_[parent];
      i = parent;
    }
    head_[i] = Head{key, lane};
  }
  void removeHead() {
    head_[0] = head_[--heads_];
    if (heads_ > 0) siftDown(0);
  }
  void siftDown(int i) {
    const Head h = head_[i];
    while (true) {
      int c = 2 * i + 1;
      if (c >= heads_) break;
      if (c + 1 < heads_ && head_[c + 1].key < head_[c].key) ++c;
      if (!(head_[c].key < h.key)) break;
      head_[i] = head_[c];
      i = c;
    }
    head_[i] = h;
  }

  using Lane = Ring<Event, 64>;  // one lane: its events in (time, sequence) order
  struct Candidate {
    int64_t delay = -1;
    uint32_t count = 0;
  };
  static constexpr int kCandidateBits = 8;
  static constexpr int kSlotBits = 7;
  static constexpr uint32_t kSlots = 1u << kSlotBits;

  Time clock_ = Time::zero();  // the last popped event's time
  int heads_ = 0;              // entries of head_ (= non-empty lanes)
  int best_ = -1;              // the lane top() chose, or -1 for the heap
  int lanes_ = 0;
  size_t laneEvents_ = 0;
  int64_t delay_[kMaxLanes]{};
  Head head_[kMaxLanes];
  int8_t slot_[kSlots];  // delay table: lane index, or -1 for an empty slot
  Lane lane_[kMaxLanes];
  EventHeap<> heap_;  // events of other delays
  Candidate candidates_[1 << kCandidateBits];
};

}  // namespace fabricsim
