// Mmu and the PFC headroom budget against hand-worked examples: the carve-out arithmetic, the
// XOFF/XON points of a static and a dynamic threshold, the release order, and the headroom
// formula for two link configurations.
#include <gtest/gtest.h>

#include <vector>

#include "sim/packet/Mmu.h"
#include "sim/packet/PfcHeadroom.h"

using namespace fabricsim;

namespace {

// 100,000 B buffer, 2 ports, class 0 lossless with 10,000 B of headroom per port, 1,000 B
// reserve per port: 2 x 10,000 + 2 x 1,000 = 22,000 B carved out, 78,000 B shared.
Mmu::Config staticConfig() {
  Mmu::Config c;
  c.buffer = 100'000;
  c.reserve = 1'000;
  c.losslessMask = 0x01;
  c.xoff = 20'000;
  c.xon = 15'000;
  return c;
}

}  // namespace

TEST(Mmu, CarvesReservesAndHeadroomBeforeTheSharedPool) {
  const Mmu::Config c = staticConfig();
  Mmu m;
  ASSERT_TRUE(m.init(&c, {10'000, 10'000}));
  EXPECT_EQ(m.carved(), 22'000u);
  EXPECT_EQ(m.sharedPool(), 78'000u);
  // Two lossless classes double the headroom: 2 x 2 x 10,000 + 2 x 1,000 = 42,000.
  Mmu::Config two = c;
  two.losslessMask = 0x05;
  Mmu m2;
  ASSERT_TRUE(m2.init(&two, {10'000, 10'000}));
  EXPECT_EQ(m2.carved(), 42'000u);
  // More than the buffer: refused.
  Mmu::Config tiny = c;
  tiny.buffer = 22'000;
  Mmu m3;
  EXPECT_FALSE(m3.init(&tiny, {10'000, 10'000}));
}

TEST(Mmu, StaticThresholdPausesAtXoffFillsHeadroomAndResumesAtXon) {
  const Mmu::Config c = staticConfig();
  Mmu m;
  ASSERT_TRUE(m.init(&c, {10'000, 10'000}));
  // 1,000 B packets on (port 0, class 0): the first fills the reserve, the next 20 the shared
  // space up to XOFF (20,000 B): XOFF is due on packet 21, not before.
  bool xoff = false;
  for (int i = 1; i <= 21; ++i) {
    ASSERT_EQ(m.admitLossless(0, 0, 1'000, xoff), Mmu::Verdict::Admitted) << i;
    EXPECT_EQ(xoff, i == 21) << i;
  }
  EXPECT_TRUE(m.paused(0, 0));
  EXPECT_EQ(m.sharedUsed(), 20'000u);
  // Beyond XOFF: 10 packets fill the 10,000 B headroom, the 11th is a lossless drop.
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(m.admitLossless(0, 0, 1'000, xoff), Mmu::Verdict::Admitted) << i;
    EXPECT_FALSE(xoff);  // already paused
  }
  EXPECT_EQ(m.peakHeadroom(0), 10'000u);
  EXPECT_EQ(m.admitLossless(0, 0, 1'000, xoff), Mmu::Verdict::Dropped);
  EXPECT_EQ(m.held(0, 0), 31'000u);  // the drop took nothing
  EXPECT_EQ(m.used(), 31'000u);
  // Departures free headroom first (10 packets), then shared: 20,000 -> 15,000 (XON) after 5 more.
  bool xon = false;
  for (int i = 1; i <= 15; ++i) {
    m.releaseLossless(0, 0, 1'000, xon);
    EXPECT_EQ(xon, i == 15) << i;
  }
  EXPECT_FALSE(m.paused(0, 0));
  EXPECT_EQ(m.sharedUsed(), 15'000u);
  // The other port is untouched: its reserve is its own.
  EXPECT_EQ(m.admitLossless(1, 0, 1'000, xoff), Mmu::Verdict::Admitted);
  EXPECT_EQ(m.sharedUsed(), 15'000u);
}

TEST(Mmu, DynamicThresholdIsAlphaTimesTheFreeSharedPool) {
  Mmu::Config c = staticConfig();
  c.dynamicAlpha = 0.5;
  c.xonDelta = 2'000;
  Mmu m;
  ASSERT_TRUE(m.init(&c, {10'000, 10'000}));
  // Alone in the pool, a PG's shared bytes s meet the threshold when s >= 0.5 (78,000 - s), i.e.
  // s >= 26,000: the reserve packet, then 26 shared packets.
  bool xoff = false;
  for (int i = 1; i <= 27; ++i) {
    ASSERT_EQ(m.admitLossless(0, 0, 1'000, xoff), Mmu::Verdict::Admitted) << i;
    EXPECT_EQ(xoff, i == 27) << i;
  }
  EXPECT_EQ(m.xoffThreshold(), 26'000u);
  // XON at threshold - 2,000. As s falls the threshold rises: 0.5 (78,000 - s) - 2,000 >= s
  // first holds at s = 24,666.7, so after 2 departures (s = 24,000).
  bool xon = false;
  m.releaseLossless(0, 0, 1'000, xon);
  EXPECT_FALSE(xon);  // s = 25,000: threshold 26,500 - 2,000 = 24,500
  m.releaseLossless(0, 0, 1'000, xon);
  EXPECT_TRUE(xon);  // s = 24,000: 27,000 - 2,000 = 25,000
  // Other traffic filling the pool lowers this PG's threshold: with 30,000 B of port 1's lossy
  // class in the pool, it is 0.5 (78,000 - 24,000 - 30,000) = 12,000.
  for (int i = 0; i < 30; ++i) ASSERT_EQ(m.admitLossy(1, 1'000, 0), Mmu::LossyCharge::Shared);
  EXPECT_EQ(m.sharedUsed(), 54'000u);
  EXPECT_EQ(m.xoffThreshold(), 12'000u);
}

TEST(Mmu, LossyTrafficUsesTheEgressDynamicThresholdThenThePortReserve) {
  Mmu::Config c = staticConfig();
  c.losslessMask = 0;
  c.lossyAlpha = 1.0;
  Mmu m;
  ASSERT_TRUE(m.init(&c, {0, 0}));  // no headroom: 2 x 1,000 reserve, 98,000 shared
  EXPECT_EQ(m.sharedPool(), 98'000u);
  // One egress queue fed from port 0, 1,000 B packets. The shared pool takes a packet while
  // queue + packet <= 98,000 - shared used, i.e. (q + 1,000) <= 98,000 - q: q <= 48,500, so 49
  // packets (q = 48,000 before the 49th). The 50th goes to port 0's 1,000 B reserve; the 51st is
  // dropped.
  uint64_t queue = 0;
  int shared = 0;
  for (; m.admitLossy(0, 1'000, queue) == Mmu::LossyCharge::Shared; queue += 1'000) ++shared;
  EXPECT_EQ(shared, 49);
  EXPECT_EQ(m.sharedUsed(), 49'000u);
  // The refused 50th was charged to the reserve by that call.
  EXPECT_EQ(m.used(), 50'000u);
  queue += 1'000;
  EXPECT_EQ(m.admitLossy(0, 1'000, queue), Mmu::LossyCharge::Dropped);
  // Port 1's reserve is its own: a packet from it still gets in.
  EXPECT_EQ(m.admitLossy(1, 1'000, queue), Mmu::LossyCharge::Reserve);
  // Releases free what each packet was charged to.
  m.releaseLossy(0, 1'000, true);
  EXPECT_EQ(m.sharedUsed(), 49'000u);
  EXPECT_EQ(m.admitLossy(0, 1'000, queue), Mmu::LossyCharge::Reserve);
  m.releaseLossy(0, 1'000, false);
  EXPECT_EQ(m.sharedUsed(), 48'000u);
  EXPECT_EQ(m.used(), 50'000u);
}

// The IEEE 802.1Qbb budget, worked by hand for two links.
TEST(PfcHeadroom, HandWorkedBudgets) {
  // 100 Gb/s, 1 us of cable, no forwarding latency, instant response, RoCE frames of 4,000 B
  // payload (4,082 B on the wire), one lossless class:
  //   wire 2 x 1 us x 100 Gb/s = 200,000 bit = 25,000 B; + 3 x 4,082 + 84 = 37,330 B.
  EXPECT_EQ(pfcHeadroom(BitRate::gbps(100), Time::us(1), Time::zero(), Time::zero(), 4082, 84, 1), 37'330u);
  // 400 Gb/s over 100 m of fibre (500 ns), 600 ns forwarding latency, the IEEE 802.3 Annex 31B
  // bound for 400 Gb/s (905 quanta = 463,360 bit times = 1,158.4 ns), 4,096 B payload (4,178 B),
  // two lossless classes:
  //   wire (1,000 + 600 + 1,158.4) ns x 400 Gb/s = 1,103,360 bit = 137,920 B;
  //   + 3 x 4,178 = 12,534; + 2 x 84 = 168  ->  150,622 B.
  const Time response = Time::ps(1'158'400);
  EXPECT_EQ(pfcHeadroom(BitRate::gbps(400), Time::ns(500), Time::ns(600), response, 4178, 84, 2), 150'622u);
}
