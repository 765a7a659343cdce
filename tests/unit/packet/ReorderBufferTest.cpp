#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "sim/core/Rng.h"
#include "sim/packet/ReorderBuffer.h"

using namespace fabricsim;

TEST(ReorderBuffer, AdvancesOverContiguousArrivals) {
  ReorderBuffer b;
  EXPECT_TRUE(b.insert(0, 2));
  EXPECT_TRUE(b.insert(0, 3));
  EXPECT_FALSE(b.insert(0, 3));  // duplicate
  EXPECT_EQ(b.advance(1), 1u);   // 1 still missing
  EXPECT_EQ(b.advance(2), 4u);   // 1 arrived (caller moved to 2): 2 and 3 are consumed
  EXPECT_TRUE(b.empty());
}

TEST(ReorderBuffer, RandomPermutationsDeliverEverythingOnce) {
  // Any arrival order of PSNs 0..n-1 ends with expected = n; the window slides over many words.
  Rng rng(17);
  for (int trial = 0; trial < 20; ++trial) {
    const uint32_t n = 1000 + static_cast<uint32_t>(rng.below(3000));
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    // Bounded reordering (like spraying over paths of different delay): local shuffles.
    for (uint32_t i = 0; i + 1 < n; ++i) std::swap(order[i], order[std::min<uint32_t>(n - 1, i + static_cast<uint32_t>(rng.below(200)))]);
    ReorderBuffer b;
    uint32_t expected = 0;
    for (uint32_t psn : order) {
      if (psn == expected) expected = b.advance(expected + 1);
      else if (psn > expected) b.insert(expected, psn);
    }
    EXPECT_EQ(expected, n);
    EXPECT_TRUE(b.empty());
  }
}
