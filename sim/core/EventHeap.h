// EventHeap: a 4-ary min-heap of events on (time, sequence), optionally telling a tracker where
// each entry lands (for timers moved or cancelled in place).
//
// Models: nothing physical; the pending-event store for events that follow no pattern (the
// delays DelayLaneQueue has no lane for) and for re-armable timers (EventQueue). Four children
// per node halve the depth of a binary heap, and the 128-bit key makes each comparison flag
// arithmetic rather than a branch.
// Units: Time (picoseconds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/Time.h"

namespace fabricsim {

using TimerId = uint32_t;
/// Not a timer (one-shot events carry it). Timer ids start at 1.
inline constexpr TimerId kNoTimer = 0;

class EventHandler;

struct Event {
  Time when;
  uint64_t seq;  ///< insertion order, for deterministic ties
  EventHandler* target;
  uint32_t tag;
  TimerId timer = kNoTimer;  ///< the timer this entry belongs to, or kNoTimer (one-shot)
};

/// One 128-bit key (time, then sequence) so comparisons compile to flag arithmetic rather than
/// unpredictable branches; times are never negative.
inline unsigned __int128 eventKey(const Event& e) {
  return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.when.picos())) << 64) | e.seq;
}
inline bool eventBefore(const Event& a, const Event& b) {
  return eventKey(a) < eventKey(b);
}

/// A tracker that records nothing (a plain heap).
struct NoHeapTracking {
  void operator()(const Event&, size_t) const {}
};

template <typename Track = NoHeapTracking>
class EventHeap {
 public:
  explicit EventHeap(Track track = Track()) : track_(track) {}

  bool empty() const { return h_.empty(); }
  size_t size() const { return h_.size(); }
  const Event& top() const { return h_.front(); }
  const Event& at(size_t i) const { return h_[i]; }
  void clear() { h_.clear(); }
  /// Clears and gives the storage back.
  void release() { std::vector<Event>().swap(h_); }

  void push(const Event& e) {
    h_.push_back(e);
    siftUp(h_.size() - 1, e);
  }
  /// Removes and returns the earliest. Precondition: !empty().
  Event pop() {
    const Event out = h_.front();
    removeAt(0);
    return out;
  }
  /// Removes the entry at i.
  void removeAt(size_t i) {
    const Event last = h_.back();
    h_.pop_back();
    if (i == h_.size()) return;  // it was the last entry
    if (i > 0 && eventBefore(last, h_[(i - 1) >> 2]))
      siftUp(i, last);
    else
      siftDown(i, last);
  }
  /// Replaces the entry at i by `e` (a new key) and restores the order.
  void replaceAt(size_t i, const Event& e) {
    if (eventBefore(e, h_[i]))
      siftUp(i, e);
    else
      siftDown(i, e);
  }

 private:
  void put(size_t i, const Event& e) {
    h_[i] = e;
    track_(e, i);
  }
  // Places `e` at hole i and moves it up to where it belongs.
  void siftUp(size_t i, const Event& e) {
    while (i > 0) {
      const size_t parent = (i - 1) >> 2;
      if (!eventBefore(e, h_[parent])) break;
      put(i, h_[parent]);
      i = parent;
    }
    put(i, e);
  }
  // Places `e` at hole i and moves it down to where it belongs.
  void siftDown(size_t i, const Event& e) {
    const size_t n = h_.size();
    const unsigned __int128 ek = eventKey(e);
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      unsigned __int128 bestKey = eventKey(h_[first]);
      const size_t end = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < end; ++c) {
        const unsigned __int128 k = eventKey(h_[c]);
        const bool less = k < bestKey;
        best = less ? c : best;
        bestKey = less ? k : bestKey;
      }
      if (!(bestKey < ek)) break;
      put(i, h_[best]);
      i = best;
    }
    put(i, e);
  }

  std::vector<Event> h_;
  Track track_;
};

}  // namespace fabricsim
