// DcqcnMlx: the DCQCN reaction point as NVIDIA ConnectX firmware runs it (`variant: mlx`), after
// the "Mellanox" mode of the HPCC ns-3 reference (alibaba-edu/High-Precision-Congestion-Control,
// simulation/src/point-to-point/model/rdma-hw.cc, the *Mlx functions), for every RoCEv2 queue pair.
//
// Models, per QP: current rate Rc, target rate Rt, alpha, and two fixed grids anchored at the QP's
// first CNP t0 (facts from the ns-3 reference):
//  - A CNP only sets two latched bits, one for alpha and one for the rate decrease. It never
//    changes a rate by itself, and CNPs that arrive while a bit is set are absorbed by it (not
//    dropped: the bit stays set until its grid consumes it).
//  - First CNP: alpha = initialAlpha (not latched), both grids start; Rc = Rt = rateOnFirstCnp if
//    that is > 0 (ns-3 multiplies the rate by a fraction; a QP is always at line rate at its first
//    CNP, so the fraction f is the rate f x line), else Rt = Rc. The decrease bit is set.
//  - Alpha grid, t0 + k alphaTimer (k >= 1): alpha = (1-g) alpha + g if the alpha bit is set,
//    else (1-g) alpha; the bit clears. Runs for ever after t0 (closed form between CNPs: it
//    costs nothing).
//  - Decrease grid, t0 + k rateReduceInterval + 1 ns (k >= 1; the 1 ns puts it after the alpha
//    tick of the same instant): if the decrease bit is set, Rt = Rc when clampTargetRate or
//    (clampTargetRateAfterTimeIncrease and a timer stage has passed since the last cut: ns-3
//    clamps unless its time stage is 0), then Rc = max(Rc max(1 - alpha/2, 1 - maxDecreaseFraction),
//    minRate); the stage counters and the byte count reset and the rate-increase timer restarts
//    from this instant. A rate cut therefore waits for the next tick.
//  - Rate-increase timer, every rateIncreaseTimer from the last cut (none before the first cut),
//    stage T counted since that cut; each expiry is one event, classified on the stage count
//    before it: T < F fast recovery (Rc = (Rc + Rt)/2); T = F additive (Rt += R_AI, then the
//    same); T > F hyper (Rt += R_HAI, once per event, then the same); Rt is capped at the line
//    rate. Timer expiries and decrease ticks fall on one grid (both step from a cut on the
//    decrease grid, and ns-3's 300 us is a multiple of 4 us); at equal times the timer runs
//    first, as in ns-3, where it was scheduled earlier.
//  - Byte counter (not in ns-3; byteCounter = 0 turns it off, as the ns-3 reference runs): every
//    byteCounter bytes sent after the first cut and below line rate is an increase event with
//    stage BC; with both counters the paper's rule decides (max(T, BC) < F fast, min(T, BC) > F
//    hyper, else additive). A byte event comes after the timer expiries and ticks at or before
//    its instant.
// Ties: a CNP arriving exactly at a grid instant is latched after that tick (counted by the next).
// Lazy evaluation: every call first replays the QP's timer expiries and decrease ticks up to
// `now` in time order; alpha is a closed form (1-g)^k from the last CNP or cut, settled only at
// those instants, so results do not depend on how often a QP is polled. A QP back at line rate
// (within 1 bit/s; Rt is then at line too) stops its timer: ns-3's keeps firing there, but its
// events change nothing (Rc = Rt = line) and the clamp they would enable at the next cut sets
// Rt = Rc = line, which it already is.
// Leaves out: firmware fixed-point arithmetic (RPG_GD, 10-bit alpha; doubles here), the
// notification point (CNP generation in the receiving NIC, cnpInterval) and the marking.
// Units: rates in bit/s (double internally, BitRate rounded to the nearest bit/s out), Time in ps,
// bytes on the wire.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cc/CongestionControl.h"
#include "sim/core/Error.h"

namespace fabricsim {

class DcqcnMlx final : public CongestionControl {
 public:
  /// The offset of the decrease grid after the alpha grid (ns-3: 1 ns).
  static constexpr Time kDecreaseOffset = Time::ns(1);

  /// Checks the parameters (positive periods, rate-reduce interval and min rate, byte counter
  /// >= 0, g and the fractions in range); a bad spec is a bug (the loader validates user input).
  explicit DcqcnMlx(const DcqcnSpec& spec);

  void addFlow(uint32_t qp, BitRate lineRate, Time now) override;
  BitRate rate(uint32_t qp, Time now) override {
    SIM_DCHECK(qp < qps_.size(), "DcqcnMlx::rate: unknown QP");
    QpState& s = qps_[qp];
    if (s.nextEvent <= now) advance(s, now);
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
  /// alpha in force at `now` (alpha ticks at or before `now` applied); initialAlpha before the
  /// first CNP. Does not advance the QP.
  double alpha(uint32_t qp, Time now) const;
  /// Timer / byte stages since the last cut (as of the last advancing call).
  int timerStages(uint32_t qp) const { return qps_[qp].timerStages; }
  int byteStages(uint32_t qp) const { return qps_[qp].byteStages; }
  /// The next timer expiry or latched cut, whichever comes first.
  Time nextRateChange(uint32_t qp, Time now) override {
    const Time timer = nextTimer(qp, now);  // applies what is due by now
    return std::min(timer, pendingCut(qp));
  }
  /// The decrease tick that will consume a latched CNP, or Time::max() when none is latched.
  Time pendingCut(uint32_t qp) const { return qps_[qp].decLatched ? qps_[qp].cutAt : Time::max(); }

 private:
  struct QpState {
    double rc = 0;            // current rate, bit/s
    double rt = 0;            // target rate, bit/s
    double line = 0;          // line rate, bit/s
    double alphaBase = 0;     // alpha right after alpha tick alphaTick
    Time anchor;              // first CNP: both grids' origin
    Time cutAt;               // the decrease tick that consumes the latched bit
    Time nextIncrease;        // next rate-increase timer expiry (Time::max() before the first cut)
    Time nextEvent;           // min(nextIncrease if running, cutAt if latched): rate()'s fast path
    int64_t alphaTick = 0;    // index of the last alpha tick folded into alphaBase (0 = t0)
    int64_t rateBps = 0;      // llround(rc), what rate() returns
    int64_t bytes = 0;        // bytes sent since the last byte-counter event
    int32_t timerStages = 0;  // T
    int32_t byteStages = 0;   // BC
    bool cnpSeen = false;
    bool alphaLatched = false;  // a CNP since alpha tick alphaTick
    bool decLatched = false;    // a CNP since the last decrease tick
    bool timerRunning = false;  // the increase timer fires (false before the first cut, and at line rate)
  };

  /// Alpha in force at `t` (>= the last settle point), the latched bit applied at its tick.
  double alphaAt(const QpState& s, Time t) const;
  /// Folds the alpha ticks at or before `t` into alphaBase.
  void settleAlpha(QpState& s, Time t);
  /// Replays timer expiries and decrease ticks at or before `now`, in time order.
  void advance(QpState& s, Time now);
  /// One increase event with the stage counts as they are (before the caller increments one).
  void increase(QpState& s);
  void cut(QpState& s, Time at);
  void setRate(QpState& s);
  void updateNextEvent(QpState& s);

  DcqcnSpec spec_;
  double oneMinusG_;
  std::vector<QpState> qps_;
};

}  // namespace fabricsim
