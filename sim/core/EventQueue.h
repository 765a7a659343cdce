// EventQueue: a 4-ary min-heap of plain event records ordered by (time, sequence number).
//
// Models: the pending-event set of a discrete-event simulation. Equal times pop in the order
// they were pushed (the sequence number breaks ties), so runs are deterministic.
// Records are 32 bytes ({when, seq, target, tag}); no allocation
// per event beyond amortised vector growth. Cancellation is lazy: components keep a
// generation number and ignore stale events.
// Units: Time (picoseconds).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/EventHandler.h"
#include "sim/core/Time.h"

namespace fabricsim {

struct Event {
  Time when;
  uint64_t seq;  ///< insertion order, for deterministic ties
  EventHandler* target;
  uint32_t tag;
};

class EventQueue {
 public:
  void push(Time when, EventHandler* target, uint32_t tag) {
    heap_.push_back(Event{when, nextSeq_++, target, tag});
    siftUp(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    Event out = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) siftDown(last);
    return out;
  }
  void clear() { heap_.clear(); }
  void reserve(size_t n) { heap_.reserve(n); }

 private:
  // One 128-bit key (time, then sequence) so comparisons compile to flag arithmetic rather
  // than unpredictable branches; times are never negative.
  static unsigned __int128 key(const Event& e) {
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.when.picos())) << 64) | e.seq;
  }
  static bool before(const Event& a, const Event& b) { return key(a) < key(b); }
  void siftUp(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) >> 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  // Places `e` (the former last element) starting from the root.
  void siftDown(const Event& e) {
    const size_t n = heap_.size();
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
      if (!(bestKey < key(e))) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t nextSeq_ = 0;
};

}  // namespace fabricsim
