// MaxMinSolver against closed-form max-min allocations (one shared link, the parking lot, two
// bottlenecks, weighted hops), incremental recomputation of only the touched component, the
// max-min optimality conditions on a randomized instance, agreement of incremental solves with
// a solve from scratch, and the changed-callback reporting exactly the flows whose rate moved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <random>
#include <set>
#include <vector>

#include "sim/flow/MaxMinSolver.h"

using namespace fabricsim;

namespace {

using Hop = MaxMinSolver::Hop;

/// Solves and returns the flows the callback reported, with the old rates it passed.
std::map<uint32_t, double> solveAll(MaxMinSolver& s) {
  std::map<uint32_t, double> changed;
  s.solve([&](uint32_t f, double old) {
    EXPECT_FALSE(changed.count(f)) << "flow " << f << " reported twice";
    changed[f] = old;
  });
  return changed;
}

uint32_t flowOn(MaxMinSolver& s, std::initializer_list<uint32_t> resources, float weight = 1.0f) {
  std::vector<Hop> hops;
  for (uint32_t r : resources) hops.push_back({r, weight});
  return s.addFlow(hops);
}

bool near(double a, double b, double rel = 1e-9) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

/// The max-min optimality conditions: feasibility, and every flow has a saturated bottleneck on
/// which no other flow has a larger rate.
void expectMaxMinOptimal(const MaxMinSolver& s, const std::vector<uint32_t>& flows) {
  std::vector<double> used(s.resources(), 0.0);
  std::vector<double> maxRate(s.resources(), 0.0);
  for (uint32_t f : flows) {
    EXPECT_GT(s.rate(f), 0.0) << "flow " << f;
    for (const Hop& h : s.hops(f)) {
      used[h.resource] += s.rate(f) * h.weight;
      maxRate[h.resource] = std::max(maxRate[h.resource], s.rate(f));
    }
  }
  for (uint32_t r = 0; r < s.resources(); ++r)
    EXPECT_LE(used[r], s.capacity(r) * (1 + 1e-9)) << "resource " << r << " over capacity";
  for (uint32_t f : flows) {
    bool hasBottleneck = false;
    for (const Hop& h : s.hops(f)) {
      const bool saturated = used[h.resource] >= s.capacity(h.resource) * (1 - 1e-9);
      const bool maximal = s.rate(f) >= maxRate[h.resource] * (1 - 1e-9);
      if (saturated && maximal) hasBottleneck = true;
    }
    EXPECT_TRUE(hasBottleneck) << "flow " << f << " (rate " << s.rate(f) << ") has no bottleneck";
  }
}

/// A random path of 1..5 distinct resources out of `resources`.
std::vector<Hop> randomPath(std::mt19937_64& rng, uint32_t resources, bool weighted) {
  std::uniform_int_distribution<int> len(1, 5);
  std::uniform_int_distribution<uint32_t> pick(0, resources - 1);
  std::uniform_real_distribution<double> w(0.1, 1.0);
  std::set<uint32_t> used;
  const int n = len(rng);
  while (static_cast<int>(used.size()) < n) used.insert(pick(rng));
  std::vector<Hop> hops;
  for (uint32_t r : used) hops.push_back({r, weighted ? static_cast<float>(w(rng)) : 1.0f});
  std::shuffle(hops.begin(), hops.end(), rng);
  return hops;
}

using Live = std::map<uint32_t, std::vector<Hop>>;  // solver id -> path

/// Removes `k` live flows picked at random.
void removeRandom(MaxMinSolver& s, Live& live, int k, std::mt19937_64& rng) {
  for (; k > 0 && !live.empty(); --k) {
    auto it = live.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng));
    s.removeFlow(it->first);
    live.erase(it);
  }
}

/// `s` has the rates of a fresh solver holding only the live flows, and they are max-min optimal.
void expectSameAsFromScratch(const MaxMinSolver& s, const std::vector<double>& caps, const Live& live, int round) {
  MaxMinSolver fresh;
  for (double c : caps) fresh.addResource(c);
  std::map<uint32_t, uint32_t> id;
  for (const auto& [f, p] : live) id[f] = fresh.addFlow(p);
  solveAll(fresh);
  std::vector<uint32_t> ids;
  for (const auto& [f, p] : live) {
    EXPECT_TRUE(near(s.rate(f), fresh.rate(id[f]), 1e-9))
        << "round " << round << " flow " << f << ": " << s.rate(f) << " vs " << fresh.rate(id[f]);
    ids.push_back(f);
  }
  expectMaxMinOptimal(s, ids);
}

}  // namespace

