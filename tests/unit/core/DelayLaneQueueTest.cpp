// DelayLaneQueue pops exactly in (time, sequence) order: checked against a plain sorted reference
// (std::set on the same keys) over hold-model runs whose delays are a few constants (every event
// in lanes), random (every event in the heap), both mixed, more common delays than there are lanes,
// zero delays and equal times; and its lanes are really used where the delays repeat.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>

#include "sim/core/DelayLaneQueue.h"
#include "sim/core/Rng.h"

namespace fabricsim {
namespace {

using Key = std::pair<int64_t, uint64_t>;  // (time ps, sequence)

struct Harness {
  void push(int64_t when) {
    const uint64_t seq = next++;
    q.push(Event{Time::ps(when), seq, nullptr, static_cast<uint32_t>(seq), kNoTimer});
    ref.insert({when, seq});
  }
  /// Pops one event from both and checks they agree; returns its time (-1 on a mismatch).
  int64_t pop() {
    const Event* top = q.top();
    EXPECT_NE(top, nullptr);
    EXPECT_FALSE(ref.empty());
    if (top == nullptr || ref.empty()) return -1;
    const Key want = *ref.begin();
    ref.erase(ref.begin());
    const Event got = q.pop();
    EXPECT_EQ(got.when.picos(), want.first);
    EXPECT_EQ(got.seq, want.second);
    EXPECT_EQ(q.size(), ref.size());
    return got.when.picos() == want.first && got.seq == want.second ? got.when.picos() : -1;
  }
  DelayLaneQueue q;
  std::set<Key> ref;
  uint64_t next = 0;
};

// Hold model: N pending events; each step pops the earliest and pushes one delay(rng) after it.
template <typename Delay>
void hold(Harness& h, size_t n, int steps, Delay delay) {
  Rng rng(42);
  for (size_t i = 0; i < n; ++i) h.push(delay(rng) + static_cast<int64_t>(rng.below(1'000'000)));
  for (int s = 0; s < steps; ++s) {
    const int64_t now = h.pop();
    ASSERT_GE(now, 0) << "at step " << s;
    h.push(now + delay(rng));
  }
  while (!h.ref.empty()) ASSERT_GE(h.pop(), 0);
  EXPECT_TRUE(h.q.empty());
  EXPECT_EQ(h.q.top(), nullptr);
}

// A 100 Gb/s link's delays: a 4,096-byte frame's end and arrival, an ACK's end and arrival.
constexpr int64_t kPacketDelays[4] = {333'120, 1'333'120, 5'120, 1'005'120};

TEST(DelayLaneQueue, EmptyHasNoTop) {
  DelayLaneQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.top(), nullptr);
}

TEST(DelayLaneQueue, ConstantDelaysGoToLanesInOrder) {
  Harness h;
  hold(h, 2000, 50000, [](Rng& r) { return kPacketDelays[r.below(4)]; });
  EXPECT_EQ(h.q.lanes(), 4);
}

TEST(DelayLaneQueue, RandomDelaysUseTheHeap) {
  Harness h;
  hold(h, 2000, 50000, [](Rng& r) { return static_cast<int64_t>(r.below(2'000'000'000)); });
  EXPECT_EQ(h.q.lanes(), 0);
}

TEST(DelayLaneQueue, MixedConstantAndRandomDelays) {
  Harness h;
  hold(h, 5000, 80000, [](Rng& r) {
    if (r.below(10) == 0) return static_cast<int64_t>(r.below(3'000'000));
    return kPacketDelays[r.below(4)];
  });
  EXPECT_EQ(h.q.lanes(), 4);
}

TEST(DelayLaneQueue, MoreCommonDelaysThanLanes) {
  Harness h;
  const int distinct = DelayLaneQueue::kMaxLanes + 16;
  hold(h, 3000, 100000,
       [&](Rng& r) { return int64_t{1000} * (1 + static_cast<int64_t>(r.below(distinct))); });
  EXPECT_EQ(h.q.lanes(), DelayLaneQueue::kMaxLanes);
}

TEST(DelayLaneQueue, ZeroDelaysAndEqualTimes) {
  Harness h;
  hold(h, 500, 30000, [](Rng& r) { return r.below(3) == 0 ? int64_t{0} : kPacketDelays[r.below(2)]; });
  for (int i = 0; i < 200; ++i) h.push(5'000'000'000);  // equal times pop in push order
  while (!h.ref.empty()) ASSERT_GE(h.pop(), 0);
}

TEST(DelayLaneQueue, AdvanceMovesTheClockForward) {
  // Events taken from elsewhere (the timer heap) move the clock, so a delay measured after them
  // is the true one and still finds its lane; the order stays exact either way.
  Harness h;
  hold(h, 100, 5000, [](Rng& r) { return kPacketDelays[r.below(4)]; });
  ASSERT_EQ(h.q.lanes(), 4);
  h.q.advance(Time::ps(10'000'000'000));
  h.push(10'000'000'000 + kPacketDelays[0]);
  h.push(10'000'000'000 + 7);
  h.q.advance(Time::ps(5));  // backwards: ignored
  h.push(10'000'000'000 + kPacketDelays[1]);
  while (!h.ref.empty()) ASSERT_GE(h.pop(), 0);
}

}  // namespace
}  // namespace fabricsim
