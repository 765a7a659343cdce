// Dcqcn (variant paper): the reaction point against the closed forms of the DCQCN rules
// (decrease, alpha EWMA and decay, fast recovery, additive and hyper increase), the firmware
// options it keeps (clamps, decrease cap, rate on first CNP), and a hand-computed trace that must
// come out the same whether or not the QP is polled between CNPs. The mlx variant: DcqcnMlxTest.
#include "sim/cc/Dcqcn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/cc/DcqcnMlx.h"
#include "sim/cc/DcqcnParams.h"

namespace fabricsim {
namespace {

constexpr double kLine = 100e9;
const BitRate kLineRate = BitRate::gbps(100);
constexpr double kRateTol = 1e-3;  // bit/s

DcqcnSpec paper() {
  return dcqcnPreset("dcqcn-paper");
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

TEST(DcqcnTest, FirstCutUsesInitialAlpha) {
  DcqcnSpec s = paper();
  s.initialAlpha = 1023.0 / 1024;
  s.clampTargetRate = false;
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(5));
  EXPECT_NEAR(cc.currentRate(0), kLine * (1 - (1023.0 / 1024) / 2), kRateTol);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), kLine);  // no clamp
}

TEST(DcqcnTest, DecreaseIsCappedByMaxDecreaseFraction) {
  DcqcnSpec s = paper();
  s.maxDecreaseFraction = 0.25;  // tighter than alpha / 2 = 0.5
  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  cc.onNotification(0, Time::us(5));
  EXPECT_NEAR(cc.currentRate(0), kLine * 0.75, kRateTol);
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
  DcqcnSpec s = paper();
  s.clampTargetRate = false;
  s.clampTargetRateAfterTimeIncrease = true;
  s.byteCounter = 32767;
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
  DcqcnSpec s = paper();
  s.clampTargetRate = false;
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

TEST(DcqcnTest, ByteCounterOffLeavesTheTimerStageAlone) {
  DcqcnSpec s = paper();
  s.byteCounter = 0;
  TwoCnps q(s);
  q.cc.onSent(0, q.t1 + Time::us(1), 1'000'000'000);  // ignored
  EXPECT_EQ(q.cc.byteStages(0), 0);
  EXPECT_DOUBLE_EQ(q.cc.currentRate(0), 25e9);
  // F = 5 timer stages of fast recovery, then T = F additive, then T > F hyper with i = T - F.
  const int f = s.fastRecoveryStages;
  const double rai = static_cast<double>(s.additiveIncrease.bitsPerSecond());
  const double rhai = static_cast<double>(s.hyperIncrease.bitsPerSecond());
  q.cc.rate(0, q.t1 + s.rateIncreaseTimer * (f + 1));
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + rai);
  q.cc.rate(0, q.t1 + s.rateIncreaseTimer * (f + 3));
  EXPECT_DOUBLE_EQ(q.cc.targetRate(0), 50e9 + rai + 1 * rhai + 2 * rhai);
}

/// A hand-worked trace of the paper preset with the byte counter off, so that the timer stage
/// alone drives fast recovery, additive and hyper increase. Times in us; alpha timer and T both
/// 55 us, g = 1/256, F = 5, R_AI = 40 Mb/s, R_HAI = 400 Mb/s, Rt clamped at every CNP.
/// Run twice: lazily (no calls between CNPs and checkpoints) and polled every 250 ns, with the
/// same expected values: the lazy timers must not depend on polling.
void paperTrace(bool poll) {
  DcqcnSpec s = paper();
  s.byteCounter = 0;
  const double g = 1.0 / 256, line = 100e9, rai = 40e6, rhai = 400e6;
  // CNP 1 at 10 us: alpha = 1 cuts to 50 G; Rt = 100 G; alpha = (1-g) 1 + g = 1; timer at 65 us.
  // CNP 2 at 30 us (no alpha period has passed): Rt = 50 G, Rc = 25 G, alpha 1; timer from 30 us.
  double rc = 25e9, rt = 50e9;
  // Quiet: increase events at 30 + 55 k us (k = 1..8), stage T = k - 1 before each.
  std::vector<double> rcAt, rtAt;
  for (int t = 0; t < 8; ++t) {
    if (t == 5) rt += rai;            // T = F: additive
    if (t > 5) rt += (t - 5) * rhai;  // T > F: hyper, i = T - F
    rc = (rc + rt) / 2;               // (fast recovery for T < F: Rt unchanged)
    rcAt.push_back(rc);
    rtAt.push_back(rt);
  }
  // CNP 3 at 473 us = 30 + 8 x 55 + 3: alpha has decayed over 8 quiet periods from 1.
  const double a3 = std::pow(1 - g, 8);
  const double rt3 = rc, rc3 = rc * (1 - a3 / 2);

  Dcqcn cc(s);
  cc.addFlow(0, kLineRate, Time::zero());
  const auto pollTo = [&](Time until, Time& polled) {
    for (; poll && polled < until; polled += Time::ns(250)) {
      cc.rate(0, polled);
      cc.nextTimer(0, polled);
    }
  };
  Time polled = Time::zero();
  pollTo(Time::us(10), polled);
  cc.onNotification(0, Time::us(10));
  pollTo(Time::us(30), polled);
  cc.onNotification(0, Time::us(30));
  for (int k = 1; k <= 8; ++k) {
    const Time at = Time::us(30 + 55 * k);
    pollTo(at, polled);
    EXPECT_NEAR(static_cast<double>(cc.rate(0, at - Time::ps(1)).bitsPerSecond()),
                k == 1 ? 25e9 : rcAt[k - 2], 0.5)
        << k;
    cc.rate(0, at);
    EXPECT_NEAR(cc.currentRate(0), rcAt[k - 1], kRateTol) << k;
    EXPECT_DOUBLE_EQ(cc.targetRate(0), rtAt[k - 1]) << k;
    EXPECT_EQ(cc.timerStages(0), k) << k;
  }
  pollTo(Time::us(473), polled);
  EXPECT_NEAR(cc.alpha(0, Time::us(473)), a3, 1e-12);
  cc.onNotification(0, Time::us(473));
  EXPECT_NEAR(cc.currentRate(0), rc3, kRateTol);
  EXPECT_DOUBLE_EQ(cc.targetRate(0), rt3);
  EXPECT_NEAR(cc.alpha(0, Time::us(473)), (1 - g) * a3 + g, 1e-12);
  EXPECT_EQ(cc.nextTimer(0, Time::us(473)), Time::us(473 + 55));
  EXPECT_LT(rt3, line);
}

TEST(DcqcnTest, HandTraceLazy) {
  paperTrace(false);
}

TEST(DcqcnTest, HandTracePolledEvery250ns) {
  paperTrace(true);
}

TEST(DcqcnTest, PresetsAndFactory) {
  EXPECT_THROW(dcqcnPreset("dcqcn"), std::invalid_argument);
  const DcqcnSpec cx = dcqcnPreset("connectx");
  EXPECT_EQ(cx.preset, "connectx");
  EXPECT_EQ(cx.variant, "mlx");
  EXPECT_DOUBLE_EQ(cx.g, 5.0 / 1024);
  EXPECT_EQ(cx.rateReduceInterval, Time::us(4));
  EXPECT_EQ(cx.byteCounter, 0);
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
  ASSERT_NE(dynamic_cast<DcqcnMlx*>(d.get()), nullptr);  // connectx implies variant mlx
  EXPECT_EQ(dynamic_cast<DcqcnMlx*>(d.get())->spec().preset, "connectx");
  spec.dcqcn = paperSpec;
  auto p = makeCongestionControl(spec);
  ASSERT_NE(dynamic_cast<Dcqcn*>(p.get()), nullptr);
  EXPECT_STREQ(p->name(), "dcqcn");
  spec.dcqcn.variant = "qcn";
  EXPECT_THROW(makeCongestionControl(spec), std::invalid_argument);
  spec.dcqcn = cx;
  spec.algorithm = "ibcc";
  auto ib = makeCongestionControl(spec);
  ASSERT_NE(ib, nullptr);
  EXPECT_STREQ(ib->name(), "ibcc");
  spec.algorithm = "timely";
  EXPECT_THROW(makeCongestionControl(spec), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim
