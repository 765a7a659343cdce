// GpuAllocator: rail-aligned rank order, first fit, explicit ranges, random policies.
#include "sim/runtime/GpuAllocator.h"

#include <gtest/gtest.h>

#include <set>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

TEST(GpuAllocatorTest, RailAlignedKeepsTpInAHostAndDpPeersOnOneRail) {
  for (const auto& l : {ParallelLayout{8, 4, 2}, ParallelLayout{4, 4, 4}, ParallelLayout{2, 2, 8}}) {
    const int gph = 8;
    const auto pos = GpuAllocator::railAlignedOrder(l, gph);
    const uint32_t n = static_cast<uint32_t>(l.tp * l.dp * l.pp);
    EXPECT_EQ(std::set<uint32_t>(pos.begin(), pos.end()).size(), n) << "a permutation";
    for (uint32_t r = 0; r < n; ++r) {
      EXPECT_LT(pos[r], n);
      const int t = static_cast<int>(r) % l.tp;
      // TP peers (same r - t) share the host.
      EXPECT_EQ(pos[r] / gph, pos[r - static_cast<uint32_t>(t)] / gph);
      // DP peer (next dp index, same tp and pp) has the same local index: same rail.
      const int d = (static_cast<int>(r) / l.tp) % l.dp;
      if (d + 1 < l.dp) {
        EXPECT_EQ(pos[r] % gph, pos[r + static_cast<uint32_t>(l.tp)] % gph);
      }
    }
  }
}

// in-order: the same whole hosts, rank r on the job's r-th GPU (Megatron's layout), even with a
// layout the rail-aligned order would permute (tp 4 on 8-GPU hosts puts two stages on a host).
TEST(GpuAllocatorTest, InOrderKeepsMegatronsRankOrder) {
  GpuAllocator a(64, 8, 1);
  PlacementSpec p;
  p.policy = PlacementPolicy::InOrder;
  const ParallelLayout l{4, 2, 4};
  ASSERT_NE(GpuAllocator::railAlignedOrder(l, 8)[4], 4u);  // rail-aligned would move rank 4
  const auto gpus = a.allocate(p, 32, &l, "a.yaml");
  for (uint32_t r = 0; r < 32; ++r) EXPECT_EQ(gpus[r], r);
}

TEST(GpuAllocatorTest, FirstFitTakesWholeHostsAndJobsDoNotOverlap) {
  GpuAllocator a(64, 8, 1);
  PlacementSpec p;
  const auto j1 = a.allocate(p, 12, nullptr, "a.yaml");  // two hosts, 12 GPUs used
  EXPECT_EQ(j1.front(), 0u);
  const auto j2 = a.allocate(p, 16, nullptr, "b.yaml");
  EXPECT_EQ(j2.front(), 16u) << "the next free whole host";
  EXPECT_EQ(a.freeGpus(), 64u - 28u);
  PlacementSpec explicitRange;
  explicitRange.explicitRange = true;
  explicitRange.firstGpu = 20;
  EXPECT_THROW(a.allocate(explicitRange, 4, nullptr, "c.yaml"), InputError);
  explicitRange.firstGpu = 40;
  EXPECT_EQ(a.allocate(explicitRange, 4, nullptr, "c.yaml").front(), 40u);
  EXPECT_THROW(a.allocate(p, 64, nullptr, "d.yaml"), InputError);
  EXPECT_THROW(a.reserve({40}, "e.json"), InputError);
}

TEST(GpuAllocatorTest, RandomPoliciesAreSeededAndSpread) {
  PlacementSpec p;
  p.policy = PlacementPolicy::RandomHosts;
  GpuAllocator a(1024, 8, 7), b(1024, 8, 7), c(1024, 8, 8);
  const auto x = a.allocate(p, 64, nullptr, "w");
  EXPECT_EQ(x, b.allocate(p, 64, nullptr, "w"));
  EXPECT_NE(x, c.allocate(p, 64, nullptr, "w"));
  for (size_t i = 0; i < x.size(); i += 8)
    for (size_t k = 1; k < 8; ++k) EXPECT_EQ(x[i + k], x[i] + k) << "whole hosts";
  p.policy = PlacementPolicy::Random;
  GpuAllocator d(1024, 8, 7);
  const auto y = d.allocate(p, 64, nullptr, "w");
  EXPECT_EQ(std::set<uint32_t>(y.begin(), y.end()).size(), 64u);
}

}  // namespace
}  // namespace fabricsim
