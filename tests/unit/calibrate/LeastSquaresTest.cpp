// LeastSquares (Ceres) against closed forms computed here: ordinary least squares of a line,
// with its covariance s^2 (X^T X)^-1; an exponential decay recovered exactly from noise-free
// data; and the same with the decay rate bounded below its true value, where the rate sits on
// the bound and the amplitude is the best one for that rate. Tolerances: the line and the
// bound's amplitude are closed forms. Ceres stops when the cost changes by less than 1e-12 of
// itself; an unknown off its optimum by a fraction d changes the cost by about d^2, so the
// unknowns are found to about 1e-6 relative: the tolerance on every solution. The covariance is
// computed at that solution, whose Jacobian (linear model) is exact: 1e-6 as well.
#include "sim/calibrate/LeastSquares.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace fabricsim;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
}

TEST(LeastSquares, LineAndItsCovarianceAsTheClosedForm) {
  std::vector<double> t, y;
  for (int i = 0; i < 10; ++i) {
    t.push_back(i);
    y.push_back(2.0 + 0.5 * i + (i % 2 == 0 ? 0.1 : -0.1) * (1 + 0.1 * i));
  }
  const auto r = [&](const std::vector<double>& x) {
    std::vector<double> out;
    for (size_t i = 0; i < t.size(); ++i) out.push_back(x[0] + x[1] * t[i] - y[i]);
    return out;
  };
  const auto res = LeastSquares::solve(r, {0, 0}, {-kInf, -kInf}, {kInf, kInf}, LeastSquares::Options{});
  // Normal equations: [n St; St Stt] [a b] = [Sy Sty].
  double n = 10, st = 0, stt = 0, sy = 0, sty = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    st += t[i];
    stt += t[i] * t[i];
    sy += y[i];
    sty += t[i] * y[i];
  }
  const double det = n * stt - st * st;
  const double a = (stt * sy - st * sty) / det, b = (n * sty - st * sy) / det;
  EXPECT_NEAR(res.x[0], a, 1e-6 * std::abs(a));
  EXPECT_NEAR(res.x[1], b, 1e-6 * std::abs(b));
  double ss = 0;
  for (size_t i = 0; i < t.size(); ++i) ss += std::pow(a + b * t[i] - y[i], 2);
  const double s2 = ss / (n - 2);
  ASSERT_EQ(res.covariance.size(), 4u);
  EXPECT_NEAR(res.covariance[0], s2 * stt / det, 1e-6 * s2 * stt / det);
  EXPECT_NEAR(res.covariance[1], -s2 * st / det, 1e-6 * s2 * st / det);
  EXPECT_NEAR(res.covariance[3], s2 * n / det, 1e-6 * s2 * n / det);
  EXPECT_NEAR(res.standardErrors[1], std::sqrt(s2 * n / det), 1e-6 * std::sqrt(s2 * n / det));
  EXPECT_TRUE(res.converged);
}

TEST(LeastSquares, DecayRecoveredAndABoundHolds) {
  std::vector<double> t, y;
  for (int i = 0; i < 20; ++i) {
    t.push_back(0.25 * i);
    y.push_back(3.0 * std::exp(-0.7 * 0.25 * i));
  }
  const auto r = [&](const std::vector<double>& x) {
    std::vector<double> out;
    for (size_t i = 0; i < t.size(); ++i) out.push_back(x[0] * std::exp(-x[1] * t[i]) - y[i]);
    return out;
  };
  const auto free = LeastSquares::solve(r, {1, 0.1}, {0, 0}, {kInf, kInf}, LeastSquares::Options{});
  EXPECT_NEAR(free.x[0], 3.0, 3e-6);
  EXPECT_NEAR(free.x[1], 0.7, 0.7e-6);
  // Rate at most 0.5: it sits on the bound, and the amplitude is sum y e^-0.5t / sum e^-t.
  const auto bound = LeastSquares::solve(r, {1, 0.1}, {0, 0}, {kInf, 0.5}, LeastSquares::Options{});
  EXPECT_DOUBLE_EQ(bound.x[1], 0.5);
  double num = 0, den = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    num += y[i] * std::exp(-0.5 * t[i]);
    den += std::exp(-t[i]);
  }
  EXPECT_NEAR(bound.x[0], num / den, 1e-6 * num / den);
}

// A model that cannot be evaluated anywhere (every residual NaN) ends the solve without a fit and
// without a covariance: Ceres' covariance of such a problem reads a Jacobian it never computed
// (it crashed `fabricsim calibrate` on a one-rank measurement).
TEST(LeastSquares, AModelWithNoFiniteResidualGivesNoCovariance) {
  const auto nan = [](const std::vector<double>&) {
    return std::vector<double>(3, std::numeric_limits<double>::quiet_NaN());
  };
  const auto r = LeastSquares::solve(nan, {1.0}, {-kInf}, {kInf}, LeastSquares::Options{});
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(r.covariance.empty());
  EXPECT_TRUE(r.standardErrors.empty());
}
