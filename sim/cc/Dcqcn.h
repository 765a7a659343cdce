// Dcqcn: the DCQCN reaction point of Zhu et al., SIGCOMM 2015 (`variant: paper`) for every
// RoCEv2 queue pair. ConnectX firmware's state machine (`variant: mlx`) is DcqcnMlx.
//
// Models, per QP: current rate Rc, target rate Rt and the congestion estimate alpha.
//  - CNP (every one; the notification point limits how often they come): Rt = Rc if
//    clampTargetRate (or clampTargetRateAfterTimeIncrease and a rate-increase timer fired since
//    the last decrease); Rc = max(Rc (1 - alpha/2), Rc (1 - maxDecreaseFraction), minRate);
//    alpha = (1-g) alpha + g; the stage counters, the byte count and both timers restart.
//    With rateOnFirstCnp > 0 the first CNP sets Rc = Rt = that rate instead of cutting.
//  - Alpha timer: each alphaTimer period without a CNP, alpha = (1-g) alpha (closed form (1-g)^k
//    from the last CNP, so it costs nothing between CNPs).
//  - Increase events: every rateIncreaseTimer period (timer stage T) and every byteCounter bytes
//    sent (byte stage BC). An event reads the stage counts completed before it (as ns-3
//    increments m_rpTimeStage after RateIncEventMlx), so F events of fast recovery follow each cut:
//      max(T, BC) < F:  fast recovery   Rc = (Rt + Rc) / 2
//      min(T, BC) > F:  hyper increase  Rt += (min(T, BC) - F) R_HAI, Rc = (Rt + Rc) / 2
//      otherwise:       additive        Rt += R_AI, Rc = (Rt + Rc) / 2
//    and then increments its own counter. Rt and Rc are capped at the line rate. With the byte
//    counter off (byteCounter = 0) the timer stage alone decides (max = min = T).
// Lazy evaluation: every call first runs the QP's timer expiries up to `now` in time order (a byte
// event at `now` comes after the expiries at or before `now`), so the result does not depend on
// how often the QP is polled. A QP that never received a CNP, or whose Rc is back at the line rate
// (within 1 bit/s), sends at line rate with no timers: rate() is then one load. A QP back at line
// rate keeps alpha's closed form running; its next CNP starts from there.
// Leaves out: rateReduceInterval (the paper's RP cuts on every CNP; the loader refuses a nonzero
// one for this variant), the notification point (CNP generation in the receiving NIC,
// cnpInterval) and the marking (switches); firmware fixed-point rounding (rates and alpha are
// doubles here).
// Units: rates in bit/s (double internally, BitRate rounded to the nearest bit/s out), Time in ps,
// bytes on the wire.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cc/CongestionControl.h"
#include "sim/core/Error.h"

namespace fabricsim {

class Dcqcn final : public CongestionControl {
 public:
  /// Checks the parameters (positive periods and min rate, byte counter >= 0, no rate-reduce
  /// interval; g and the fractions in range); a bad spec is a bug (the loader validates user
  /// input): SimError.
  explicit Dcqcn(const DcqcnSpec& spec);

  void addFlow(uint32_t qp, BitRate lineRate, Time now) override;
  BitRate rate(uint32_t qp, Time now) override {
    SIM_DCHECK(qp < qps_.size(), "Dcqcn::rate: unknown QP");
    QpState& s = qps_[qp];
    if (s.paced && s.nextIncrease <= now) advance(s, now);
    return BitRate::bps(s.rateBps);
  }
  void onSent(uint32_t qp, Time now, uint32_t wireBytes) override;
  void onNotification(uint32_t qp, Time now) override;
  Time nextTimer(uint32_t qp, Time now) override;
  void copyQueuePair(uint32_t qp, const CongestionControl& from, uint32_t fromQp, Time shift) override;
  const char* name() const override { return "dcqcn"; }

  const DcqcnSpec& spec() const { return spec_; }
  /// Inspection (tests, traces). Rates in bit/s, unrounded; as of the last call that advanced the QP.
  double currentRate(uint32_t qp) const { return qps_[qp].rc; }
  double targetRate(uint32_t qp) const { return qps_[qp].rt; }
  /// alpha at `now` (the alpha timer's decay included); initialAlpha before the first CNP.
  double alpha(uint32_t qp, Time now) const;
  /// Completed timer / byte stages since the last decrease (as of the last advancing call).
  int timerStages(uint32_t qp) const { return qps_[qp].timerStages; }
  int byteStages(uint32_t qp) const { return qps_[qp].byteStages; }

 private:
  struct QpState {
    double rc = 0;            // current rate, bit/s
    double rt = 0;            // target rate, bit/s
    double line = 0;          // line rate, bit/s
    double alphaBase = 0;     // alpha right after the last CNP (or initialAlpha)
    Time alphaAnchor;         // last CNP: the alpha timer's phase
    Time nextIncrease;        // next rate-increase timer expiry
    int64_t rateBps = 0;      // llround(rc), what rate() returns
    int64_t bytes = 0;        // bytes sent since the last byte-counter event
    int32_t timerStages = 0;  // T
    int32_t byteStages = 0;   // BC
    bool paced = false;       // Rc below line rate: the increase timer runs
    bool cnpSeen = false;
    bool timerIncreaseSinceDecrease = false;
  };

  /// Runs the rate-increase timer expiries at or before `now`, in time order.
  void advance(QpState& s, Time now);
  /// One increase event with the stage counts as they are (before the caller increments one).
  void increase(QpState& s);
  void setRate(QpState& s);

  DcqcnSpec spec_;
  double oneMinusG_;
  std::vector<QpState> qps_;
};

}  // namespace fabricsim
