// QueueHistogram: the distribution of a queue's length as seen by arriving packets.
//
// Models: occupancy percentiles without storing samples: log-spaced buckets with four
// sub-buckets per power of two (values are reported as the bucket's upper bound, at most 19%
// above the true value; 0 is exact). 128 buckets of 32-bit counts cover 0 .. 2^32 bytes.
// Units: bytes.
#pragma once

#include <array>
#include <cstdint>

namespace fabricsim {

class QueueHistogram {
 public:
  static constexpr int kBuckets = 128;
  void add(uint64_t v) { ++counts_[bucket(v)]; }
  /// Adds `n` samples of value 0 (callers count empty-queue arrivals on a hot cache line).
  void addZeros(uint64_t n) { counts_[0] += static_cast<uint32_t>(n); }
  void merge(const QueueHistogram& o) {
    for (int i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  }
  uint64_t count() const {
    uint64_t t = 0;
    for (uint32_t c : counts_) t += c;
    return t;
  }
  /// Smallest bucket upper bound with at least q of the samples at or below it.
  uint64_t percentile(double q) const {
    const uint64_t total = count();
    if (total == 0) return 0;
    const double need = q * static_cast<double>(total);
    uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (static_cast<double>(seen) >= need && seen > 0) return upperBound(i);
    }
    return upperBound(kBuckets - 1);
  }
  /// The mean, each sample at its bucket's midpoint (exact below 4; 0 without samples).
  double mean() const {
    double sum = 0;
    uint64_t total = 0;
    for (int i = 0; i < kBuckets; ++i) {
      if (counts_[i] == 0) continue;
      const double lo = i < 4 ? static_cast<double>(i) : static_cast<double>(upperBound(i - 1) + 1);
      sum += static_cast<double>(counts_[i]) * (lo + static_cast<double>(upperBound(i))) / 2;
      total += counts_[i];
    }
    return total > 0 ? sum / static_cast<double>(total) : 0.0;
  }
  static int bucket(uint64_t v) {
    if (v < 4) return static_cast<int>(v);
    const int e = 63 - __builtin_clzll(v);                 // floor(log2 v) >= 2
    const int sub = static_cast<int>((v >> (e - 2)) & 3);  // next two bits
    const int b = 4 * (e - 1) + sub;
    return b < kBuckets ? b : kBuckets - 1;
  }
  static uint64_t upperBound(int b) {
    if (b < 4) return static_cast<uint64_t>(b);
    const int e = b / 4 + 1;
    const int sub = b % 4;
    return ((4ULL + static_cast<uint64_t>(sub) + 1) << (e - 2)) - 1;
  }

 private:
  std::array<uint32_t, kBuckets> counts_{};
};

}  // namespace fabricsim
