// BgpInbox: the order in which a switch takes its BGP messages, checked against a reference
// computed here: among the messages queued at a switch, the next one is the smallest by
// (arrival = sent + the session's latency, send order, session index), the order the header
// promises (in-order sessions merged by arrival). Sessions have three different latencies (so
// several per-latency queues are merged), two parallel sessions share a latency and get the
// same record in reverse session order, and messages are posted, taken, dropped on teardown
// (clear) and lost on the wire (dropArrivingFrom) in random interleavings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "sim/core/Time.h"
#include "sim/routing/BgpInbox.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {

struct Queued {
  Time arrival;
  uint32_t seq;
  uint32_t local;
  uint32_t id;
  bool operator<(const Queued& o) const {
    return std::tie(arrival, seq, local) < std::tie(o.arrival, o.seq, o.local);
  }
};

// Node 0 has no sessions; node 1 has six: latencies 1, 3, 1, 2, 3, 1 us (sessions 0, 2 and 5
// share 1 us: parallel links to one neighbour, say).
const std::vector<Time> kLatency = {1_us, 3_us, 1_us, 2_us, 3_us, 1_us};

BgpInbox makeInbox() {
  return BgpInbox(std::vector<size_t>{0, 0, kLatency.size()}, kLatency);
}

TEST(BgpInbox, TakesMessagesInArrivalThenSendThenSessionOrder) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    BgpInbox inbox = makeInbox();
    std::mt19937 rng(seed);
    std::set<Queued> ref;
    uint32_t seq = 0;  // the inbox numbers records in creation order from 0
    Time now = Time::zero();
    size_t taken = 0;
    for (int step = 0; step < 400; ++step) {
      now = now + Time::ns(static_cast<int64_t>(rng() % 1500));  // sends 0 to 1.5 us apart
      const uint32_t id = inbox.create(now, static_cast<uint32_t>(step), AsPathTable::kEmpty, 0);
      // Post on a random subset of sessions in random order; the parallel 1 us sessions in
      // descending session order when chosen.
      std::vector<uint32_t> sessions;
      for (uint32_t s = 0; s < kLatency.size(); ++s)
        if (rng() % 2) sessions.push_back(s);
      std::shuffle(sessions.begin(), sessions.end(), rng);
      std::vector<size_t> at;  // positions of the 1 us sessions, refilled in descending order
      std::vector<uint32_t> parallel;
      for (size_t i = 0; i < sessions.size(); ++i)
        if (kLatency[sessions[i]] == 1_us) {
          at.push_back(i);
          parallel.push_back(sessions[i]);
        }
      std::sort(parallel.rbegin(), parallel.rend());
      for (size_t i = 0; i < at.size(); ++i) sessions[at[i]] = parallel[i];
      for (uint32_t s : sessions) {
        inbox.post(1, s, id);
        ref.insert(Queued{now + kLatency[s], seq, s, id});
      }
      inbox.discardIfUnused(id);
      ++seq;
      // Take up to two messages, each the smallest queued by the reference order.
      for (int k = static_cast<int>(rng() % 3); k > 0 && !ref.empty(); --k) {
        ASSERT_FALSE(inbox.empty(1));
        EXPECT_EQ(inbox.nextArrival(1), ref.begin()->arrival);
        const BgpInbox::Item it = inbox.pop(1);
        EXPECT_EQ(it.local, ref.begin()->local) << "seed " << seed << " step " << step;
        EXPECT_EQ(inbox.message(it.id).seq, ref.begin()->seq) << "seed " << seed << " step " << step;
        inbox.release(it.id);
        ref.erase(ref.begin());
        ++taken;
      }
      // Now and then a session goes down (all its messages dropped) or its link fails (the
      // messages arriving from now on are lost).
      if (step % 37 == 36) {
        const uint32_t s = rng() % kLatency.size();
        const bool teardown = rng() % 2;
        std::multiset<uint32_t> expected, dropped;
        for (auto q = ref.begin(); q != ref.end();) {
          if (q->local == s && (teardown || q->arrival >= now)) {
            expected.insert(q->id);
            q = ref.erase(q);
          } else {
            ++q;
          }
        }
        const auto onDrop = [&](uint32_t id) { dropped.insert(id); };
        if (teardown)
          inbox.clear(1, s, onDrop);
        else
          inbox.dropArrivingFrom(1, s, now, onDrop);
        EXPECT_EQ(dropped, expected) << "seed " << seed << " step " << step;
      }
      EXPECT_EQ(inbox.queued(), ref.size());
    }
    while (!ref.empty()) {
      const BgpInbox::Item it = inbox.pop(1);
      EXPECT_EQ(it.local, ref.begin()->local);
      EXPECT_EQ(inbox.message(it.id).seq, ref.begin()->seq);
      inbox.release(it.id);
      ref.erase(ref.begin());
      ++taken;
    }
    EXPECT_TRUE(inbox.empty(1));
    EXPECT_TRUE(inbox.empty(0));
    EXPECT_GT(taken, 400u);  // the walk exercised the queues (about 3 posts per step, minus drops)
  }
}

}  // namespace