TEST(MaxMinSolver, OneLinkSharedEquallyByNFlows) {
  for (int n : {1, 2, 3, 7, 64}) {
    MaxMinSolver s;
    const uint32_t link = s.addResource(12.5);
    std::vector<uint32_t> flows;
    for (int i = 0; i < n; ++i) flows.push_back(flowOn(s, {link}));
    for (uint32_t f : flows) EXPECT_EQ(s.rate(f), 0.0);  // nothing until the solve
    EXPECT_TRUE(s.pending());
    const auto changed = solveAll(s);
    EXPECT_FALSE(s.pending());
    EXPECT_EQ(changed.size(), static_cast<size_t>(n));
    for (uint32_t f : flows) EXPECT_TRUE(near(s.rate(f), 12.5 / n)) << n << " flows: " << s.rate(f);
    EXPECT_DOUBLE_EQ(s.load(link), n);
    EXPECT_EQ(s.activeFlows(), static_cast<size_t>(n));
  }
}

TEST(MaxMinSolver, ParkingLotGivesEveryFlowHalf) {
  // Links A, B, C of capacity 10; one long flow over all three and one short flow per link.
  MaxMinSolver s;
  const uint32_t a = s.addResource(10), b = s.addResource(10), c = s.addResource(10);
  const uint32_t longFlow = flowOn(s, {a, b, c});
  const uint32_t fa = flowOn(s, {a}), fb = flowOn(s, {b}), fc = flowOn(s, {c});
  solveAll(s);
  for (uint32_t f : {longFlow, fa, fb, fc}) EXPECT_TRUE(near(s.rate(f), 5.0)) << f << ": " << s.rate(f);
  expectMaxMinOptimal(s, {longFlow, fa, fb, fc});
}

TEST(MaxMinSolver, FlowLimitedElsewhereLeavesTheRemainderToOthers) {
  // link1 cap 10: f1, f2; link2 cap 4: f2, f3 -> f2 = f3 = 2 (link2), f1 = 10 - 2 = 8.
  MaxMinSolver s;
  const uint32_t l1 = s.addResource(10), l2 = s.addResource(4);
  const uint32_t f1 = flowOn(s, {l1}), f2 = flowOn(s, {l1, l2}), f3 = flowOn(s, {l2});
  solveAll(s);
  EXPECT_TRUE(near(s.rate(f1), 8.0)) << s.rate(f1);
  EXPECT_TRUE(near(s.rate(f2), 2.0)) << s.rate(f2);
  EXPECT_TRUE(near(s.rate(f3), 2.0)) << s.rate(f3);
  expectMaxMinOptimal(s, {f1, f2, f3});
}

TEST(MaxMinSolver, ThreeLevelWaterFilling) {
  // l1 cap 3 shared by f1..f3 (1 each); l2 cap 5 with f3, f4, f5 -> f4 = f5 = 2;
  // l3 cap 10 with f5, f6 -> f6 = 8.
  MaxMinSolver s;
  const uint32_t l1 = s.addResource(3), l2 = s.addResource(5), l3 = s.addResource(10);
  const uint32_t f1 = flowOn(s, {l1}), f2 = flowOn(s, {l1}), f3 = flowOn(s, {l1, l2});
  const uint32_t f4 = flowOn(s, {l2}), f5 = flowOn(s, {l2, l3}), f6 = flowOn(s, {l3});
  solveAll(s);
  const std::vector<double> want = {1, 1, 1, 2, 2, 8};
  const std::vector<uint32_t> flows = {f1, f2, f3, f4, f5, f6};
  for (size_t i = 0; i < flows.size(); ++i) EXPECT_TRUE(near(s.rate(flows[i]), want[i])) << i << ": " << s.rate(flows[i]);
  expectMaxMinOptimal(s, flows);
}

