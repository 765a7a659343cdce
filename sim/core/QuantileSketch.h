// QuantileSketch: order statistics of a stream of non-negative values in constant memory, with
// a relative-error guarantee (the DDSketch of Masson, Rim and Lee, VLDB 2019).
//
// Models: each value x > 0 is counted in the logarithmic bucket i = ceil(log_gamma x), which
// holds (gamma^(i-1), gamma^i], gamma = (1 + alpha) / (1 - alpha); a bucket is reported as
// 2 gamma^i / (gamma + 1), which is within a relative alpha of every value in it. Values below
// kTiny (1e-12) are counted together and reported as the sample's minimum (an absolute error
// below 1e-12). Count, sum (so the mean), minimum and maximum are kept exactly.
// Guarantee: quantile(q) is within a relative alpha (plus floating-point rounding, ~1e-12) of the
// sample's nearest-rank q-quantile (the smallest value with at least q of the sample at or below
// it, which the results reported before the sketch); quantile(1) is the exact maximum and the smallest rank
// the exact minimum. Two sketches of the same alpha merge without any loss (their counts add). Memory: one
// 8-byte counter per bucket between the smallest and the largest value seen, that is at most ln(max / min) /
// ln(gamma) + 1 counters: about 2,300 (18 KiB) for 10 decades at the default alpha = 0.5%, whatever the
// number of values. Why not a library: Debian ships no C++ t-digest, DDSketch or KLL (only Go, Java, Rust and
// PostgreSQL ones); Boost.Accumulators' P-square estimators have no error bound and do not merge.
// Leaves out: negative values (refused), collapsing buckets to a fixed budget (not needed: the
// range of FCTs and slowdowns is bounded).
// Units: those of the values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim {

class QuantileSketch {
 public:
  static constexpr double kDefaultAlpha = 0.005;  ///< relative accuracy: 0.5%
  static constexpr double kTiny = 1e-12;          ///< values below count as zeros

  /// `alpha` in (0, 1): the relative accuracy of every quantile.
  explicit QuantileSketch(double alpha = kDefaultAlpha);

  /// Counts `x` (finite, >= 0).
  void add(double x);
  /// Adds every value counted by `other` (which must have the same alpha).
  void merge(const QuantileSketch& other);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// Nearest-rank q-quantile (q in [0, 1]) within a relative alpha; 0 for an empty sketch.
  double quantile(double q) const;
  double min() const { return count_ ? min_ : 0; }
  double max() const { return count_ ? max_ : 0; }
  double sum() const { return sum_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double alpha() const { return alpha_; }
  /// Bytes held (the object and its buckets).
  size_t memoryBytes() const { return sizeof(*this) + buckets_.capacity() * sizeof(uint64_t); }

 private:
  int32_t indexOf(double x) const;
  double valueOf(int32_t index) const;

  double alpha_, gamma_, lnGamma_;
  std::vector<uint64_t> buckets_;  ///< counts of buckets offset_, offset_ + 1, ...
  int32_t offset_ = 0;
  uint64_t zeros_ = 0;
  uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

}  // namespace fabricsim
