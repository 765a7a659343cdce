#include "sim/calibrate/LevenbergMarquardt.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fabricsim {
namespace {

TEST(LevenbergMarquardt, RecoversAnExponentialDecay) {
  // y = a exp(-b t) + c, noise-free: the fit must land on (a, b, c) from a poor start.
  const double a = 5, b = 0.7, c = 1.5;
  std::vector<double> t, y;
  for (int i = 0; i < 30; ++i) {
    t.push_back(0.25 * i);
    y.push_back(a * std::exp(-b * t.back()) + c);
  }
  auto r = [&](const std::vector<double>& x) {
    std::vector<double> out;
    for (size_t i = 0; i < t.size(); ++i) out.push_back(x[0] * std::exp(-x[1] * t[i]) + x[2] - y[i]);
    return out;
  };
  const auto res = LevenbergMarquardt::solve(r, {1, 2, 0});
  ASSERT_TRUE(res.converged);
  EXPECT_NEAR(res.x[0], a, 1e-5);
  EXPECT_NEAR(res.x[1], b, 1e-5);
  EXPECT_NEAR(res.x[2], c, 1e-5);
  EXPECT_LT(res.cost, 1e-12);
}

TEST(LevenbergMarquardt, CholeskySolvesAndRejectsIndefinite) {
  std::vector<double> x;
  ASSERT_TRUE(LevenbergMarquardt::choleskySolve({4, 2, 2, 3}, {2, 1}, 2, x));
  EXPECT_NEAR(4 * x[0] + 2 * x[1], 2, 1e-12);
  EXPECT_NEAR(2 * x[0] + 3 * x[1], 1, 1e-12);
  EXPECT_FALSE(LevenbergMarquardt::choleskySolve({1, 2, 2, 1}, {1, 1}, 2, x));
}

}  // namespace
}  // namespace fabricsim