TEST(MaxMinSolver, HalfWeightOnTwoParallelLinksDoublesTheRate) {
  // A sprayed flow carrying half its rate on each of two links of capacity 1 runs at 2.
  MaxMinSolver s;
  const uint32_t a = s.addResource(1), b = s.addResource(1);
  const uint32_t f = flowOn(s, {a, b}, 0.5f);
  solveAll(s);
  EXPECT_TRUE(near(s.rate(f), 2.0)) << s.rate(f);
  EXPECT_DOUBLE_EQ(s.load(a), 0.5);
  // A second, unsprayed flow on link a: a carries 0.5 r1 + r2 <= 1 and b 0.5 r1 <= 1.
  // Max-min: both share link a's fill level r = 1 / 1.5 = 2/3 each.
  const uint32_t g = flowOn(s, {a});
  solveAll(s);
  EXPECT_TRUE(near(s.rate(f), 2.0 / 3)) << s.rate(f);
  EXPECT_TRUE(near(s.rate(g), 2.0 / 3)) << s.rate(g);
  expectMaxMinOptimal(s, {f, g});
}

TEST(MaxMinSolver, AWeightAboveOneIsABundleOfFlowsOnThatResource) {
  // A pipeline of three edges moved as one flow (FlowFabric::sendGroup) whose edges all cross
  // link a: weight 3 there. With a lone flow on a (capacity 1), link a's fill level r satisfies
  // 3 r + r = 1: both run at 1/4 (the bundle's three edges each at 1/4, as three flows would
  // be). Worked by hand. Link b (capacity 1, weight 1 of the bundle) is then not its bottleneck.
  MaxMinSolver s;
  const uint32_t a = s.addResource(1), b = s.addResource(1);
  const uint32_t bundle = s.addFlow(std::vector<MaxMinSolver::Hop>{{a, 3.0f}, {b, 1.0f}});
  const uint32_t lone = flowOn(s, {a});
  solveAll(s);
  EXPECT_TRUE(near(s.rate(bundle), 0.25)) << s.rate(bundle);
  EXPECT_TRUE(near(s.rate(lone), 0.25)) << s.rate(lone);
  EXPECT_DOUBLE_EQ(s.load(a), 4.0);
  expectMaxMinOptimal(s, {bundle, lone});
  // Alone, the bundle fills a: 1/3.
  s.removeFlow(lone);
  solveAll(s);
  EXPECT_TRUE(near(s.rate(bundle), 1.0 / 3)) << s.rate(bundle);
}

