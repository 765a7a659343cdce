// MeanInterval against closed forms of Student's t: with one degree of freedom t is Cauchy,
// t(p) = tan(pi (p - 1/2)); with two, t(p) = (2p - 1) / sqrt(2 p (1 - p)); for many, the
// normal quantile 1.959964; and a hand-worked sample.
#include "sim/report/MeanInterval.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fabricsim {
namespace {

TEST(MeanIntervalTest, CriticalValuesMatchClosedForms) {
  const double p = 0.975;
  // Tables round to three decimals: 5e-4.
  EXPECT_NEAR(MeanInterval::t975(1), std::tan(M_PI * (p - 0.5)), 5e-4);
  EXPECT_NEAR(MeanInterval::t975(2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 5e-4);
  // Beyond the table: between the normal quantile and the last tabulated value, decreasing.
  EXPECT_GT(MeanInterval::t975(31), 1.959964);
  EXPECT_LT(MeanInterval::t975(31), MeanInterval::t975(30));
  EXPECT_NEAR(MeanInterval::t975(40), 2.021, 5e-4) << "published t(0.975, 40)";
  EXPECT_NEAR(MeanInterval::t975(120), 1.980, 5e-4) << "published t(0.975, 120)";
  EXPECT_NEAR(MeanInterval::t975(1000000), 1.959964, 1e-5);
}

TEST(MeanIntervalTest, HandWorkedSample) {
  // {1, 2, 3}: mean 2, s = 1, half-width t(0.975, 2) / sqrt(3) = 4.3027 / 1.7321 = 2.4841.
  const MeanInterval m = MeanInterval::of({1, 2, 3});
  EXPECT_EQ(m.n, 3u);
  EXPECT_DOUBLE_EQ(m.mean, 2.0);
  EXPECT_NEAR(m.stddev, 1.0, 1e-12);
  EXPECT_NEAR(m.halfWidth, 2.4841, 5e-4);
  EXPECT_NEAR(m.low(), 2 - 2.4841, 5e-4);
  const MeanInterval one = MeanInterval::of({5});
  EXPECT_EQ(one.halfWidth, 0.0) << "one run: no spread to estimate";
  EXPECT_EQ(MeanInterval::of({}).n, 0u);
}

}  // namespace
}  // namespace fabricsim
