// Dcqcn: the reaction point against the closed forms of the DCQCN rules (decrease, alpha EWMA
// and decay, fast recovery, additive and hyper increase), the ConnectX options, and lazy timers.
#include "sim/cc/Dcqcn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "sim/cc/DcqcnParams.h"

namespace fabricsim {
namespace {

constexpr double kLine = 100e9;
const BitRate kLineRate = BitRate::gbps(100);
constexpr double kRateTol = 1e-3;  // bit/s

DcqcnSpec paper() {
  return dcqcnPreset("dcqcn-paper");
}
DcqcnSpec connectx() {
  return dcqcnPreset("connectx");
}

/// A paper-preset QP 0 that has taken two CNPs 1 us apart at t0 = 10 us: alpha = 1 throughout,
/// so Rc = 25 Gb/s and (clamped) Rt = 50 Gb/s; the timer restarts at t1 = 11 us.
struct TwoCnps {
  explicit TwoCnps(DcqcnSpec s) : cc(s) {
    cc.addFlow(0, kLineRate, Time::zero());
    cc.onNotification(0, Time::us(10));
    cc.onNotification(0, t1);
  }
  Dcqcn cc;
  Time t1 = Time::us(11);
};

TEST(DcqcnTest, NoCnpMeansLineRateAndNoTimers) {
  Dcqcn cc(paper());
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onSent(0, Time::us(1), 50'000'000);
  EXPECT_EQ(cc.rate(0, Time::ms(10)), kLineRate);
  EXPECT_EQ(cc.nextTimer(0, Time::ms(10)), Time::max());
  EXPECT_EQ(cc.byteStages(0), 0);
  EXPECT_STREQ(cc.name(), "dcqcn");
}

TEST(DcqcnTest, FirstCnpWithAlphaOneHalvesRateAndTargetsOldRate) {
  Dcqcn cc(paper());
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(3));
  EXPECT_EQ(cc.rate(0, Time::us(3)), BitRate::gbps(50));
  EXPECT_DOUBLE_EQ(cc.targetRate(0), kLine);
}

TEST(DcqcnTest, AlphaEwmaOnCnp) {
  DcqcnSpec s = paper();
  s.initialAlpha = 0.5;
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  EXPECT_DOUBLE_EQ(cc.alpha(0, Time::us(1)), 0.5);
  cc.onNotification(0, Time::us(1));
  EXPECT_DOUBLE_EQ(cc.rate(0, Time::us(1)).bitsPerSecond(), kLine * (1 - 0.5 / 2));  // old alpha cuts
  EXPECT_DOUBLE_EQ(cc.alpha(0, Time::us(1)), (1 - s.g) * 0.5 + s.g);
}

TEST(DcqcnTest, AlphaDecaysOncePerQuietPeriod) {
  const DcqcnSpec s = paper();
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  const Time t0 = Time::us(7);
  cc.onNotification(0, t0);
  const double a1 = 1.0;  // (1-g) * 1 + g
  for (int k : {1, 2, 10, 300}) {
    const Time at = t0 + s.alphaTimer * k;
    EXPECT_NEAR(cc.alpha(0, at), a1 * std::pow(1 - s.g, k), 1e-12) << k;
    EXPECT_NEAR(cc.alpha(0, at - Time::ps(1)), a1 * std::pow(1 - s.g, k - 1), 1e-12) << k;
  }
  // A CNP after k quiet periods folds the decayed alpha into the EWMA and restarts the alpha timer.
  const Time t2 = t0 + s.alphaTimer * 10 + Time::us(3);
  cc.onNotification(0, t2);
  const double a2 = (1 - s.g) * std::pow(1 - s.g, 10) + s.g;
  EXPECT_NEAR(cc.alpha(0, t2), a2, 1e-12);
  EXPECT_NEAR(cc.alpha(0, t2 + s.alphaTimer), a2 * (1 - s.g), 1e-12);
}

TEST(DcqcnTest, FastRecoveryHalvesTheGapOncePerStage) {
  DcqcnSpec s = paper();
  TwoCnps q(s);
  const double rc0 = 25e9, rt = 50e9;
  ASSERT_NEAR(q.cc.currentRate(0), rc0, kRateTol);
  ASSERT_NEAR(q.cc.targetRate(0), rt, kRateTol);
  const int f = s.fastRecoveryStages;
  for (int k = 1; k <= f; ++k) {
    const double r = static_cast<double>(q.cc.rate(0, q.t1 + s.rateIncreaseTimer * k).bitsPerSecond());
    EXPECT_NEAR(r, rt - (rt - rc0) / std::pow(2.0, k), 1.0) << k;
  }
  EXPECT_NEAR(q.cc.currentRate(0), rt - (rt - rc0) / std::pow(2.0, f), kRateTol);
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), rt);  // fast recovery leaves the target alone
  EXPECT_EQ(q.cc.timerStages(0), f);
}

