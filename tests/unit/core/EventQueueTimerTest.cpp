// Re-armable timers in the EventQueue, checked against a plain reference model (a list of
// pending (time, order) entries): pops in (time, arm order), one entry per timer however often
// it is re-armed, cancelled timers never fire; peek() names the event pop() returns next.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "sim/core/EventQueue.h"

using namespace fabricsim;

namespace {

struct Sink : EventHandler {
  void onEvent(uint32_t) override {}
};

}  // namespace

TEST(EventQueueTimers, ReArmMovesTheOneEntryAndCancelRemovesIt) {
  EventQueue q;
  Sink s;
  const TimerId a = q.newTimer(&s, 10);
  const TimerId b = q.newTimer(&s, 20);
  q.arm(a, Time::us(5));
  q.arm(b, Time::us(3));
  for (int i = 0; i < 1000; ++i) q.arm(a, Time::us(4 + i % 3));  // restarts: still one entry
  EXPECT_EQ(q.size(), 2u);
  q.push(Time::us(4), &s, 30);  // one-shot, pushed after a's last arm (time 4 + 999 % 3 = 4 us)
  q.arm(a, Time::us(4));        // re-armed at the same time, later in order than the one-shot
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.expiry(a), Time::us(4));
  Event e = q.pop();
  EXPECT_EQ(e.tag, 20u);
  EXPECT_FALSE(q.armed(b));
  e = q.pop();
  EXPECT_EQ(e.tag, 30u);
  q.cancel(a);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.expiry(a), Time::max());
}

TEST(EventQueueTimers, RandomOperationsMatchAReferenceModel) {
  // Reference: every pending entry as (time, order) -> tag, where order is the sequence of the
  // push or arm that created it; a timer's previous entry is erased when it is re-armed or
  // cancelled. The queue must pop exactly the reference's minimum each time.
  std::mt19937_64 rng(7);
  EventQueue q;
  Sink s;
  constexpr int kTimers = 50;
  std::vector<TimerId> ids;
  for (int i = 0; i < kTimers; ++i) ids.push_back(q.newTimer(&s, static_cast<uint32_t>(i)));
  std::map<std::pair<int64_t, uint64_t>, uint32_t> ref;
  std::vector<std::pair<int64_t, uint64_t>> timerKey(kTimers, {-1, 0});
  uint64_t order = 0;
  int64_t now = 0;
  for (int step = 0; step < 200'000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 4) {  // arm a timer
      const int t = static_cast<int>(rng() % kTimers);
      const int64_t when = now + static_cast<int64_t>(rng() % 1000);
      if (timerKey[t].first >= 0) ref.erase(timerKey[t]);
      timerKey[t] = {when, order++};
      ref[timerKey[t]] = static_cast<uint32_t>(t);
      q.arm(ids[t], Time::ps(when));
    } else if (op < 5) {  // cancel a timer
      const int t = static_cast<int>(rng() % kTimers);
      if (timerKey[t].first >= 0) ref.erase(timerKey[t]);
      timerKey[t] = {-1, 0};
      q.cancel(ids[t]);
    } else if (op < 7) {  // a one-shot event
      const int64_t when = now + static_cast<int64_t>(rng() % 1000);
      ref[{when, order++}] = 1000;
      q.push(Time::ps(when), &s, 1000);
    } else if (!ref.empty()) {  // pop, after a look-ahead peek that must name the same event
      ASSERT_FALSE(q.empty());
      const auto it = ref.begin();
      const Event* next = q.peek();
      ASSERT_NE(next, nullptr) << step;
      ASSERT_EQ(next->when.picos(), it->first.first) << step;
      ASSERT_EQ(next->tag, it->second) << step;
      const Event e = q.pop();
      ASSERT_EQ(e.when.picos(), it->first.first) << step;
      ASSERT_EQ(e.tag, it->second) << step;
      if (e.tag < kTimers) timerKey[e.tag] = {-1, 0};
      now = e.when.picos();
      ref.erase(it);
    }
    ASSERT_EQ(q.size(), ref.size()) << step;
    if (ref.empty()) {
      ASSERT_EQ(q.peek(), nullptr) << step;
    }
  }
}