TEST(MaxMinSolver, RemovalRecomputesOnlyItsComponent) {
  MaxMinSolver s;
  // Component 1: links a (cap 6) and b (cap 9) joined by flow x.
  const uint32_t a = s.addResource(6), b = s.addResource(9);
  const uint32_t x = flowOn(s, {a, b}), y = flowOn(s, {a}), z = flowOn(s, {b});
  // Component 2: link c (cap 4) shared by 40 flows, 20 of which also cross d (cap 100).
  const uint32_t c = s.addResource(4), d = s.addResource(100);
  std::vector<uint32_t> other;
  for (int i = 0; i < 40; ++i) other.push_back(i % 2 ? flowOn(s, {c}) : flowOn(s, {c, d}));
  solveAll(s);
  EXPECT_TRUE(near(s.rate(x), 3)) << s.rate(x);
  EXPECT_TRUE(near(s.rate(y), 3));
  EXPECT_TRUE(near(s.rate(z), 6));
  for (uint32_t f : other) EXPECT_TRUE(near(s.rate(f), 0.1)) << s.rate(f);
  EXPECT_GE(s.flowsRecomputed(), 43u);  // a first solve covers everything touched

  const uint64_t solvesBefore = s.solves();
  const uint64_t before = s.flowsRecomputed();
  std::vector<double> otherRates;
  for (uint32_t f : other) otherRates.push_back(s.rate(f));
  s.removeFlow(x);
  EXPECT_EQ(s.activeFlows(), 42u);
  const auto changed = solveAll(s);
  EXPECT_EQ(s.solves(), solvesBefore + 1);
  // Component 1 now holds y and z (x is gone): those two are recomputed, never the 40 flows of
  // component 2 (a solver may take more than one round over its set, hence the bound).
  const uint64_t work = s.flowsRecomputed() - before;
  EXPECT_GE(work, 2u);
  EXPECT_LE(work, 4u);
  std::printf("[ incremental ] removal: %llu flows recomputed (component: 2)\n", static_cast<unsigned long long>(work));
  EXPECT_TRUE(near(s.rate(y), 6));
  EXPECT_TRUE(near(s.rate(z), 9));
  for (size_t i = 0; i < other.size(); ++i) EXPECT_EQ(s.rate(other[i]), otherRates[i]) << i;  // bit for bit
  EXPECT_EQ(changed.size(), 2u);
  EXPECT_TRUE(changed.count(y) && changed.count(z));
  EXPECT_TRUE(near(changed.at(y), 3));
  EXPECT_TRUE(near(changed.at(z), 6));

  // Nothing dirty: no solve, no work.
  const uint64_t idle = s.flowsRecomputed();
  EXPECT_FALSE(s.pending());
  EXPECT_TRUE(solveAll(s).empty());
  EXPECT_EQ(s.flowsRecomputed(), idle);
  EXPECT_EQ(s.solves(), solvesBefore + 1);

  // A flow on link a joins component 1 only: y and it share a; z keeps b.
  const uint32_t w = flowOn(s, {a});
  EXPECT_EQ(w, x);  // the removed flow's id is reused
  const auto changed2 = solveAll(s);
  const uint64_t work2 = s.flowsRecomputed() - idle;
  EXPECT_GE(work2, 2u);
  EXPECT_LE(work2, 6u);
  std::printf("[ incremental ] addition: %llu flows recomputed (component: 2 or 3)\n",
              static_cast<unsigned long long>(work2));
  EXPECT_TRUE(near(s.rate(w), 3));
  EXPECT_TRUE(near(s.rate(y), 3));
  EXPECT_TRUE(near(s.rate(z), 9));
  for (size_t i = 0; i < other.size(); ++i) EXPECT_EQ(s.rate(other[i]), otherRates[i]) << i;
  EXPECT_EQ(changed2.size(), 2u);  // w (0 -> 3) and y (6 -> 3)
}

TEST(MaxMinSolver, RandomInstanceIsMaxMinOptimal) {
  for (bool weighted : {false, true}) {
    std::mt19937_64 rng(20240611 + weighted);
    std::uniform_real_distribution<double> cap(1.0, 50.0);
    MaxMinSolver s;
    const uint32_t R = 50;
    for (uint32_t r = 0; r < R; ++r) s.addResource(cap(rng));
    std::vector<uint32_t> flows;
    for (int i = 0; i < 200; ++i) flows.push_back(s.addFlow(randomPath(rng, R, weighted)));
    const auto changed = solveAll(s);
    EXPECT_EQ(changed.size(), flows.size());
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    expectMaxMinOptimal(s, flows);
    EXPECT_EQ(s.peakActiveFlows(), 200u);
    EXPECT_GT(s.memoryBytes(), 0u);
  }
}

TEST(MaxMinSolver, IncrementalSolvesMatchASolveFromScratchAndReportExactlyTheChanges) {
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    std::mt19937_64 rng(7 + weighted);
    std::uniform_real_distribution<double> cap(1.0, 50.0);
    const uint32_t R = 50;
    std::vector<double> caps;
    for (uint32_t r = 0; r < R; ++r) caps.push_back(cap(rng));
    MaxMinSolver s;
    for (double c : caps) s.addResource(c);
    Live live;
    for (int i = 0; i < 200; ++i) {
      auto p = randomPath(rng, R, weighted);
      live[s.addFlow(p)] = p;
    }
    solveAll(s);
    for (int round = 0; round < 30; ++round) {
      // Remove a few flows and add a few, then solve incrementally.
      std::uniform_int_distribution<int> count(0, 6);
      removeRandom(s, live, count(rng), rng);
      for (int k = count(rng); k > 0; --k) {
        auto p = randomPath(rng, R, weighted);
        const uint32_t f = s.addFlow(p);
        ASSERT_FALSE(live.count(f));
        live[f] = p;
      }
      std::map<uint32_t, double> before;
      for (const auto& [f, p] : live) before[f] = s.rate(f);  // new flows read 0
      const auto changed = solveAll(s);
      // The callback reports exactly the flows whose rate differs, with their old rates.
      for (const auto& [f, p] : live) {
        const bool moved = s.rate(f) != before[f];
        EXPECT_EQ(changed.count(f) == 1, moved) << "round " << round << " flow " << f;
        if (changed.count(f)) {
          EXPECT_EQ(changed.at(f), before[f]);
        }
      }
      for (const auto& [f, old] : changed) EXPECT_TRUE(live.count(f)) << "reported a removed flow " << f;
      EXPECT_EQ(s.activeFlows(), live.size());
      expectSameAsFromScratch(s, caps, live, round);
    }
  }
}