TEST(DcqcnTest, AdditiveIncreaseAfterFStages) {
  const DcqcnSpec s = paper();
  TwoCnps q(s);
  const int f = s.fastRecoveryStages;
  const double rai = static_cast<double>(s.additiveIncrease.bitsPerSecond());
  q.cc.rate(0, q.t1 + s.rateIncreaseTimer * f);
  double rc = q.cc.currentRate(0);
  for (int n = 1; n <= 4; ++n) {
    q.cc.rate(0, q.t1 + s.rateIncreaseTimer * (f + n));
    EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + n * rai) << n;
    rc = (q.cc.targetRate(0) + rc) / 2;
    EXPECT_NEAR(q.cc.currentRate(0), rc, kRateTol) << n;
  }
}

TEST(DcqcnTest, HyperIncreaseOnceBothCountersPassF) {
  DcqcnSpec s = paper();
  s.byteCounter = 1000;
  TwoCnps q(s);
  const int f = s.fastRecoveryStages;  // 5
  const double rai = static_cast<double>(s.additiveIncrease.bitsPerSecond());
  const double rhai = static_cast<double>(s.hyperIncrease.bitsPerSecond());
  // F + 1 byte stages at t1: F of fast recovery, then one additive (T = 0 < F).
  q.cc.onSent(0, q.t1, static_cast<uint32_t>((f + 1) * 1000));
  EXPECT_EQ(q.cc.byteStages(0), f + 1);
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + rai);
  // Timer stages 0..F are additive (min(T, BC) <= F); stage F + 1 has min(T, BC) = F + 1 > F: hyper, i = 1.
  q.cc.rate(0, q.t1 + s.rateIncreaseTimer * (f + 1));
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + (f + 2) * rai);
  q.cc.rate(0, q.t1 + s.rateIncreaseTimer * (f + 2));
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + (f + 2) * rai + 1 * rhai);
  // A byte event now: T = F + 2, BC = F + 1: i = min - F = 1.
  q.cc.onSent(0, q.t1 + s.rateIncreaseTimer * (f + 2), 1000);
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + (f + 2) * rai + 2 * rhai);
  // Next timer event: T = BC = F + 2: i = 2.
  q.cc.rate(0, q.t1 + s.rateIncreaseTimer * (f + 3));
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + (f + 2) * rai + 4 * rhai);
}

TEST(DcqcnTest, ByteCounterIncreasesWithoutTimers) {
  DcqcnSpec s = paper();
  s.byteCounter = 4096;
  TwoCnps q(s);
  const Time t = q.t1 + Time::us(1);  // well before the first timer expiry
  for (int i = 0; i < 3 * 4; ++i) q.cc.onSent(0, t, 1024);
  EXPECT_EQ(q.cc.byteStages(0), 3);
  EXPECT_EQ(q.cc.timerStages(0), 0);
  EXPECT_NEAR(q.cc.currentRate(0), 50e9 - 25e9 / 8, kRateTol);
  EXPECT_EQ(q.cc.nextTimer(0, t), q.t1 + s.rateIncreaseTimer);
}

