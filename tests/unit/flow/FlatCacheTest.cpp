// FlatCache against std::unordered_map: random keys (dense and sparse), growth through many
// doublings, lookups of absent keys, and the bound on entries.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "sim/flow/FlatCache.h"

using namespace fabricsim;

TEST(FlatCache, AgreesWithAMapThroughGrowthAndMisses) {
  std::mt19937_64 rng(3);
  FlatCache<uint32_t> cache(1u << 20);
  std::unordered_map<uint64_t, uint32_t> ref;
  for (int i = 0; i < 50000; ++i) {
    // Half the keys packed like the backend's (small fields in high bits), half arbitrary.
    const uint64_t key = i % 2 ? (static_cast<uint64_t>(rng() % 4096) << 40) | (rng() % 8192) << 19 | (rng() % 8)
                               : rng() % (UINT64_MAX - 1);
    if (!ref.count(key)) {
      ref[key] = static_cast<uint32_t>(i);
      cache.insert(key, static_cast<uint32_t>(i));
    }
  }
  EXPECT_EQ(cache.size(), ref.size());
  for (const auto& [k, v] : ref) {
    const uint32_t* got = cache.find(k);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(*got, v);
  }
  for (int i = 0; i < 10000; ++i) {
    const uint64_t key = rng() % (UINT64_MAX - 1);
    EXPECT_EQ(cache.find(key) != nullptr, ref.count(key) == 1);
  }
}

TEST(FlatCache, StopsStoringAtItsBound) {
  FlatCache<int> cache(100);
  EXPECT_EQ(cache.find(7), nullptr);  // empty table
  for (uint64_t k = 0; k < 1000; ++k) cache.insert(k, static_cast<int>(k));
  EXPECT_EQ(cache.size(), 100u);
  for (uint64_t k = 0; k < 100; ++k) ASSERT_NE(cache.find(k), nullptr);
  for (uint64_t k = 100; k < 1000; ++k) EXPECT_EQ(cache.find(k), nullptr);
}
