// QueueHistogram: buckets worked out by hand from its stated layout (exact below 4, then four
// sub-buckets per power of two), the percentiles at bucket upper bounds, and the mean at bucket
// midpoints.
#include "sim/packet/QueueHistogram.h"

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

TEST(QueueHistogram, BucketsAreExactBelowFourThenQuartersOfAnOctave) {
  // 100 lies in [64, 128), whose quarters are 16 wide: [96, 111] is the third.
  EXPECT_EQ(QueueHistogram::upperBound(QueueHistogram::bucket(100)), 111u);
  EXPECT_EQ(QueueHistogram::upperBound(QueueHistogram::bucket(96)), 111u);
  EXPECT_EQ(QueueHistogram::upperBound(QueueHistogram::bucket(95)), 95u);
  EXPECT_EQ(QueueHistogram::upperBound(QueueHistogram::bucket(3)), 3u);
}

TEST(QueueHistogram, MeanTakesEachSampleAtItsBucketsMidpoint) {
  QueueHistogram h;
  EXPECT_EQ(h.mean(), 0.0) << "no samples";
  h.add(0);
  h.add(2);
  h.add(100);  // bucket [96, 111]: midpoint 103.5
  EXPECT_DOUBLE_EQ(h.mean(), (0 + 2 + 103.5) / 3);
  // Within the stated error of the true mean (34): a midpoint is at most an eighth of its
  // bucket's lower bound away from any value in it.
  EXPECT_LE(h.mean(), 34 * 1.125);
  h.addZeros(3);
  EXPECT_DOUBLE_EQ(h.mean(), (0 + 2 + 103.5) / 6);
  EXPECT_EQ(h.percentile(0.5), 0u);
  EXPECT_EQ(h.percentile(1.0), 111u);
}

}  // namespace
}  // namespace fabricsim