TEST(DcqcnTest, ConnectxFirstCutUsesInitialAlpha) {
  const DcqcnSpec s = connectx();
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(5));
  EXPECT_NEAR(cc.currentRate(0), kLine * (1 - (1023.0 / 1024) / 2), kRateTol);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), kLine);  // CLAMP_TGT_RATE off, no timer increase yet
}

TEST(DcqcnTest, ConnectxDecreaseIsCappedByMaxDecreaseFraction) {
  DcqcnSpec s = connectx();
  s.maxDecreaseFraction = 0.25;  // tighter than alpha / 2 ~ 0.5
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(5));
  EXPECT_NEAR(cc.currentRate(0), kLine * 0.75, kRateTol);
  // With the preset's 50 % cap no single cut goes below half, whatever alpha is.
  Dcqcn cx(connectx());
  cx.addFlow(0, kLineRate, Time::zero());
  double before = kLine;
  for (int i = 0; i < 50; ++i) {
    cx.onNotification(0, Time::us(5 + 4 * i));
    EXPECT_GE(cx.currentRate(0), std::max(before * 0.5, 1e6) - kRateTol) << i;
    before = cx.currentRate(0);
  }
}

TEST(DcqcnTest, ConnectxAtMostOneDecreasePerRateReduceInterval) {
  const DcqcnSpec s = connectx();  // rate_reduce_interval 4 us
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  const Time t0 = Time::us(20);
  cc.onNotification(0, t0);
  const double r1 = cc.currentRate(0);
  for (int i = 1; i <= 3; ++i) cc.onNotification(0, t0 + Time::us(i));  // 1 us apart: no further cut
  EXPECT_DOUBLE_EQ(cc.currentRate(0), r1);
  // ...but each updated alpha: alpha_{n+1} = (1-g) (1-g) alpha_n + g (one quiet 1 us period between).
  double a = (1 - s.g) * s.initialAlpha + s.g;
  for (int i = 1; i <= 3; ++i) a = (1 - s.g) * (a * (1 - s.g)) + s.g;
  EXPECT_NEAR(cc.alpha(0, t0 + Time::us(3)), a, 1e-12);
  const Time t4 = t0 + Time::us(4);
  const double aBefore = cc.alpha(0, t4);
  EXPECT_NEAR(aBefore, a * (1 - s.g), 1e-12);
  cc.onNotification(0, t4);  // 4 us after the last cut: decreases
  EXPECT_NEAR(cc.currentRate(0), r1 * (1 - aBefore / 2), kRateTol);
}

TEST(DcqcnTest, ClampTargetRateOnEveryCnp) {
  Dcqcn cc(paper());  // clampTargetRate = true
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(1));
  cc.onNotification(0, Time::us(2));
  EXPECT_DOUBLE_EQ(cc.targetRate(0), 50e9);
  EXPECT_DOUBLE_EQ(cc.currentRate(0), 25e9);
}

TEST(DcqcnTest, ClampTargetRateOnlyAfterATimerIncrease) {
  const DcqcnSpec s = connectx();  // clamp off, clamp after time increase on
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  const Time t0 = Time::us(10);
  cc.onNotification(0, t0);
  cc.onNotification(0, t0 + Time::us(10));  // no timer increase in between: target stays
  EXPECT_DOUBLE_EQ(cc.targetRate(0), kLine);
  const Time t2 = t0 + Time::us(10) + s.rateIncreaseTimer + Time::us(1);
  cc.rate(0, t2);
  ASSERT_EQ(cc.timerStages(0), 1);
  const double rcBefore = cc.currentRate(0);
  cc.onNotification(0, t2);  // a timer increase happened since the last cut: Rt = Rc
  EXPECT_DOUBLE_EQ(cc.targetRate(0), rcBefore);
  // Bytes alone do not count as a timer increase.
  cc.onSent(0, t2 + Time::us(10), static_cast<uint32_t>(s.byteCounter));
  ASSERT_EQ(cc.byteStages(0), 1);
  const double rt = cc.targetRate(0);
  cc.onNotification(0, t2 + Time::us(10));
  EXPECT_DOUBLE_EQ(cc.targetRate(0), rt);
}

