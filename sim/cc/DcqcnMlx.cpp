#include "sim/cc/DcqcnMlx.h"

#include "sim/cc/DcqcnParams.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

DcqcnMlx::DcqcnMlx(const DcqcnSpec& spec) : spec_(spec), oneMinusG_(1.0 - spec.g) {
  checkDcqcnSpec(spec);
  SIM_CHECK(spec.rateReduceInterval > Time::zero(),
            "DCQCN variant mlx needs a positive rate-reduce interval");
}

void DcqcnMlx::addFlow(uint32_t qp, BitRate lineRate, Time now) {
  SIM_CHECK(lineRate.bitsPerSecond() > 0, "DcqcnMlx::addFlow: line rate must be positive");
  if (qp >= qps_.size()) qps_.resize(static_cast<size_t>(qp) + 1);
  QpState& s = qps_[qp];
  s = QpState{};
  s.line = static_cast<double>(lineRate.bitsPerSecond());
  s.rc = s.rt = s.line;
  s.rateBps = lineRate.bitsPerSecond();
  s.alphaBase = spec_.initialAlpha;
  s.anchor = now;
  s.cutAt = Time::max();
  s.nextIncrease = Time::max();
  s.nextEvent = Time::max();
}

void DcqcnMlx::copyQueuePair(uint32_t qp, const CongestionControl& from, uint32_t fromQp, Time shift) {
  const auto* other = dynamic_cast<const DcqcnMlx*>(&from);
  QpState& s = copyState(qps_, qp, other != nullptr ? &other->qps_ : nullptr, fromQp, "DcqcnMlx");
  s.anchor = shifted(s.anchor, shift);
  s.cutAt = shifted(s.cutAt, shift);
  s.nextIncrease = shifted(s.nextIncrease, shift);
  s.nextEvent = shifted(s.nextEvent, shift);
}

double DcqcnMlx::alphaAt(const QpState& s, Time t) const {
  if (!s.cnpSeen || t <= s.anchor) return s.alphaBase;
  const int64_t tick = (t - s.anchor).picos() / spec_.alphaTimer.picos();  // last tick at or before t
  const int64_t n = tick - s.alphaTick;
  if (n <= 0) return s.alphaBase;
  double a = s.alphaBase;
  int64_t quiet = n;
  if (s.alphaLatched) {  // the first tick after the latch raises alpha; the rest decay it
    a = oneMinusG_ * a + spec_.g;
    --quiet;
  }
  return quiet == 0 ? a : a * std::pow(oneMinusG_, static_cast<double>(quiet));
}

double DcqcnMlx::alpha(uint32_t qp, Time now) const {
  return alphaAt(qps_[qp], now);
}

void DcqcnMlx::settleAlpha(QpState& s, Time t) {
  if (!s.cnpSeen || t <= s.anchor) return;
  const int64_t tick = (t - s.anchor).picos() / spec_.alphaTimer.picos();
  if (tick <= s.alphaTick) return;
  s.alphaBase = alphaAt(s, t);
  s.alphaTick = tick;
  s.alphaLatched = false;
}

void DcqcnMlx::setRate(QpState& s) {
  if (s.line - s.rc < 1.0) {  // back at line rate (Rc <= Rt <= line, so Rt is too): the timer sleeps
    s.rc = s.rt = s.line;
    s.timerRunning = false;
  }
  s.rateBps = std::max<int64_t>(1, std::llround(s.rc));
}

void DcqcnMlx::updateNextEvent(QpState& s) {
  s.nextEvent = std::min(s.timerRunning ? s.nextIncrease : Time::max(), s.decLatched ? s.cutAt : Time::max());
}

void DcqcnMlx::increase(QpState& s) {
  const int f = spec_.fastRecoveryStages;
  const bool bytesOn = spec_.byteCounter > 0;
  const int32_t hi = bytesOn ? std::max(s.timerStages, s.byteStages) : s.timerStages;
  const int32_t lo = bytesOn ? std::min(s.timerStages, s.byteStages) : s.timerStages;
  if (hi < f) {
    // fast recovery: Rt unchanged
  } else if (lo > f) {
    s.rt += static_cast<double>(spec_.hyperIncrease.bitsPerSecond());  // once per event
  } else {
    s.rt += static_cast<double>(spec_.additiveIncrease.bitsPerSecond());
  }
  s.rt = std::min(s.rt, s.line);
  s.rc = std::min((s.rt + s.rc) / 2, s.line);
  setRate(s);
}

