// ReorderBuffer: which PSNs a reorder-tolerant receiver has already placed beyond the one it
// expects next.
//
// Models: out-of-order placement as InfiniBand adaptive-routing and newer RoCE NICs do it: a
// packet ahead of the expected PSN is written to its place in the message and remembered; when
// the gap fills, the expected PSN jumps over everything already received. A bitmap window that
// slides with the expected PSN; it grows only as far ahead as packets actually arrive.
// Units: PSNs.
#pragma once

#include <cstdint>
#include <deque>

namespace fabricsim {

class ReorderBuffer {
 public:
  /// Records `psn` (> expected). Returns false if it was already recorded (a duplicate).
  bool insert(uint32_t expected, uint32_t psn) {
    align(expected);
    const uint32_t off = psn - base_;
    while (words_.size() <= off / 64) words_.push_back(0);
    uint64_t& w = words_[off / 64];
    const uint64_t bit = 1ULL << (off % 64);
    if (w & bit) return false;
    w |= bit;
    return true;
  }
  /// True if `psn` (> expected) has been recorded.
  bool contains(uint32_t expected, uint32_t psn) {
    align(expected);
    const uint32_t off = psn - base_;
    return off / 64 < words_.size() && (words_[off / 64] >> (off % 64)) & 1;
  }
  /// The expected PSN after consuming every recorded PSN contiguous with `expected`.
  uint32_t advance(uint32_t expected) {
    while (contains(expected, expected)) {
      const uint32_t off = expected - base_;
      words_[off / 64] &= ~(1ULL << (off % 64));  // consumed: only PSNs beyond `expected` stay set
      ++expected;
    }
    align(expected);
    return expected;
  }
  bool empty() const {
    for (uint64_t w : words_)
      if (w) return false;
    return true;
  }

 private:
  // Slides the window so that it starts at the 64-aligned word holding `expected`.
  void align(uint32_t expected) {
    const uint32_t start = expected & ~63u;
    while (base_ < start && !words_.empty()) {
      words_.pop_front();
      base_ += 64;
    }
    if (words_.empty()) base_ = start;
  }
  std::deque<uint64_t> words_;
  uint32_t base_ = 0;
};

}  // namespace fabricsim
