// CompletionHeap against an ordered set of (time, flow) pairs: random sets, moves (earlier and
// later) and erasures must leave the same earliest entry, ties popping in flow-id order.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <utility>

#include "sim/flow/CompletionHeap.h"

using namespace fabricsim;

TEST(CompletionHeap, MatchesAnOrderedSetThroughRandomSetsMovesAndErasures) {
  std::mt19937_64 rng(5);
  CompletionHeap heap;
  std::set<std::pair<int64_t, uint32_t>> ref;
  std::map<uint32_t, int64_t> at;
  std::uniform_int_distribution<uint32_t> flow(0, 199);
  std::uniform_int_distribution<int64_t> time(0, 50);  // few distinct times: many ties
  std::uniform_int_distribution<int> op(0, 9);
  for (int step = 0; step < 20000; ++step) {
    const int o = op(rng);
    const uint32_t f = flow(rng);
    if (o < 6) {  // add or move
      if (at.count(f)) ref.erase({at[f], f});
      at[f] = time(rng);
      ref.insert({at[f], f});
      heap.set(f, Time::ps(at[f]));
    } else if (o < 8) {  // erase (also of a flow that has no entry)
      if (at.count(f)) {
        ref.erase({at[f], f});
        at.erase(f);
      }
      heap.erase(f);
    } else if (!ref.empty()) {  // pop the earliest
      const auto first = *ref.begin();
      ASSERT_EQ(heap.top().at.picos(), first.first);
      ASSERT_EQ(heap.top().flow, first.second);
      heap.erase(first.second);
      ref.erase(ref.begin());
      at.erase(first.second);
    }
    ASSERT_EQ(heap.size(), ref.size());
    ASSERT_EQ(heap.contains(f), at.count(f) == 1);
    if (!ref.empty()) {
      ASSERT_EQ(heap.top().at.picos(), ref.begin()->first) << "step " << step;
      ASSERT_EQ(heap.top().flow, ref.begin()->second) << "step " << step;
    }
  }
}
