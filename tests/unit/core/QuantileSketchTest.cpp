// QuantileSketch against exact order statistics: samples whose sorted order the test knows
// (a closed form, or std::sort of the same values), compared rank by rank with the sketch's
// stated guarantee, |estimate - exact| <= alpha x exact, where exact is the nearest-rank
// quantile (the ceil(q n)-th smallest value).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/core/QuantileSketch.h"

namespace fabricsim {
namespace {

// The guarantee is alpha exactly; floating-point rounding of log/exp near a bucket boundary can
// add a few ulps of relative error, far below 1e-9.
constexpr double kRounding = 1e-9;

/// The nearest-rank q-quantile of a sorted sample: the ceil(q n)-th smallest (at least the first).
double nearestRank(const std::vector<double>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  const double rank = std::max(1.0, std::ceil(q * n));
  return sorted[static_cast<size_t>(rank) - 1];
}

std::vector<double> quantileGrid() {
  std::vector<double> qs = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0};
  for (int i = 1; i < 200; ++i) qs.push_back(i / 200.0);
  return qs;
}

void expectWithinAlpha(const QuantileSketch& s, std::vector<double> sample) {
  std::sort(sample.begin(), sample.end());
  for (double q : quantileGrid()) {
    const double exact = nearestRank(sample, q);
    EXPECT_LE(std::abs(s.quantile(q) - exact), (s.alpha() + kRounding) * exact)
        << "q " << q << " exact " << exact << " sketch " << s.quantile(q);
  }
}

TEST(QuantileSketch, IntegersOneToNMatchTheirClosedFormQuantiles) {
  // 1, 2, ..., n: the nearest-rank q-quantile is ceil(q n) itself (no sorting needed).
  const int n = 100000;
  QuantileSketch s;
  for (int i = n; i >= 1; --i) s.add(i);  // descending: buckets grow downwards too
  for (double q : quantileGrid()) {
    const double exact = std::max(1.0, std::ceil(q * n));
    EXPECT_LE(std::abs(s.quantile(q) - exact), (s.alpha() + kRounding) * exact) << q;
  }
  EXPECT_EQ(s.count(), static_cast<uint64_t>(n));
  EXPECT_DOUBLE_EQ(s.mean(), (n + 1) / 2.0);  // exact: every value is summed
  EXPECT_EQ(s.min(), 1.0);
  EXPECT_EQ(s.max(), static_cast<double>(n));
  EXPECT_EQ(s.quantile(1.0), static_cast<double>(n));  // the maximum is exact
  EXPECT_EQ(s.quantile(0.0), 1.0);                     // and so is the smallest rank
}

TEST(QuantileSketch, ExponentialSampleWithinAlphaOfItsOrderStatistics) {
  // Stratified exponential sample, mean 50: x_i = -50 ln(1 - (i - 0.5) / n), already sorted; its
  // nearest-rank quantiles approach the closed form -50 ln(1 - q).
  const int n = 50000;
  std::vector<double> x(n);
  QuantileSketch s;
  for (int i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = -50.0 * std::log(1.0 - (i + 0.5) / n);
    s.add(x[static_cast<size_t>(i)]);
  }
  expectWithinAlpha(s, x);
  // The closed form itself, for the median and p99 (the sample's order statistics differ from
  // it by less than one stratum, 1/n of the probability: a relative 1e-3 at most here).
  EXPECT_NEAR(s.quantile(0.5), 50.0 * std::log(2.0), (s.alpha() + 1e-3) * 50.0 * std::log(2.0));
  EXPECT_NEAR(s.quantile(0.99), 50.0 * std::log(100.0), (s.alpha() + 1e-3) * 50.0 * std::log(100.0));
}

TEST(QuantileSketch, LogNormalOverTwelveDecadesInRandomOrder) {
  // exp(N(0, 4)): values from about 1e-7 to 1e7, the range of FCTs in us and beyond.
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal(0.0, 4.0);
  std::vector<double> x;
  QuantileSketch s;
  for (int i = 0; i < 200000; ++i) {
    x.push_back(std::exp(normal(rng)));
    s.add(x.back());
  }
  expectWithinAlpha(s, x);
}

TEST(QuantileSketch, ErrorBoundIsReachedButNeverExceeded) {
  // A sample {tiny, x, huge}: its median is x. Sweeping x finely across one bucket, the
  // reported median's relative error approaches alpha at the bucket's ends (the representative
  // is equally far, relatively, from both) and never passes it.
  const double alpha = QuantileSketch::kDefaultAlpha;
  const double gamma = (1 + alpha) / (1 - alpha);
  double worst = 0;
  for (int k = 0; k <= 2000; ++k) {
    const double x = 1000.0 * std::pow(gamma, k / 1000.0);  // two buckets' worth
    QuantileSketch s;
    s.add(1e-3);
    s.add(x);
    s.add(1e6);
    const double err = std::abs(s.quantile(0.5) - x) / x;
    EXPECT_LE(err, alpha + kRounding) << x;
    worst = std::max(worst, err);
  }
  EXPECT_GT(worst, 0.99 * alpha);  // the bound is tight: a coarser sketch would fail the above
}

TEST(QuantileSketch, ZerosAndMergeLoseNothing) {
  // Two halves, one with zeros, merged: the same answers as one sketch of everything, and
  // within alpha of the exact union.
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> e(0.01);
  QuantileSketch a, b, all;
  std::vector<double> x;
  for (int i = 0; i < 30000; ++i) {
    const double v = i % 10 == 0 ? 0.0 : e(rng);
    x.push_back(v);
    (i % 2 ? a : b).add(v);
    all.add(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  for (double q : quantileGrid()) EXPECT_EQ(a.quantile(q), all.quantile(q)) << q;
  expectWithinAlpha(a, x);
  EXPECT_EQ(a.quantile(0.05), 0.0);  // 10% of the sample is zero
  QuantileSketch empty;
  EXPECT_EQ(empty.quantile(0.5), 0.0);
  a.merge(empty);
  EXPECT_EQ(a.count(), all.count());
}

TEST(QuantileSketch, MemoryIsBoundedByTheRangeNotTheCount) {
  // Counters span [ceil(log_gamma min), ceil(log_gamma max)]: at most ln(max/min)/ln(gamma) + 2
  // of them, however many values. A million values over ten decades (1e-3 .. 1e7):
  const double alpha = QuantileSketch::kDefaultAlpha;
  const double lnGamma = std::log((1 + alpha) / (1 - alpha));
  const double counters = std::log(1e10) / lnGamma + 2;
  QuantileSketch s;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> exponent(-3.0, 7.0);
  s.add(1e-3);
  s.add(1e7);
  for (int i = 0; i < 1000000; ++i) s.add(std::pow(10.0, exponent(rng)));
  // A vector's capacity may exceed its size by its growth factor (2 in libstdc++).
  EXPECT_LE(s.memoryBytes(), sizeof(QuantileSketch) + static_cast<size_t>(2 * counters) * sizeof(uint64_t));
  EXPECT_LT(s.memoryBytes(), 64u * 1024);  // against a million values: 8 MB as doubles
}

}  // namespace
}  // namespace fabricsim