TEST(MaxMinSolver, TiesOfASymmetricRingWithAckSharesMatchASolveFromScratch) {
  // The flow backend's common case, where many flows tie for the same share on several links:
  // ring neighbours on equal NIC links, each edge with parallel channels over equal spine
  // links and an ACK share on the reverse NIC links. A flow that ties at a resource with its
  // bottleneck recorded elsewhere is held there; the incremental solves must still match a
  // solve from scratch as channels finish and start, and when capacities change.
  for (int seed = 0; seed < 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(99 + seed);
    const uint32_t hosts = 12, spines = 4, channels = 3;
    const float ack = 0.015f;
    std::vector<double> caps(2 * hosts + spines, 100.0);  // up[i], down[i], spine links
    auto up = [](uint32_t i) { return 2 * i; };
    auto down = [](uint32_t i) { return 2 * i + 1; };
    MaxMinSolver s;
    for (double c : caps) s.addResource(c);
    auto edgePath = [&](uint32_t i, uint32_t spine) {
      const uint32_t j = (i + 1) % hosts;
      std::vector<Hop> p{{up(i), 1.0f}, {2 * hosts + spine, 1.0f}, {down(j), 1.0f}, {up(j), ack}, {down(i), ack}};
      return p;
    };
    Live live;
    for (uint32_t i = 0; i < hosts; ++i)
      for (uint32_t c = 0; c < channels; ++c) {
        auto p = edgePath(i, (i + c) % spines);
        live[s.addFlow(p)] = p;
      }
    solveAll(s);
    for (int round = 0; round < 60; ++round) {
      std::uniform_int_distribution<int> count(0, 4);
      removeRandom(s, live, count(rng), rng);
      for (int k = count(rng); k > 0; --k) {
        auto p = edgePath(std::uniform_int_distribution<uint32_t>(0, hosts - 1)(rng),
                          std::uniform_int_distribution<uint32_t>(0, spines - 1)(rng));
        live[s.addFlow(p)] = p;
      }
      if (round % 5 == 4) {  // a congested link loses or regains capacity (the hybrid backend)
        const uint32_t r = std::uniform_int_distribution<uint32_t>(0, static_cast<uint32_t>(caps.size()) - 1)(rng);
        caps[r] = caps[r] < 100.0 ? 100.0 : 60.0;
        s.setCapacity(r, caps[r]);
      }
      solveAll(s);
      expectSameAsFromScratch(s, caps, live, round);
    }
  }
}

