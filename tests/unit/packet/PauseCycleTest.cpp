// findPauseCycle on hand-drawn graphs of PFC-blocked hops.
#include <gtest/gtest.h>

#include <vector>

#include "sim/packet/PauseCycle.h"

using namespace fabricsim;

namespace {

/// The cycle's edges must chain (each `to` is the next `from`) and close.
void expectCycle(const std::vector<PauseEdge>& edges, const std::vector<size_t>& cycle, size_t length) {
  ASSERT_EQ(cycle.size(), length);
  for (size_t i = 0; i < cycle.size(); ++i)
    EXPECT_EQ(edges[cycle[i]].to, edges[cycle[(i + 1) % cycle.size()]].from) << i;
}

}  // namespace

TEST(PauseCycle, TreeShapedBlockingIsNoDeadlock) {
  // Up-down paths in a Clos: leaves -> spine -> leaf, spines -> leaf, never back up.
  const std::vector<PauseEdge> edges = {{10, 20, 0}, {11, 20, 0}, {20, 12, 1}, {21, 12, 1}, {12, 30, 2}};
  EXPECT_TRUE(findPauseCycle(edges).empty());
  EXPECT_TRUE(findPauseCycle({}).empty());
}

TEST(PauseCycle, FindsTheRingOfFour) {
  // The classic cyclic buffer dependency: 1 -> 2 -> 3 -> 4 -> 1, with a tail 7 -> 1 and a
  // branch 3 -> 9 that lead nowhere.
  const std::vector<PauseEdge> edges = {{7, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 9, 1}, {3, 4, 2}, {4, 1, 0}};
  const std::vector<size_t> c = findPauseCycle(edges);
  expectCycle(edges, c, 4);
  for (size_t i : c) EXPECT_NE(edges[i].from, 7u);  // the tail is not part of it
}

TEST(PauseCycle, TwoSwitchesPausingEachOther) {
  const std::vector<PauseEdge> edges = {{5, 6, 3}, {6, 5, 1}};
  expectCycle(edges, findPauseCycle(edges), 2);
}

TEST(PauseCycle, CycleReachedOnlyThroughAVisitedBranch) {
  // DFS from 1 finishes 2 (dead end) first; the cycle 3 -> 4 -> 3 is reached from 1 later.
  const std::vector<PauseEdge> edges = {{1, 2, 0}, {1, 3, 1}, {3, 2, 0}, {3, 4, 1}, {4, 3, 0}};
  expectCycle(edges, findPauseCycle(edges), 2);
}
