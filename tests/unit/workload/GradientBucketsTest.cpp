// GradientBuckets against a hand-worked layout: segments of 100, 50 and 30 elements laid end to
// end (0-100, 100-150, 150-180) cut into buckets of 60 (0-60, 60-120, 120-180).
#include <gtest/gtest.h>

#include "sim/workload/GradientBuckets.h"

using namespace fabricsim;

namespace {

GradientBuckets handWorked() {
  return GradientBuckets({{100, 0, 2}, {50, 0, 1}, {30, 0, 0}}, 60, true, 1, [](int64_t n) { return n; });
}

}  // namespace

TEST(GradientBuckets, BucketsOfConsecutiveElementsAndTheSegmentOfTheirLastElement) {
  const GradientBuckets b = handWorked();
  ASSERT_EQ(b.buckets(), 3u);
  EXPECT_EQ(b.elements(0), 60);
  EXPECT_EQ(b.elements(1), 60);
  EXPECT_EQ(b.elements(2), 60);
  EXPECT_EQ(b.lastSegment(0), 0u);  // element 59: segment 0
  EXPECT_EQ(b.lastSegment(1), 1u);  // element 119: segment 1
  EXPECT_EQ(b.lastSegment(2), 2u);  // element 179: segment 2
}

TEST(GradientBuckets, HoldsEverySegmentABucketOverlaps) {
  const GradientBuckets b = handWorked();
  const bool expected[3][3] = {{true, false, false},  // 0-60: segment 0 only
                               {true, true, false},   // 60-120: the end of 0, the start of 1
                               {false, true, true}};  // 120-180: the end of 1, all of 2
  for (size_t k = 0; k < 3; ++k)
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(b.holds(k, i), expected[k][i]) << "bucket " << k << " segment " << i;
}