TEST(DcqcnTest, NoClampKeepsTheTarget) {
  DcqcnSpec s = connectx();
  s.clampTargetRateAfterTimeIncrease = false;
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  for (int i = 0; i < 5; ++i) cc.onNotification(0, Time::us(10) + (s.rateIncreaseTimer + Time::us(1)) * i);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), kLine);
}

TEST(DcqcnTest, RateOnFirstCnp) {
  DcqcnSpec s = paper();
  s.rateOnFirstCnp = BitRate::gbps(30);
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(1));
  EXPECT_DOUBLE_EQ(cc.currentRate(0), 30e9);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), 30e9);
  cc.onNotification(0, Time::us(2));  // later CNPs cut as usual (alpha = 1)
  EXPECT_DOUBLE_EQ(cc.currentRate(0), 15e9);
}

TEST(DcqcnTest, MinRateHoldsUnderACnpStorm) {
  const DcqcnSpec s = paper();
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  for (int i = 0; i < 1000; ++i) {
    cc.onNotification(0, Time::us(1) * (i + 1));
    EXPECT_GE(cc.rate(0, Time::us(1) * (i + 1)), s.minRate) << i;
  }
  EXPECT_EQ(cc.rate(0, Time::us(1000)), s.minRate);
}

TEST(DcqcnTest, NeverAboveLineRateAndStopsTimersThere) {
  DcqcnSpec s = paper();
  s.byteCounter = 64 * 1024;
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(1));
  Time t = Time::us(1);
  for (int i = 0; i < 200'000 && cc.nextTimer(0, t) != Time::max(); ++i) {
    t += Time::us(1);
    cc.onSent(0, t, 16 * 1024);
    ASSERT_LE(cc.rate(0, t), kLineRate);
    ASSERT_LE(cc.targetRate(0), kLine);
  }
  EXPECT_EQ(cc.rate(0, t), kLineRate);
  EXPECT_EQ(cc.nextTimer(0, t), Time::max());
  // The next CNP starts a new cycle from line rate with the decayed alpha.
  const double a = cc.alpha(0, t + Time::us(1));
  cc.onNotification(0, t + Time::us(1));
  EXPECT_NEAR(cc.currentRate(0), kLine * (1 - a / 2), kRateTol);
}

TEST(DcqcnTest, NextTimerIsTheNextRateIncreaseExpiry) {
  const DcqcnSpec s = paper();
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  const Time t0 = Time::us(4);
  cc.onNotification(0, t0);
  EXPECT_EQ(cc.nextTimer(0, t0), t0 + s.rateIncreaseTimer);
  EXPECT_EQ(cc.nextTimer(0, t0 + s.rateIncreaseTimer - Time::ps(1)), t0 + s.rateIncreaseTimer);
  EXPECT_EQ(cc.nextTimer(0, t0 + s.rateIncreaseTimer), t0 + s.rateIncreaseTimer * 2);
  EXPECT_EQ(cc.timerStages(0), 1);
  // A later cut restarts the timer.
  const Time t1 = t0 + s.rateIncreaseTimer * 2 + Time::us(7);
  cc.onNotification(0, t1);
  EXPECT_EQ(cc.nextTimer(0, t1), t1 + s.rateIncreaseTimer);
}

