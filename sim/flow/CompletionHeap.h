// CompletionHeap: the projected finish time of every active fluid flow, earliest first.
//
// Models: nothing physical; the flow backend's schedule of flow completions. Each flow has at
// most one entry, moved in place when a recomputation changes its rate (an indexed 4-ary
// min-heap), so the heap holds exactly the active flows: no stale entries pile up when rates
// change many times per flow. Ties on time pop in flow-id order (deterministic).
// Units: Time (picoseconds); flows are the solver's dense flow ids.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/Time.h"

namespace fabricsim {

class CompletionHeap {
 public:
  struct Entry {
    Time at;
    uint32_t flow;
  };

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  /// The earliest entry. Precondition: !empty().
  const Entry& top() const { return heap_.front(); }
  bool contains(uint32_t flow) const { return flow < pos_.size() && pos_[flow] != kNone; }

  /// Sets (adds or moves) the finish time of `flow`.
  void set(uint32_t flow, Time at) {
    if (flow >= pos_.size()) pos_.resize(flow + 1, kNone);
    const Entry e{at, flow};
    if (pos_[flow] == kNone) {
      heap_.push_back(e);
      siftUp(heap_.size() - 1, e);
      return;
    }
    const size_t i = pos_[flow];
    if (before(e, heap_[i]))
      siftUp(i, e);
    else
      siftDown(i, e);
  }
  /// Removes `flow`'s entry if it has one.
  void erase(uint32_t flow) {
    if (!contains(flow)) return;
    const size_t i = pos_[flow];
    pos_[flow] = kNone;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;  // it was the last one
    if (before(last, heap_[i]))
      siftUp(i, last);
    else
      siftDown(i, last);
  }
  size_t memoryBytes() const { return heap_.capacity() * sizeof(Entry) + pos_.capacity() * sizeof(uint32_t); }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static unsigned __int128 key(const Entry& e) {
    return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.at.picos())) << 64) | e.flow;
  }
  static bool before(const Entry& a, const Entry& b) { return key(a) < key(b); }
  void place(size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.flow] = static_cast<uint32_t>(i);
  }
  void siftUp(size_t i, const Entry& e) {
    while (i > 0) {
      const size_t parent = (i - 1) >> 2;
      if (!before(e, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void siftDown(size_t i, const Entry& e) {
    const size_t n = heap_.size();
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t end = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < end; ++c)
        if (before(heap_[c], heap_[best])) best = c;
      if (!before(heap_[best], e)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, e);
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;  ///< per flow id: its index in heap_, or kNone
};

}  // namespace fabricsim
