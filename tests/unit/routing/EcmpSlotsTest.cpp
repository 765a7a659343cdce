// EcmpSlots: slot shares, weight reduction and the resilient rebalance, against hand-worked
// examples.
#include "sim/routing/EcmpSlots.h"

#include <gtest/gtest.h>

#include <vector>

using namespace fabricsim;

TEST(EcmpSlots, ApportionByLargestRemainder) {
  std::vector<uint32_t> out;
  // 3 : 4 : 4 : 4 over 15 and over 240 (= 16 x 15): exact.
  EcmpSlots::apportion(std::vector<uint64_t>{3, 4, 4, 4}, 15, {}, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{3, 4, 4, 4}));
  EcmpSlots::apportion(std::vector<uint64_t>{300, 400, 400, 400}, 240, {}, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{48, 64, 64, 64}));
  // 256 over 3 equal members: 85 each and one left over, to the lowest index...
  EcmpSlots::apportion(std::vector<uint64_t>{1, 1, 1}, 256, {}, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{86, 85, 85}));
  // ...or to the member holding most buckets now.
  EcmpSlots::apportion(std::vector<uint64_t>{1, 1, 1}, 256, std::vector<uint32_t>{10, 50, 40}, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{85, 86, 85}));
  // 1 : 2 over 10: 3.33 and 6.67 -> 3 and 7 (larger remainder first).
  EcmpSlots::apportion(std::vector<uint64_t>{1, 2}, 10, {}, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{3, 7}));
}

TEST(EcmpSlots, ReduceByGreatestCommonDivisorOrCap) {
  std::vector<uint32_t> out;
  EcmpSlots::reduce(std::vector<uint64_t>{300'000'000'000, 400'000'000'000, 400'000'000'000}, 512, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{3, 4, 4}));
  // 1000 : 1 does not fit 100 slots: 99 : 1 (the small member keeps one slot).
  EcmpSlots::reduce(std::vector<uint64_t>{1000, 1}, 100, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{100, 1}));
  EcmpSlots::reduce(std::vector<uint64_t>{7, 0, 14}, 100, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{1, 0, 2}));
}

TEST(EcmpSlots, RebalanceMovesOnlyWhatItMust) {
  constexpr PortId A = 10, B = 11, C = 12, D = 13;
  std::vector<PortId> out;
  // B leaves: its buckets (2, 3) go to A and C; every other bucket stays.
  EcmpSlots::rebalance(std::vector<PortId>{A, A, B, B, C, C}, std::vector<PortId>{A, C},
                       std::vector<uint32_t>{3, 3}, out);
  EXPECT_EQ(out, (std::vector<PortId>{A, A, A, C, C, C}));
  // D joins with a share of 2 of 8: A and C each give up their last bucket above 3.
  EcmpSlots::rebalance(std::vector<PortId>{A, A, A, A, C, C, C, C}, std::vector<PortId>{A, C, D},
                       std::vector<uint32_t>{3, 3, 2}, out);
  EXPECT_EQ(out, (std::vector<PortId>{A, A, A, D, C, C, C, D}));
  // From nothing: contiguous shares in member order.
  EcmpSlots::rebalance(std::vector<PortId>(5, kInvalid), std::vector<PortId>{B, D},
                       std::vector<uint32_t>{2, 3}, out);
  EXPECT_EQ(out, (std::vector<PortId>{B, B, D, D, D}));
}