/// Drives every QP with the same CNPs and sends; `poll` also asks rate() and nextTimer() every 1 us
/// (and records the lowest rate seen in `minSeen`).
std::unique_ptr<Dcqcn> script(const DcqcnSpec& s, bool poll, BitRate* minSeen = nullptr) {
  auto cc = std::make_unique<Dcqcn>(s);
  for (uint32_t qp = 0; qp < 4; ++qp) cc->addFlow(qp, qp == 3 ? BitRate::gbps(400) : kLineRate, Time::zero());
  for (int us = 1; us <= 6000; ++us) {
    const Time t = Time::us(us);
    for (uint32_t qp = 0; qp < 4; ++qp) {
      if (poll) {
        const BitRate r = cc->rate(qp, t);
        if (minSeen && r < *minSeen) *minSeen = r;
        cc->nextTimer(qp, t);
      }
      if ((us + 37 * static_cast<int>(qp)) % 97 == 0 && us < 3000) cc->onNotification(qp, t);
      if (us % (qp + 1) == 0) cc->onSent(qp, t + Time::ns(300), 4096 + 64);
    }
  }
  return cc;
}

TEST(DcqcnTest, LazyTimersMatchPolledTimers) {
  for (const char* preset : {"dcqcn-paper", "connectx"}) {
    const DcqcnSpec s = dcqcnPreset(preset);
    BitRate minSeen = kLineRate;
    const auto polled = script(s, true, &minSeen);
    const auto lazy = script(s, false);
    EXPECT_LT(minSeen, kLineRate) << preset;  // the script did throttle
    const Time end = Time::us(6001);
    for (uint32_t qp = 0; qp < 4; ++qp) {
      EXPECT_EQ(polled->rate(qp, end), lazy->rate(qp, end)) << preset << " qp " << qp;
      EXPECT_EQ(polled->currentRate(qp), lazy->currentRate(qp)) << preset << " qp " << qp;
      EXPECT_EQ(polled->targetRate(qp), lazy->targetRate(qp)) << preset << " qp " << qp;
      EXPECT_EQ(polled->alpha(qp, end), lazy->alpha(qp, end)) << preset << " qp " << qp;
      EXPECT_EQ(polled->timerStages(qp), lazy->timerStages(qp)) << preset << " qp " << qp;
      EXPECT_EQ(polled->byteStages(qp), lazy->byteStages(qp)) << preset << " qp " << qp;
      EXPECT_EQ(polled->nextTimer(qp, end), lazy->nextTimer(qp, end)) << preset << " qp " << qp;
    }
  }
}

TEST(DcqcnTest, PresetsAndFactory) {
  EXPECT_THROW(dcqcnPreset("dcqcn"), std::invalid_argument);
  const DcqcnSpec cx = dcqcnPreset("connectx");
  EXPECT_EQ(cx.preset, "connectx");
  EXPECT_DOUBLE_EQ(cx.g, 5.0 / 1024);
  EXPECT_EQ(cx.rateReduceInterval, Time::us(4));
  EXPECT_EQ(cx.byteCounter, 32767);
  const DcqcnSpec paperSpec = dcqcnPreset("dcqcn-paper");
  EXPECT_EQ(paperSpec.preset, "dcqcn-paper");
  EXPECT_EQ(paperSpec.fastRecoveryStages, 5);
  EXPECT_DOUBLE_EQ(paperSpec.maxDecreaseFraction, 1.0);

  CongestionControlSpec spec;
  spec.dcqcn = cx;
  spec.algorithm = "none";
  EXPECT_EQ(makeCongestionControl(spec), nullptr);
  spec.algorithm = "dcqcn";
  auto d = makeCongestionControl(spec);
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(d->name(), "dcqcn");
  ASSERT_NE(dynamic_cast<Dcqcn*>(d.get()), nullptr);
  EXPECT_EQ(dynamic_cast<Dcqcn*>(d.get())->spec().preset, "connectx");
  spec.algorithm = "ibcc";
  auto ib = makeCongestionControl(spec);
  ASSERT_NE(ib, nullptr);
  EXPECT_STREQ(ib->name(), "ibcc");
  spec.algorithm = "timely";
  EXPECT_THROW(makeCongestionControl(spec), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim
