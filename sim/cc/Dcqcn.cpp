#include "sim/cc/Dcqcn.h"

#include "sim/cc/DcqcnParams.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

Dcqcn::Dcqcn(const DcqcnSpec& spec) : spec_(spec), oneMinusG_(1.0 - spec.g) {
  checkDcqcnSpec(spec);
  SIM_CHECK(spec.rateReduceInterval == Time::zero(),
            "DCQCN variant paper cuts on every CNP: rate-reduce interval must be 0 (use variant mlx)");
}

void Dcqcn::addFlow(uint32_t qp, BitRate lineRate, Time now) {
  SIM_CHECK(lineRate.bitsPerSecond() > 0, "Dcqcn::addFlow: line rate must be positive");
  if (qp >= qps_.size()) qps_.resize(static_cast<size_t>(qp) + 1);
  QpState& s = qps_[qp];
  s = QpState{};
  s.line = static_cast<double>(lineRate.bitsPerSecond());
  s.rc = s.rt = s.line;
  s.rateBps = lineRate.bitsPerSecond();
  s.alphaBase = spec_.initialAlpha;
  s.alphaAnchor = now;
  s.nextIncrease = Time::max();
}

void Dcqcn::copyQueuePair(uint32_t qp, const CongestionControl& from, uint32_t fromQp, Time shift) {
  const auto* other = dynamic_cast<const Dcqcn*>(&from);
  QpState& s = copyState(qps_, qp, other != nullptr ? &other->qps_ : nullptr, fromQp, "Dcqcn");
  s.alphaAnchor = shifted(s.alphaAnchor, shift);
  s.nextIncrease = shifted(s.nextIncrease, shift);
}

double Dcqcn::alpha(uint32_t qp, Time now) const {
  const QpState& s = qps_[qp];
  if (!s.cnpSeen || now <= s.alphaAnchor) return s.alphaBase;
  const int64_t k = (now - s.alphaAnchor).picos() / spec_.alphaTimer.picos();
  return k == 0 ? s.alphaBase : s.alphaBase * std::pow(oneMinusG_, static_cast<double>(k));
}

void Dcqcn::setRate(QpState& s) {
  if (s.line - s.rc < 1.0) {  // back at line rate: stop pacing (Rc <= Rt <= line, so Rt is too)
    s.rc = s.rt = s.line;
    s.paced = false;
  }
  s.rateBps = std::max<int64_t>(1, std::llround(s.rc));
}

void Dcqcn::increase(QpState& s) {
  const int f = spec_.fastRecoveryStages;
  const bool bytesOn = spec_.byteCounter > 0;
  const int32_t hi = bytesOn ? std::max(s.timerStages, s.byteStages) : s.timerStages;
  const int32_t lo = bytesOn ? std::min(s.timerStages, s.byteStages) : s.timerStages;
  if (hi < f) {
    // fast recovery: Rt unchanged
  } else if (lo > f) {
    s.rt += static_cast<double>(lo - f) * static_cast<double>(spec_.hyperIncrease.bitsPerSecond());
  } else {
    s.rt += static_cast<double>(spec_.additiveIncrease.bitsPerSecond());
  }
  s.rt = std::min(s.rt, s.line);
  s.rc = std::min((s.rt + s.rc) / 2, s.line);
  setRate(s);
}

void Dcqcn::advance(QpState& s, Time now) {
  while (s.paced && s.nextIncrease <= now) {
    increase(s);
    ++s.timerStages;
    s.timerIncreaseSinceDecrease = true;
    s.nextIncrease += spec_.rateIncreaseTimer;
  }
}

void Dcqcn::onSent(uint32_t qp, Time now, uint32_t wireBytes) {
  SIM_DCHECK(qp < qps_.size(), "Dcqcn::onSent: unknown QP");
  QpState& s = qps_[qp];
  if (!s.paced || spec_.byteCounter == 0) return;
  if (s.nextIncrease <= now) advance(s, now);
  s.bytes += wireBytes;
  while (s.paced && s.bytes >= spec_.byteCounter) {
    s.bytes -= spec_.byteCounter;
    increase(s);
    ++s.byteStages;
  }
}

void Dcqcn::onNotification(uint32_t qp, Time now) {
  SIM_DCHECK(qp < qps_.size(), "Dcqcn::onNotification: unknown QP");
  QpState& s = qps_[qp];
  if (s.paced) {
    advance(s, now);
  } else if (s.cnpSeen && s.nextIncrease <= now) {
    // Back at line rate, the rate-increase timer would have kept firing (without effect).
    s.timerIncreaseSinceDecrease = true;
  }
  const double a = alpha(qp, now);
  if (!s.cnpSeen && spec_.rateOnFirstCnp.bitsPerSecond() > 0) {
    s.rc = s.rt = std::min(static_cast<double>(spec_.rateOnFirstCnp.bitsPerSecond()), s.line);
  } else {
    if (spec_.clampTargetRate || (spec_.clampTargetRateAfterTimeIncrease && s.timerIncreaseSinceDecrease))
      s.rt = s.rc;
    s.rc = dcqcnCutRate(spec_, s.rc, a, s.line);
  }
  s.timerStages = 0;
  s.byteStages = 0;
  s.bytes = 0;
  s.timerIncreaseSinceDecrease = false;
  s.nextIncrease = now + spec_.rateIncreaseTimer;
  s.paced = true;
  setRate(s);
  s.alphaBase = oneMinusG_ * a + spec_.g;
  s.alphaAnchor = now;
  s.cnpSeen = true;
}

Time Dcqcn::nextTimer(uint32_t qp, Time now) {
  SIM_DCHECK(qp < qps_.size(), "Dcqcn::nextTimer: unknown QP");
  QpState& s = qps_[qp];
  if (s.paced && s.nextIncrease <= now) advance(s, now);
  return s.paced ? s.nextIncrease : Time::max();
}

}  // namespace fabricsim