void DcqcnMlx::cut(QpState& s, Time at) {
  settleAlpha(s, at);
  const double a = s.alphaBase;  // settled at `at`: the alpha tick of this instant included
  if (spec_.clampTargetRate || (spec_.clampTargetRateAfterTimeIncrease && s.timerStages > 0)) s.rt = s.rc;
  s.rc = dcqcnCutRate(spec_, s.rc, a, s.line);
  s.timerStages = 0;
  s.byteStages = 0;
  s.bytes = 0;
  s.decLatched = false;
  s.cutAt = Time::max();
  s.nextIncrease = at + spec_.rateIncreaseTimer;
  s.timerRunning = true;
  setRate(s);
}

void DcqcnMlx::advance(QpState& s, Time now) {
  for (;;) {
    const Time ti = s.timerRunning ? s.nextIncrease : Time::max();
    const Time tc = s.decLatched ? s.cutAt : Time::max();
    if (ti <= tc) {  // at equal times the timer first (ns-3 scheduled it earlier)
      if (ti > now) break;
      increase(s);
      ++s.timerStages;
      s.nextIncrease += spec_.rateIncreaseTimer;
    } else {
      if (tc > now) break;
      cut(s, tc);
    }
  }
  updateNextEvent(s);
}

void DcqcnMlx::onSent(uint32_t qp, Time now, uint32_t wireBytes) {
  SIM_DCHECK(qp < qps_.size(), "DcqcnMlx::onSent: unknown QP");
  if (spec_.byteCounter == 0) return;
  QpState& s = qps_[qp];
  if (s.nextEvent <= now) advance(s, now);
  if (!s.timerRunning) return;  // at line rate, or before the first cut: nothing to raise
  s.bytes += wireBytes;
  while (s.timerRunning && s.bytes >= spec_.byteCounter) {
    s.bytes -= spec_.byteCounter;
    increase(s);
    ++s.byteStages;
  }
  updateNextEvent(s);
}

void DcqcnMlx::onNotification(uint32_t qp, Time now) {
  SIM_DCHECK(qp < qps_.size(), "DcqcnMlx::onNotification: unknown QP");
  QpState& s = qps_[qp];
  advance(s, now);  // grid instants at or before now come first
  if (!s.cnpSeen) {
    s.cnpSeen = true;
    s.anchor = now;
    s.alphaBase = spec_.initialAlpha;
    s.alphaTick = 0;
    s.alphaLatched = false;
    if (spec_.rateOnFirstCnp.bitsPerSecond() > 0)
      s.rc = std::min(static_cast<double>(spec_.rateOnFirstCnp.bitsPerSecond()), s.rc);
    s.rt = s.rc;
    s.decLatched = true;
    s.cutAt = now + spec_.rateReduceInterval + kDecreaseOffset;
    setRate(s);
  } else {
    settleAlpha(s, now);  // the latch belongs to the next alpha tick
    s.alphaLatched = true;
    if (!s.decLatched) {
      // The first decrease tick strictly after now: t0 + 1 ns + k D, k >= 1.
      const int64_t d = spec_.rateReduceInterval.picos();
      const int64_t x = (now - s.anchor - kDecreaseOffset).picos();
      const int64_t k = x < 0 ? 1 : x / d + 1;
      s.decLatched = true;
      s.cutAt = s.anchor + kDecreaseOffset + spec_.rateReduceInterval * k;
    }
  }
  updateNextEvent(s);
}

Time DcqcnMlx::nextTimer(uint32_t qp, Time now) {
  SIM_DCHECK(qp < qps_.size(), "DcqcnMlx::nextTimer: unknown QP");
  QpState& s = qps_[qp];
  if (s.nextEvent <= now) advance(s, now);
  Time next = s.timerRunning ? s.nextIncrease : Time::max();
  // A cut before that expiry restarts the timer from the cut (a cut alone never raises the rate).
  if (s.decLatched && s.cutAt < next) next = s.cutAt + spec_.rateIncreaseTimer;
  return next;
}

}  // namespace fabricsim
