#include "sim/cc/IbCongestionControl.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

IbCongestionControl::IbCongestionControl(const IbCcSpec& spec) : spec_(spec) {
  SIM_CHECK(spec.cctiTimer > Time::zero(), "IB CC: ccti timer must be positive");
  SIM_CHECK(spec.cctScale > 0, "IB CC: cct scale must be positive");
  SIM_CHECK(spec.cctiLimit >= 0 && spec.cctiIncrease >= 0, "IB CC: ccti limit and increase must be >= 0");
}

void IbCongestionControl::addFlow(uint32_t qp, BitRate lineRate, Time now) {
  SIM_CHECK(lineRate.bitsPerSecond() > 0, "IbCongestionControl::addFlow: line rate must be positive");
  if (qp >= qps_.size()) qps_.resize(static_cast<size_t>(qp) + 1);
  QpState& s = qps_[qp];
  s = QpState{};
  s.line = static_cast<double>(lineRate.bitsPerSecond());
  s.rateBps = lineRate.bitsPerSecond();
  s.origin = now;
  s.nextDecrement = Time::max();
}

void IbCongestionControl::copyQueuePair(uint32_t qp, const CongestionControl& from, uint32_t fromQp,
                                        Time shift) {
  const auto* other = dynamic_cast<const IbCongestionControl*>(&from);
  QpState& s = copyState(qps_, qp, other != nullptr ? &other->qps_ : nullptr, fromQp, "IbCongestionControl");
  s.origin = shifted(s.origin, shift);
  s.nextDecrement = shifted(s.nextDecrement, shift);
}

void IbCongestionControl::setRate(QpState& s) {
  s.rateBps = s.index == 0 ? static_cast<int64_t>(s.line)
                           : std::max<int64_t>(1, std::llround(s.line / (1.0 + s.index / spec_.cctScale)));
}

void IbCongestionControl::advance(QpState& s, Time now) {
  if (s.index == 0 || s.nextDecrement > now) return;
  const int64_t k = (now - s.nextDecrement).picos() / spec_.cctiTimer.picos() + 1;
  s.index = static_cast<int32_t>(std::max<int64_t>(0, s.index - k));
  s.nextDecrement += spec_.cctiTimer * k;
  setRate(s);
}

void IbCongestionControl::onNotification(uint32_t qp, Time now) {
  SIM_DCHECK(qp < qps_.size(), "IbCongestionControl::onNotification: unknown QP");
  QpState& s = qps_[qp];
  advance(s, now);
  if (s.index == 0) {
    // The free-running timer's next expiry after now.
    const int64_t periods = (now - s.origin).picos() / spec_.cctiTimer.picos() + 1;
    s.nextDecrement = s.origin + spec_.cctiTimer * periods;
  }
  s.index = std::min(s.index + spec_.cctiIncrease, spec_.cctiLimit);
  setRate(s);
}

Time IbCongestionControl::nextTimer(uint32_t qp, Time now) {
  SIM_DCHECK(qp < qps_.size(), "IbCongestionControl::nextTimer: unknown QP");
  QpState& s = qps_[qp];
  advance(s, now);
  return s.index > 0 ? s.nextDecrement : Time::max();
}

int IbCongestionControl::index(uint32_t qp, Time now) {
  QpState& s = qps_[qp];
  advance(s, now);
  return s.index;
}

}  // namespace fabricsim
