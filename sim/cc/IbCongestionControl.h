// IbCongestionControl: the InfiniBand congestion-control reaction at the sending channel adapter
// (IBTA annex A10), per queue pair.
//
// Models: each QP holds a congestion-control-table index i in 0..cctiLimit. A BECN raises it:
// i = min(i + cctiIncrease, cctiLimit). A free-running CCTI timer lowers it by one each
// cctiTimer period while it is above zero: i = max(i - 1, 0). The table is the linear one the
// IbCcSpec describes: CCT[i] is an inter-packet delay of i / cctScale packet times, so the QP
// injects at lineRate / (1 + i / cctScale). The timer's phase is the QP's registration time
// (addFlow); decrements are evaluated lazily (k elapsed periods at once), so results do not
// depend on how often the QP is polled. At i = 0 rate() is one load.
// Leaves out: FECN marking (switches), BECN generation and becnInterval (the receiving NIC), the
// port-wide sharing of one CCTI timer among a port's QPs, arbitrary (non-linear) CC tables, and
// the Service-Level variant of the index.
// Units: BitRate in bit/s, Time in ps.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cc/CongestionControl.h"
#include "sim/core/Error.h"

namespace fabricsim {

class IbCongestionControl final : public CongestionControl {
 public:
  /// A bad spec (non-positive timer or scale, limit or increase < 0) is a bug: SimError.
  explicit IbCongestionControl(const IbCcSpec& spec);

  void addFlow(uint32_t qp, BitRate lineRate, Time now) override;
  BitRate rate(uint32_t qp, Time now) override {
    SIM_DCHECK(qp < qps_.size(), "IbCongestionControl::rate: unknown QP");
    QpState& s = qps_[qp];
    if (s.index > 0 && s.nextDecrement <= now) advance(s, now);
    return BitRate::bps(s.rateBps);
  }
  void onSent(uint32_t, Time, uint32_t) override {}
  void onNotification(uint32_t qp, Time now) override;
  Time nextTimer(uint32_t qp, Time now) override;
  void copyQueuePair(uint32_t qp, const CongestionControl& from, uint32_t fromQp, Time shift) override;
  const char* name() const override { return "ibcc"; }

  const IbCcSpec& spec() const { return spec_; }
  /// The CCT index of `qp` at `now` (advances its timer).
  int index(uint32_t qp, Time now);

 private:
  struct QpState {
    double line = 0;      // line rate, bit/s
    int64_t rateBps = 0;  // rate at the current index
    Time origin;          // CCTI timer phase: expiries at origin + k cctiTimer
    Time nextDecrement;   // next expiry while index > 0
    int32_t index = 0;
  };

  void advance(QpState& s, Time now);
  void setRate(QpState& s);

  IbCcSpec spec_;
  std::vector<QpState> qps_;
};

}  // namespace fabricsim
