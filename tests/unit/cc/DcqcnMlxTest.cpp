// DcqcnMlx (variant mlx): the ConnectX reaction point against hand-worked traces that follow the
// equations of the HPCC ns-3 reference's Mellanox mode (rdma-hw.cc): CNPs latch two bits, alpha
// moves on a 1 us grid from the first CNP, cuts wait for the rate-reduce grid (first CNP + k D +
// 1 ns), the increase timer restarts at each cut, fast recovery / additive / hyper by timer stage.
// Every expected value below is computed in the test by a few lines of arithmetic, never by the
// class.
//
// Tolerances: expected values use the same double equations; the class takes alpha's decay as a
// closed form (1-g)^k where the test multiplies k times, so they differ by rounding alone (about
// 1e-13 relative after 1,200 ticks). Rates are compared to 1 bit/s (1e-11 of 100 Gb/s, 100x that
// rounding, and 2e7 times smaller than one additive step); alpha to 1e-12.
#include "sim/cc/DcqcnMlx.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sim/cc/DcqcnParams.h"

namespace fabricsim {
namespace {

constexpr double kLine = 100e9;
const BitRate kLineRate = BitRate::gbps(100);
constexpr double kRateTol = 1.0;  // bit/s, see the header
constexpr double kAlphaTol = 1e-12;

Time us(double v) {
  return Time::ps(static_cast<int64_t>(v * 1e6 + 0.5));
}

/// The HPCC ns-3 reference's Mellanox settings at 100 Gb/s (run.py with bw = 100, and the brief
/// of tests/integration/DcqcnNs3ReferenceTest.cpp): g 1/256, alpha 1 on the first CNP, alpha grid
/// 1 us, increase timer 300 us, no byte counter, F = 1, R_AI 20 Mb/s, R_HAI 200 Mb/s, min 1 Gb/s,
/// decrease grid 4 us, clamp only after a timer stage, no decrease cap (ns-3 has none).
DcqcnSpec ns3Mellanox() {
  DcqcnSpec s = dcqcnPreset("connectx");
  s.g = 1.0 / 256;
  s.initialAlpha = 1.0;
  s.alphaTimer = Time::us(1);
  s.rateIncreaseTimer = Time::us(300);
  s.byteCounter = 0;
  s.fastRecoveryStages = 1;
  s.additiveIncrease = BitRate::bps(20'000'000);
  s.hyperIncrease = BitRate::bps(200'000'000);
  s.minRate = BitRate::gbps(1);
  s.rateReduceInterval = Time::us(4);
  s.maxDecreaseFraction = 1.0;
  s.clampTargetRate = false;
  s.clampTargetRateAfterTimeIncrease = true;
  s.rateOnFirstCnp = BitRate::bps(0);
  return s;
}

struct Expect {
  double rc, rt;
  int stages;
  double alpha = -1;              // < 0: not checked
  Time nextTimer = Time::zero();  // zero: not checked
};

/// Replays `cnps` and checks `expect` (time -> state after every event at or before that time),
/// optionally polling rate(), nextTimer() and onSent() every 250 ns in between.
void replay(DcqcnMlx& cc, const std::vector<Time>& cnps, const std::map<Time, Expect>& expect, bool poll) {
  cc.addFlow(0, kLineRate, Time::zero());
  std::vector<std::pair<Time, int>> actions;  // 0: CNP, 1: check (a CNP first at equal times)
  for (Time t : cnps) actions.emplace_back(t, 0);
  for (const auto& [t, e] : expect) actions.emplace_back(t, 1);
  std::sort(actions.begin(), actions.end());
  Time polled = Time::zero();
  for (const auto& [t, kind] : actions) {
    for (; poll && polled < t; polled += Time::ns(250)) {
      cc.rate(0, polled);
      cc.nextTimer(0, polled);
      cc.onSent(0, polled, 4082);
    }
    if (kind == 0) {
      cc.onNotification(0, t);
      continue;
    }
    const Expect& e = expect.at(t);
    const std::string at = std::to_string(t.picos()) + " ps" + (poll ? " (polled)" : " (lazy)");
    EXPECT_NEAR(static_cast<double>(cc.rate(0, t).bitsPerSecond()), e.rc, 0.5 + kRateTol) << at;
    EXPECT_NEAR(cc.currentRate(0), e.rc, kRateTol) << at;
    EXPECT_NEAR(cc.targetRate(0), e.rt, kRateTol) << at;
    EXPECT_EQ(cc.timerStages(0), e.stages) << at;
    if (e.alpha >= 0) {
      EXPECT_NEAR(cc.alpha(0, t), e.alpha, kAlphaTol) << at;
    }
    if (e.nextTimer != Time::zero()) {
      EXPECT_EQ(cc.nextTimer(0, t), e.nextTimer) << at;
    }
  }
}

/// One QP at 100 Gb/s under the ns-3 reference's settings. Grids from the first CNP at 10 us:
/// alpha ticks at 10 + k us, decrease ticks at 10.001 + 4k us.
void handTrace(bool poll) {
  const double g = 1.0 / 256, L = kLine, ai = 20e6, hai = 200e6;
  const auto decay = [&](double a, int n) {
    for (int i = 0; i < n; ++i) a *= 1 - g;
    return a;
  };
  const auto up = [&](double a) { return (1 - g) * a + g; };  // a tick with the CNP bit set

  // 10: first CNP. alpha = 1, unlatched; no rate change; the decrease bit is set.
  // 11.5, 12.2, 13.9: three more CNPs inside the first interval. Alpha ticks: 11 quiet, 12 (11.5),
  // 13 (12.2), 14 (13.9) latched.
  const double a14 = up(up(up(decay(1.0, 1))));
  // 14.001: one cut. No timer stage yet: no clamp, Rt stays at line. Timer -> 314.001.
  const double rc1 = L * (1 - a14 / 2);
  // 15.5, 16.7: two CNPs inside the next interval (the second finds the bit already set).
  // Ticks 15 quiet, 16 and 17 latched, 18 quiet; 18.001: one cut, no clamp; timer -> 318.001.
  const double a18 = decay(up(up(decay(a14, 1))), 1);
  const double rc2 = rc1 * (1 - a18 / 2);
  // 318.001: timer, T = 0 < F: fast recovery.
  const double rc3 = (rc2 + L) / 2;
  // 500.5: CNP. Ticks 19..500 quiet (482), 501 latched, 502 quiet. The first decrease tick after
  // 500.5 is 10.001 + 4 x 123 = 502.001: T = 1, so Rt = Rc, then the cut; timer -> 802.001 (the
  // 618.001 expiry never happens).
  const double a502 = decay(up(decay(a18, 482)), 1);
  const double rt4 = rc3, rc4 = rc3 * (1 - a502 / 2);
  // Quiet: 802.001 fast recovery (T = 0), 1102.001 additive (T = 1 = F), 1402.001 hyper (T = 2).
  const double rc5 = (rc4 + rt4) / 2;
  const double rt6 = rt4 + ai, rc6 = (rc5 + rt6) / 2;
  const double rt7 = rt6 + hai, rc7 = (rc6 + rt7) / 2;
  // 1701.5: CNP; ticks 503..1701 quiet (1199), 1702 latched. Its decrease tick, 10.001 + 4 x 423 =
  // 1702.001, is also the timer's expiry (802.001 + 3 x 300): the timer runs first (hyper,
  // T = 3), then the cut clamps Rt to that Rc; timer -> 2002.001.
  const double rt8 = rt7 + hai, rc8 = (rc7 + rt8) / 2;
  const double a1702 = up(decay(a502, 1199));
  const double rt9 = rc8, rc9 = rc8 * (1 - a1702 / 2);

  const std::vector<Time> cnps = {us(10),   us(11.5), us(12.2),  us(13.9),
                                  us(15.5), us(16.7), us(500.5), us(1701.5)};
  const Time ps1 = Time::ps(1);
  const std::map<Time, Expect> expect = {
      {us(10), {L, L, 0, 1.0, us(314.001)}},  // no timer yet; the pending cut will start it
      {us(14.001) - ps1, {L, L, 0, a14}},     // the cut waits for its tick
      {us(14.001), {rc1, L, 0, a14, us(314.001)}},
      {us(18.001) - ps1, {rc1, L, 0, -1, us(318.001)}},  // a cut is latched: the timer will restart
      {us(18.001), {rc2, L, 0, a18, us(318.001)}},
      {us(318.001) - ps1, {rc2, L, 0}},
      {us(318.001), {rc3, L, 1, -1, us(618.001)}},
      {us(502.001) - ps1, {rc3, L, 1, -1, us(802.001)}},
      {us(502.001), {rc4, rt4, 0, a502, us(802.001)}},
      {us(802.001), {rc5, rt4, 1}},
      {us(1102.001), {rc6, rt6, 2}},
      {us(1402.001), {rc7, rt7, 3}},
      {us(1701.9), {rc7, rt7, 3, -1, us(1702.001)}},
      {us(1702.001), {rc9, rt9, 0, a1702, us(2002.001)}},
  };
  DcqcnMlx cc(ns3Mellanox());
  replay(cc, cnps, expect, poll);
  EXPECT_GT(rc9, 1e9);  // the trace never touches the 1 Gb/s floor
}

TEST(DcqcnMlxTest, HandTraceLazy) {
  handTrace(false);
}

TEST(DcqcnMlxTest, HandTracePolledEvery250ns) {
  handTrace(true);
}

TEST(DcqcnMlxTest, LatchedCnpCutsAtTheNextTick) {
  // The connectx preset (g 5/1024, alpha 1023/1024 on the first CNP). First CNP at 20 us: the cut
  // waits for 24.001 us. CNPs at 25.3, 26.3, 27.3 us come less than one interval after that cut
  // (an event-driven "one cut per interval" reading would drop them); the bit they set cuts at
  // 28.001 us, once.
  const DcqcnSpec s = dcqcnPreset("connectx");
  const double g = s.g;
  DcqcnMlx cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, us(20));
  EXPECT_EQ(cc.rate(0, us(24.001) - Time::ps(1)), kLineRate);
  const double a24 = s.initialAlpha * (1 - g) * (1 - g) * (1 - g) * (1 - g);  // ticks 21..24 quiet
  cc.rate(0, us(24.001));
  const double rc1 = kLine * (1 - a24 / 2);
  EXPECT_NEAR(cc.currentRate(0), rc1, kRateTol);
  for (double t : {25.3, 26.3, 27.3}) {
    cc.onNotification(0, us(t));
    EXPECT_NEAR(cc.currentRate(0), rc1, kRateTol) << t;
    EXPECT_EQ(cc.pendingCut(0), us(28.001)) << t;
  }
  EXPECT_NEAR(static_cast<double>(cc.rate(0, us(28.001) - Time::ps(1)).bitsPerSecond()), rc1, 0.5 + kRateTol);
  // Ticks 25 quiet, 26, 27, 28 latched.
  double a = a24 * (1 - g);
  for (int i = 0; i < 3; ++i) a = (1 - g) * a + g;
  cc.rate(0, us(28.001));
  EXPECT_NEAR(cc.currentRate(0), rc1 * (1 - a / 2), kRateTol);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), kLine);  // no timer stage: no clamp
  EXPECT_EQ(cc.pendingCut(0), Time::max());
  EXPECT_EQ(cc.nextTimer(0, us(28.001)), us(328.001));
}

