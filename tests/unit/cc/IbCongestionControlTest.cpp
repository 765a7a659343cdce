// IbCongestionControl: CCT index rise per BECN, decay per CCTI timer period, the rate formula.
#include "sim/cc/IbCongestionControl.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fabricsim {
namespace {

const BitRate kLine = BitRate::gbps(200);

IbCcSpec spec(int increase, int limit) {
  IbCcSpec s;
  s.cctiIncrease = increase;
  s.cctiLimit = limit;
  s.cctiTimer = Time::us(10);
  s.cctScale = 8.0;
  return s;
}

BitRate expectedRate(int index, double scale) {
  return BitRate::bps(std::llround(200e9 / (1.0 + index / scale)));
}

TEST(IbCongestionControlTest, IndexRisesPerBecnUpToTheLimit) {
  IbCongestionControl cc(spec(3, 10));
  cc.addFlow(0, kLine, Time::zero());
  EXPECT_EQ(cc.index(0, Time::us(1)), 0);
  EXPECT_EQ(cc.rate(0, Time::us(1)), kLine);
  const int expected[] = {3, 6, 9, 10, 10};
  for (int e : expected) {
    cc.onNotification(0, Time::us(1));
    EXPECT_EQ(cc.index(0, Time::us(1)), e);
  }
  EXPECT_STREQ(cc.name(), "ibcc");
}

TEST(IbCongestionControlTest, IndexDecaysOnePerTimerPeriod) {
  IbCongestionControl cc(spec(3, 127));
  cc.addFlow(0, kLine, Time::zero());  // timer phase: expiries at 10, 20, 30 ... us
  cc.onNotification(0, Time::us(5));
  EXPECT_EQ(cc.nextTimer(0, Time::us(5)), Time::us(10));
  EXPECT_EQ(cc.index(0, Time::us(10) - Time::ps(1)), 3);
  EXPECT_EQ(cc.index(0, Time::us(10)), 2);
  EXPECT_EQ(cc.nextTimer(0, Time::us(10)), Time::us(20));
  EXPECT_EQ(cc.index(0, Time::us(29)), 1);
  EXPECT_EQ(cc.index(0, Time::us(30)), 0);
  EXPECT_EQ(cc.nextTimer(0, Time::us(30)), Time::max());
  EXPECT_EQ(cc.index(0, Time::ms(5)), 0);
  // A later BECN joins the same free-running phase.
  cc.onNotification(0, Time::us(1234));
  EXPECT_EQ(cc.nextTimer(0, Time::us(1234)), Time::us(1240));
}

TEST(IbCongestionControlTest, RateIsLineOverOnePlusIndexOverScale) {
  IbCongestionControl cc(spec(1, 127));
  cc.addFlow(0, kLine, Time::zero());
  for (int i = 1; i <= 20; ++i) {
    cc.onNotification(0, Time::us(1));
    EXPECT_EQ(cc.rate(0, Time::us(1)), expectedRate(i, 8.0)) << i;
    if (i == 8) {
      EXPECT_EQ(cc.rate(0, Time::us(1)), BitRate::gbps(100));  // index = scale: half the line rate
    }
  }
  // 5 periods later (10 us each, first expiry at 10 us): index 15.
  EXPECT_EQ(cc.rate(0, Time::us(50)), expectedRate(15, 8.0));
}

// A hand-worked trace, followed by a QP that is never polled between events (its decrements are
// applied k at once) and by one polled every microsecond; both must give the hand values.
// ccti_increase 4, ccti_limit 50, ccti_timer 10 us, scale 8, registered at 3 us: the free-running
// timer expires at 13, 23, 33, ... us.
TEST(IbCongestionControlTest, HandWorkedTraceLazyAndPolled) {
  IbCongestionControl cc(spec(4, 50));
  const uint32_t lazy = 0, polled = 1;
  for (uint32_t qp : {lazy, polled}) cc.addFlow(qp, kLine, Time::us(3));
  Time polledUpTo = Time::us(3);
  auto pollTo = [&](Time t) {  // the polled QP is looked at every microsecond up to t
    for (; polledUpTo + Time::us(1) <= t; polledUpTo += Time::us(1))
      cc.rate(polled, polledUpTo + Time::us(1));
  };
  auto becn = [&](Time t) {
    pollTo(t);
    for (uint32_t qp : {lazy, polled}) cc.onNotification(qp, t);
  };
  auto expectIndex = [&](Time t, int expected, const char* what) {
    pollTo(t);
    for (uint32_t qp : {lazy, polled}) EXPECT_EQ(cc.index(qp, t), expected) << what << ", QP " << qp;
  };
  // 13 BECNs at 5 us: 4 x 12 = 48, the 13th clamps at the limit, 50.
  for (int i = 0; i < 13; ++i) becn(Time::us(5));
  expectIndex(Time::us(5), 50, "13 BECNs");
  // At 252 us the expiries 13, 23, ..., 243 us have passed: (243 - 13) / 10 + 1 = 24 decrements.
  expectIndex(Time::us(252), 26, "24 periods later");
  for (uint32_t qp : {lazy, polled}) {
    // line / (1 + 26 / 8) = 200 Gb/s / 4.25 = 47,058,823,529.4 b/s
    EXPECT_EQ(cc.rate(qp, Time::us(252)), BitRate::bps(47'058'823'529)) << qp;
    EXPECT_EQ(cc.nextTimer(qp, Time::us(252)), Time::us(253)) << qp;
  }
  // A BECN does not restart the timer: 26 + 4 = 30 at 252 us, and the expiry at 253 us still applies.
  becn(Time::us(252));
  expectIndex(Time::us(253) - Time::ps(1), 30, "BECN at 252 us");
  expectIndex(Time::us(253), 29, "expiry at 253 us");
  // The k-th expiry after 253 us, at 253 + 10 k us, leaves 29 - k: 0 at 543 us, where it stops
  // with no timer pending.
  expectIndex(Time::us(543) - Time::ps(1), 1, "just before the last expiry");
  expectIndex(Time::us(543), 0, "at the last expiry");
  expectIndex(Time::ms(10), 0, "long after");
  for (uint32_t qp : {lazy, polled}) {
    EXPECT_EQ(cc.nextTimer(qp, Time::ms(10)), Time::max()) << qp;
    EXPECT_EQ(cc.rate(qp, Time::ms(10)), kLine) << qp;
  }
  // A BECN at 10,000 us joins the phase: next expiry 10,003 us (3 + 10 x 1,000).
  becn(Time::ms(10));
  for (uint32_t qp : {lazy, polled}) EXPECT_EQ(cc.nextTimer(qp, Time::ms(10)), Time::us(10'003)) << qp;
  expectIndex(Time::us(10'003), 3, "first expiry after the late BECN");
}

}  // namespace
}  // namespace fabricsim