TEST(MaxMinSolver, CapacityChangesMatchASolveFromScratch) {
  // The hybrid backend lowers and restores the capacities of congested links between solves:
  // after any sequence of such changes the rates must be those of a fresh solver holding the
  // current capacities, and max-min optimal.
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    std::mt19937_64 rng(11 + weighted);
    std::uniform_real_distribution<double> cap(1.0, 50.0);
    std::uniform_real_distribution<double> factor(0.1, 1.5);
    const uint32_t R = 40;
    std::vector<double> caps;
    for (uint32_t r = 0; r < R; ++r) caps.push_back(cap(rng));
    MaxMinSolver s;
    for (double c : caps) s.addResource(c);
    std::vector<std::vector<Hop>> paths;
    std::vector<uint32_t> ids;
    for (int i = 0; i < 150; ++i) {
      paths.push_back(randomPath(rng, R, weighted));
      ids.push_back(s.addFlow(paths.back()));
    }
    solveAll(s);
    for (int round = 0; round < 40; ++round) {
      std::uniform_int_distribution<int> count(1, 4);
      for (int k = count(rng); k > 0; --k) {
        const uint32_t r = std::uniform_int_distribution<uint32_t>(0, R - 1)(rng);
        caps[r] = std::max(0.05, caps[r] * factor(rng));
        s.setCapacity(r, caps[r]);
      }
      solveAll(s);
      MaxMinSolver fresh;
      for (double c : caps) fresh.addResource(c);
      for (const auto& p : paths) fresh.addFlow(p);
      solveAll(fresh);
      for (size_t i = 0; i < ids.size(); ++i)
        EXPECT_TRUE(near(s.rate(ids[i]), fresh.rate(static_cast<uint32_t>(i)), 1e-9))
            << "round " << round << " flow " << i << ": " << s.rate(ids[i]) << " vs " << fresh.rate(i);
      expectMaxMinOptimal(s, ids);
    }
  }
}

TEST(MaxMinSolver, LoweringABottleneckSlowsItsFlowsAndRestoringItGivesTheRatesBack) {
  MaxMinSolver s;
  const uint32_t shared = s.addResource(10.0);
  const uint32_t a = s.addResource(10.0), b = s.addResource(3.0);
  const uint32_t f1 = flowOn(s, {a, shared}), f2 = flowOn(s, {b, shared}), f3 = flowOn(s, {shared});
  solveAll(s);
  EXPECT_DOUBLE_EQ(s.rate(f2), 3.0);
  EXPECT_DOUBLE_EQ(s.rate(f1), 3.5);
  s.setCapacity(shared, 5.0);  // an episode at 50% efficiency
  const auto changed = solveAll(s);
  EXPECT_EQ(changed.size(), 3u);
  EXPECT_NEAR(s.rate(f1), 5.0 / 3, 1e-12);
  EXPECT_NEAR(s.rate(f2), 5.0 / 3, 1e-12) << "f2 was limited by b; now the shared link is lower";
  EXPECT_NEAR(s.rate(f3), 5.0 / 3, 1e-12);
  s.setCapacity(shared, 10.0);
  solveAll(s);
  EXPECT_DOUBLE_EQ(s.rate(f2), 3.0);
  EXPECT_DOUBLE_EQ(s.rate(f1), 3.5);
  EXPECT_DOUBLE_EQ(s.rate(f3), 3.5);
}

// The change log (logChanges) that lets a caller redo only the components a change reached:
// a new flow logs a resource of its own (which reaches its whole component), a removed flow
// every resource it held (its component may split), a capacity change its resource; nothing
// else, and nothing while the log is off. Resources 0-3, flows a: {0, 1}, b: {2}, c: {3}.
TEST(MaxMinSolver, ChangeLogHoldsWhatEachChangeReached) {
  MaxMinSolver s;
  for (int i = 0; i < 4; ++i) s.addResource(1.0);
  const std::vector<Hop> ha{{0, 1.0f}, {1, 1.0f}}, hb{{2, 1.0f}}, hc{{3, 1.0f}};
  s.addFlow(hb);  // before the log: not in it
  s.logChanges(true);
  EXPECT_TRUE(s.changedResources().empty());
  const uint32_t a = s.addFlow(ha);
  solveAll(s);
  auto logged = [&] { return std::set<uint32_t>(s.changedResources().begin(), s.changedResources().end()); };
  EXPECT_EQ(logged(), (std::set<uint32_t>{0}));  // a solve adds nothing
  s.clearChanges();
  s.setCapacity(3, 2.0);
  EXPECT_EQ(logged(), (std::set<uint32_t>{3}));
  s.setCapacity(3, 2.0);  // no change: not logged again
  EXPECT_EQ(s.changedResources().size(), 1u);
  s.clearChanges();
  s.removeFlow(a);
  EXPECT_EQ(logged(), (std::set<uint32_t>{0, 1}));
  s.logChanges(false);
  s.addFlow(hc);
  EXPECT_TRUE(s.changedResources().empty());
}
