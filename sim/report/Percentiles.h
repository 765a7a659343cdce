// Percentiles: order statistics of a sample, by the nearest-rank method.
//
// Models: p50/p90/p99/max of FCTs, slowdowns and queue samples. Nearest rank: the smallest value
// with at least q of the sample at or below it, so every reported value was actually observed.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace fabricsim {

class Percentiles {
 public:
  /// Takes the sample by value and sorts it.
  explicit Percentiles(std::vector<double> sample) : v_(std::move(sample)) { std::sort(v_.begin(), v_.end()); }
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  /// q in [0, 1]; 0 for an empty sample.
  double at(double q) const {
    if (v_.empty()) return 0;
    const double rank = std::ceil(q * static_cast<double>(v_.size()));
    const size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
    return v_[std::min(i, v_.size() - 1)];
  }
  double max() const { return v_.empty() ? 0 : v_.back(); }
  double mean() const {
    if (v_.empty()) return 0;
    double s = 0;
    for (double x : v_) s += x;
    return s / static_cast<double>(v_.size());
  }

 private:
  std::vector<double> v_;
};

}  // namespace fabricsim
