#include "sim/core/QuantileSketch.h"

#include <algorithm>
#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {

QuantileSketch::QuantileSketch(double alpha)
    : alpha_(alpha), gamma_((1 + alpha) / (1 - alpha)), lnGamma_(std::log(gamma_)) {
  SIM_CHECK(alpha > 0 && alpha < 1, "QuantileSketch: alpha must be in (0, 1)");
}

int32_t QuantileSketch::indexOf(double x) const {
  return static_cast<int32_t>(std::ceil(std::log(x) / lnGamma_));
}

double QuantileSketch::valueOf(int32_t index) const {
  // The point of (gamma^(i-1), gamma^i] with the same relative distance alpha to both ends.
  return 2 * std::exp(static_cast<double>(index) * lnGamma_) / (gamma_ + 1);
}

void QuantileSketch::add(double x) {
  SIM_CHECK(std::isfinite(x) && x >= 0, "QuantileSketch: values must be finite and non-negative");
  min_ = count_ == 0 ? x : std::min(min_, x);
  max_ = count_ == 0 ? x : std::max(max_, x);
  ++count_;
  sum_ += x;
  if (x < kTiny) {
    ++zeros_;
    return;
  }
  const int32_t i = indexOf(x);
  if (buckets_.empty()) {
    offset_ = i;
    buckets_.push_back(0);
  } else if (i < offset_) {
    buckets_.insert(buckets_.begin(), static_cast<size_t>(offset_ - i), 0);
    offset_ = i;
  } else if (static_cast<size_t>(i - offset_) >= buckets_.size()) {
    buckets_.resize(static_cast<size_t>(i - offset_) + 1, 0);
  }
  ++buckets_[static_cast<size_t>(i - offset_)];
}

void QuantileSketch::merge(const QuantileSketch& other) {
  SIM_CHECK(other.alpha_ == alpha_, "QuantileSketch: merging sketches of different accuracy");
  if (other.count_ == 0) return;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  zeros_ += other.zeros_;
  if (other.buckets_.empty()) return;
  const int32_t otherLast = other.offset_ + static_cast<int32_t>(other.buckets_.size()) - 1;
  if (buckets_.empty()) {
    buckets_ = other.buckets_;
    offset_ = other.offset_;
    return;
  }
  if (other.offset_ < offset_) {
    buckets_.insert(buckets_.begin(), static_cast<size_t>(offset_ - other.offset_), 0);
    offset_ = other.offset_;
  }
  if (static_cast<size_t>(otherLast - offset_) >= buckets_.size())
    buckets_.resize(static_cast<size_t>(otherLast - offset_) + 1, 0);
  for (size_t k = 0; k < other.buckets_.size(); ++k)
    buckets_[static_cast<size_t>(other.offset_ - offset_) + k] += other.buckets_[k];
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) return 0;
  // Nearest rank (1-based): the smallest value with at least q of the sample at or below it.
  const double r = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_));
  const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(r), 1, count_);
  if (rank == count_) return max_;
  if (rank <= zeros_ || rank == 1) return min_;
  uint64_t seen = zeros_;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    seen += buckets_[k];
    // Clamping to the exact extremes only moves the estimate towards the true value.
    if (seen >= rank) return std::clamp(valueOf(offset_ + static_cast<int32_t>(k)), min_, max_);
  }
  return max_;  // not reached: the buckets hold every non-zero value
}

}  // namespace fabricsim
