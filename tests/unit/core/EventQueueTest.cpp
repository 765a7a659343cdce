#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/core/EventQueue.h"
#include "sim/core/Rng.h"
#include "sim/core/Simulator.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {

struct Recorder : EventHandler {
  std::vector<std::pair<int64_t, uint32_t>> seen;
  Simulator* sim = nullptr;
  void onEvent(uint32_t tag) override { seen.emplace_back(sim->now().picos(), tag); }
};

}  // namespace

TEST(EventQueue, PopsInTimeOrderAndTiesInInsertionOrder) {
  EventQueue q;
  Recorder r;
  Rng rng(7);
  std::vector<std::pair<int64_t, uint32_t>> expected;
  for (uint32_t i = 0; i < 5000; ++i) {
    const int64_t t = static_cast<int64_t>(rng.below(200));  // many ties
    q.push(Time::ps(t), &r, i);
    expected.emplace_back(t, i);
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& e : expected) {
    ASSERT_FALSE(q.empty());
    const Event ev = q.pop();
    EXPECT_EQ(ev.when.picos(), e.first);
    EXPECT_EQ(ev.tag, e.second);
  }
  EXPECT_TRUE(q.empty());
}

TEST(Simulator, RunsUntilAndAdvancesClock) {
  Simulator sim(3);
  Recorder r;
  r.sim = &sim;
  sim.schedule(10_ns, &r, 1);
  sim.schedule(5_ns, &r, 2);
  sim.schedule(30_ns, &r, 3);
  EXPECT_EQ(sim.run(20_ns), 2u);
  EXPECT_EQ(sim.now(), 20_ns);
  ASSERT_EQ(r.seen.size(), 2u);
  EXPECT_EQ(r.seen[0].second, 2u);
  EXPECT_EQ(r.seen[1].second, 1u);
  sim.run();
  EXPECT_EQ(sim.now(), 30_ns);
  EXPECT_EQ(sim.eventsProcessed(), 3u);
}

TEST(Rng, StreamsAreReproducibleAndIndependent) {
  Rng a = Rng::stream(42, "nic");
  Rng b = Rng::stream(42, "nic");
  Rng c = Rng::stream(42, "switch");
  Rng d = Rng::stream(43, "nic");
  int sameC = 0, sameD = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a();
    EXPECT_EQ(x, b());
    sameC += x == c();
    sameD += x == d();
  }
  EXPECT_EQ(sameC, 0);
  EXPECT_EQ(sameD, 0);
}

TEST(Rng, BelowIsUniform) {
  // Chi-square over 10 buckets, 100k draws: 9 degrees of freedom, 27.9 is the 0.1% critical value.
  Rng r(5);
  std::vector<int> counts(10, 0);
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[r.below(10)];
  double chi = 0;
  for (int c : counts) chi += (c - n / 10.0) * (c - n / 10.0) / (n / 10.0);
  EXPECT_LT(chi, 27.9);
}

TEST(Time, LiteralsAndArithmetic) {
  EXPECT_EQ((1_us).picos(), 1'000'000);
  EXPECT_EQ((1_ms + 500_us).picos(), 1'500'000'000);
  EXPECT_EQ((3_ns * 4).picos(), 12'000);
  EXPECT_DOUBLE_EQ((2_s).seconds(), 2.0);
}
