// CongestionControl::copyQueuePair: a queue pair copied into another controller, its clock moved,
// is the same reaction point. Checked against closed forms of the rules (a copied DCQCN QP cut
// twice at alpha 1 sends at a quarter of line rate, then recovers on the copy's clock; a copied
// IB CC QP sends at the rate of its CCT index and steps down at the source's timer phase), and
// as an invariant for every algorithm: the copy, driven with the same notifications and bytes
// `shift` later, gives the source's rates at every instant.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "sim/cc/Dcqcn.h"
#include "sim/cc/DcqcnMlx.h"
#include "sim/cc/DcqcnParams.h"
#include "sim/cc/IbCongestionControl.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const BitRate kLine = BitRate::gbps(400);
const Time kShift = Time::ms(7) + Time::ns(3);  // not a multiple of any timer period

IbCcSpec ibSpec() {
  IbCcSpec s;
  s.cctiIncrease = 4;
  s.cctiLimit = 64;
  s.cctiTimer = Time::us(10);
  s.cctScale = 8.0;
  return s;
}

std::unique_ptr<CongestionControl> make(int which) {
  if (which == 0) return std::make_unique<Dcqcn>(dcqcnPreset("dcqcn-paper"));
  if (which == 1) return std::make_unique<DcqcnMlx>(dcqcnPreset("connectx"));
  return std::make_unique<IbCongestionControl>(ibSpec());
}

TEST(CopyQueuePairTest, DcqcnCopyKeepsRatesAndRecoversOnTheNewClock) {
  Dcqcn src(dcqcnPreset("dcqcn-paper"));
  src.addFlow(3, kLine, Time::zero());
  src.onNotification(3, Time::us(10));  // alpha 1: Rc = 200, Rt = 400 Gb/s
  src.onNotification(3, Time::us(11));  // Rc = 100 Gb/s, Rt = 200 (clamped to the rate cut)
  Dcqcn dst(dcqcnPreset("dcqcn-paper"));
  dst.copyQueuePair(0, src, 3, kShift);
  // Right after the second cut, on the copy's clock: a quarter of line rate.
  EXPECT_NEAR(static_cast<double>(dst.rate(0, Time::us(11) + kShift).bitsPerSecond()), 100e9, 1.0);
  // Fast recovery, Rc = (Rc + Rt) / 2 = 150 Gb/s, one increase-timer period (55 us) after the
  // cut on the copy's clock, not before.
  const Time period = dcqcnPreset("dcqcn-paper").rateIncreaseTimer;
  EXPECT_NEAR(static_cast<double>(dst.rate(0, Time::us(11) + period + kShift - Time::ns(1)).bitsPerSecond()),
              100e9, 1.0);
  EXPECT_NEAR(static_cast<double>(dst.rate(0, Time::us(11) + period + kShift).bitsPerSecond()), 150e9, 1.0);
}

TEST(CopyQueuePairTest, IbCopyStepsDownAtTheSourcesTimerPhase) {
  IbCongestionControl src(ibSpec());
  src.addFlow(0, kLine, Time::us(3));  // timer phase: 3 us + k 10 us
  src.onNotification(0, Time::us(4));
  src.onNotification(0, Time::us(5));  // index 8: 400 / (1 + 8/8) = 200 Gb/s
  IbCongestionControl dst(ibSpec());
  dst.copyQueuePair(5, src, 0, kShift);
  EXPECT_EQ(dst.rate(5, Time::us(5) + kShift).bitsPerSecond(), std::llround(400e9 / 2.0));
  // The first expiry after the BECNs is at 13 us (source clock): index 7.
  EXPECT_EQ(dst.rate(5, Time::us(13) + kShift - Time::ps(1)).bitsPerSecond(), std::llround(400e9 / 2.0));
  EXPECT_EQ(dst.rate(5, Time::us(13) + kShift).bitsPerSecond(), std::llround(400e9 / (1.0 + 7 / 8.0)));
}

TEST(CopyQueuePairTest, ACopyDrivenLaterGivesTheSourcesRates) {
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    auto src = make(which);
    auto dst = make(which);
    dst->addFlow(0, BitRate::gbps(100), Time::zero());  // overwritten by the copy
    src->addFlow(2, kLine, Time::zero());
    // Cut, then copied mid-recovery.
    for (int k = 0; k < 3; ++k) src->onNotification(2, Time::us(20 + 7 * k));
    src->onSent(2, Time::us(40), 4096);
    dst->copyQueuePair(0, *src, 2, kShift);
    // From here both get the same history, the copy `kShift` later.
    std::vector<double> a, b;
    for (int step = 0; step < 200; ++step) {
      const Time t = Time::us(41 + 13 * step);
      if (step % 37 == 5) {
        src->onNotification(2, t);
        dst->onNotification(0, t + kShift);
      }
      src->onSent(2, t, 4096);
      dst->onSent(0, t + kShift, 4096);
      a.push_back(static_cast<double>(src->rate(2, t).bitsPerSecond()));
      b.push_back(static_cast<double>(dst->rate(0, t + kShift).bitsPerSecond()));
      const Time na = src->nextTimer(2, t), nb = dst->nextTimer(0, t + kShift);
      EXPECT_EQ(na == Time::max() ? na : na + kShift, nb);
    }
    EXPECT_EQ(a, b);
    EXPECT_LT(a.front(), 400e9);  // the copy started cut: the check is not of two idle QPs
  }
}

TEST(CopyQueuePairTest, AnotherAlgorithmIsABug) {
  auto src = make(0);
  src->addFlow(0, kLine, Time::zero());
  auto dst = make(2);
  EXPECT_THROW(dst->copyQueuePair(0, *src, 0, Time::zero()), SimError);
  auto mlx = make(1);
  EXPECT_THROW(mlx->copyQueuePair(0, *src, 0, Time::zero()), SimError);
}

}  // namespace
}  // namespace fabricsim