TEST(DcqcnMlxTest, CnpAtATickInstantIsCountedByTheNextTick) {
  DcqcnMlx cc(ns3Mellanox());
  cc.addFlow(0, kLineRate, Time::zero());
  const double g = 1.0 / 256;
  cc.onNotification(0, us(10));
  cc.onNotification(0, us(12));  // exactly on alpha tick 12: tick 12 decays, tick 13 raises
  EXPECT_NEAR(cc.alpha(0, us(12)), (1 - g) * (1 - g), kAlphaTol);
  EXPECT_NEAR(cc.alpha(0, us(13)), (1 - g) * (1 - g) * (1 - g) + g, kAlphaTol);
  // A CNP exactly on a decrease tick, with no bit set, waits for the next one.
  cc.rate(0, us(14.001));
  cc.onNotification(0, us(14.001));
  EXPECT_EQ(cc.pendingCut(0), us(18.001));
}

TEST(DcqcnMlxTest, RateOnFirstCnpSetsBothRatesAndTheTickStillCuts) {
  DcqcnSpec s = ns3Mellanox();
  s.rateOnFirstCnp = BitRate::gbps(40);  // ns-3's RateOnFirstCnp = 0.4 at 100 Gb/s
  DcqcnMlx cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, us(3));
  EXPECT_EQ(cc.rate(0, us(3)), BitRate::gbps(40));
  EXPECT_DOUBLE_EQ(cc.targetRate(0), 40e9);
  EXPECT_EQ(cc.nextTimer(0, us(3)), us(307.001));  // no timer before the first cut
  const double a = std::pow(1 - s.g, 4);           // ticks 4..7 quiet
  cc.rate(0, us(7.001));
  EXPECT_NEAR(cc.currentRate(0), 40e9 * (1 - a / 2), kRateTol);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), 40e9);
}

TEST(DcqcnMlxTest, ByteCounterOffIgnoresBytes) {
  DcqcnMlx cc(ns3Mellanox());
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, us(1));
  cc.rate(0, us(5.001));
  const double rc = cc.currentRate(0);
  for (int i = 0; i < 1000; ++i) cc.onSent(0, us(6), 1'000'000);
  EXPECT_DOUBLE_EQ(cc.currentRate(0), rc);
  EXPECT_EQ(cc.byteStages(0), 0);
}

TEST(DcqcnMlxTest, ByteCounterOnCombinesStagesLikeThePaper) {
  DcqcnSpec s = ns3Mellanox();
  s.byteCounter = 1000;
  s.rateOnFirstCnp = BitRate::gbps(40);  // so that Rt starts below line and every step shows
  DcqcnMlx cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, us(1));
  cc.rate(0, us(5.001));  // first cut: alpha after 4 quiet ticks, no clamp
  const double ai = 20e6, hai = 200e6;
  double rc = 40e9 * (1 - std::pow(1 - s.g, 4) / 2), rt = 40e9;
  ASSERT_NEAR(cc.currentRate(0), rc, kRateTol);
  // (T, BC) before each event -> max < F fast, min > F hyper (once), else additive.
  const auto step = [&](int t, int bc) {
    const int hi = std::max(t, bc), lo = std::min(t, bc);
    if (hi >= 1 && lo > 1)
      rt += hai;
    else if (hi >= 1)
      rt += ai;
    rc = (rc + rt) / 2;
  };
  cc.onSent(0, us(6), 1000);  // (0, 0): fast recovery
  step(0, 0);
  cc.onSent(0, us(7), 2500);  // (0, 1), (0, 2): additive twice; 500 B carried
  step(0, 1);
  step(0, 2);
  EXPECT_NEAR(cc.currentRate(0), rc, kRateTol);
  EXPECT_NEAR(cc.targetRate(0), rt, kRateTol);
  cc.rate(0, us(305.001));  // timer (0, 3): additive
  step(0, 3);
  cc.onSent(0, us(306), 500);  // (1, 3): additive
  step(1, 3);
  cc.rate(0, us(605.001));  // timer (1, 4): additive
  step(1, 4);
  cc.rate(0, us(905.001));  // timer (2, 4): hyper
  step(2, 4);
  EXPECT_NEAR(cc.currentRate(0), rc, kRateTol);
  EXPECT_NEAR(cc.targetRate(0), rt, kRateTol);
  EXPECT_EQ(cc.timerStages(0), 3);
  EXPECT_EQ(cc.byteStages(0), 4);
}

TEST(DcqcnMlxTest, MinRateHoldsUnderACnpStorm) {
  const DcqcnSpec s = ns3Mellanox();
  DcqcnMlx cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  for (int i = 1; i <= 2000; ++i) {
    cc.onNotification(0, Time::ns(500) * i);
    ASSERT_GE(cc.rate(0, Time::ns(500) * i), s.minRate) << i;
  }
  EXPECT_EQ(cc.rate(0, Time::ms(1)), s.minRate);
}

TEST(DcqcnMlxTest, RecoversToLineRateThenTheTimerSleeps) {
  // One cut, then only fast recovery: Rt stays at line (no clamp), so each 300 us halves the gap.
  const DcqcnSpec s = ns3Mellanox();
  DcqcnMlx cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, us(1));
  const double a5 = std::pow(1 - s.g, 4);
  double gap = kLine * a5 / 2;  // after the cut at 5.001 us
  for (int k = 1; k <= 10; ++k) {
    cc.rate(0, us(5.001) + Time::us(300) * k);
    gap /= 2;
    EXPECT_NEAR(cc.currentRate(0), kLine - gap, kRateTol) << k;
    ASSERT_LE(cc.rate(0, us(5.001) + Time::us(300) * k), kLineRate);
  }
  // The gap falls below 1 bit/s after ceil(log2(gap0)) = 36 halvings (gap0 ~ 4.9e10 bit/s).
  const Time back = us(5.001) + Time::us(300) * 36;
  EXPECT_LT(cc.rate(0, back - Time::us(300)), kLineRate);
  EXPECT_EQ(cc.rate(0, back), kLineRate);
  EXPECT_EQ(cc.nextTimer(0, back), Time::max());
  // Alpha kept decaying on its grid (ticks at 1 + k us) and the next CNP's cut uses it. The CNP
  // at 20001.5 us latches tick 20002; its cut is the next decrease tick, 1.001 + 4 x 5001 us.
  cc.onNotification(0, us(20001.5));
  EXPECT_EQ(cc.pendingCut(0), us(20005.001));
  // Ticks 2..20001 quiet (20000), 20002 raised, 20003..20005 quiet.
  const double a = ((1 - s.g) * std::pow(1 - s.g, 20000) + s.g) * std::pow(1 - s.g, 3);
  cc.rate(0, us(20005.001));
  EXPECT_NEAR(cc.alpha(0, us(20005.001)), a, kAlphaTol);
  EXPECT_NEAR(cc.currentRate(0), kLine * (1 - a / 2), kRateTol);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), kLine);
}

TEST(DcqcnMlxTest, NextTimerIsTheNextIncreaseAfterAPendingCut) {
  const DcqcnSpec s = ns3Mellanox();
  DcqcnMlx cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  EXPECT_EQ(cc.nextTimer(0, us(1)), Time::max());
  cc.onNotification(0, us(2));
  EXPECT_EQ(cc.nextTimer(0, us(2)), us(306.001));  // first cut at 6.001 (2 + 4 + 0.001)
  cc.rate(0, us(6.001));
  EXPECT_EQ(cc.nextTimer(0, us(6.001)), us(306.001));
  cc.onNotification(0, us(100));  // cut at 102.001 will restart the timer
  EXPECT_EQ(cc.nextTimer(0, us(100)), us(402.001));
  EXPECT_EQ(cc.nextTimer(0, us(102.001)), us(402.001));
  EXPECT_EQ(cc.timerStages(0), 0);
}

TEST(DcqcnMlxTest, NextRateChangeIsTheLatchedCutBeforeTheTimer) {
  // A CNP at 2 us latches a cut for the tick at 6.001 us (2 + 4 + 0.001); the increase timer it
  // starts expires at 306.001. The rate is line rate until the cut, lower from it: the next
  // change is the cut, not the timer (the hybrid backend refreshes a carried rate then).
  const DcqcnSpec s = ns3Mellanox();
  DcqcnMlx cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  EXPECT_EQ(cc.nextRateChange(0, us(1)), Time::max()) << "at line rate, nothing pending";
  cc.onNotification(0, us(2));
  EXPECT_EQ(cc.nextRateChange(0, us(2)), us(6.001));
  EXPECT_EQ(cc.rate(0, us(6.001) - Time::ps(1)), kLineRate);
  EXPECT_LT(cc.rate(0, us(6.001)).bitsPerSecond(), kLineRate.bitsPerSecond());
  EXPECT_EQ(cc.nextRateChange(0, us(6.001)), us(306.001)) << "then the timer";
}

}  // namespace
}  // namespace fabricsim
