// CongestionControl: the sender-side rate controller of every queue pair in a run (the
// "reaction point"), which the NIC consults before sending each data packet.
//
// Models: a per-QP allowed sending rate that falls on congestion notifications (DCQCN CNPs on
// RoCEv2, BECNs on InfiniBand) and recovers on timers and bytes sent. Timers are evaluated
// lazily: every call first advances the QP's periodic timers to `now`, in time order, so no
// simulator events are needed; nextTimer() tells the NIC when a paced QP should look again.
// Leaves out: the notification point (CNP/BECN generation lives in the receiving NIC) and the
// marking (switches).
// Units: BitRate (bit/s), Time (ps), bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Error.h"
#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  /// Registers QP `qp` (ids are dense, 0, 1, 2, ...) whose NIC sends at `lineRate`.
  virtual void addFlow(uint32_t qp, BitRate lineRate, Time now) = 0;
  /// The rate QP `qp` may send at, at time `now` (advances its timers to now first).
  virtual BitRate rate(uint32_t qp, Time now) = 0;
  /// The NIC has just started transmitting `wireBytes` of QP `qp` at `now` (byte counter).
  virtual void onSent(uint32_t qp, Time now, uint32_t wireBytes) = 0;
  /// A congestion notification for QP `qp` arrived at its sender at `now`.
  virtual void onNotification(uint32_t qp, Time now) = 0;
  /// The next time after `now` at which rate(qp) can change by a timer alone; Time::max() if never.
  virtual Time nextTimer(uint32_t qp, Time now) = 0;
  /// The next time after `now` at which rate(qp) can change without a notification: a timer, or
  /// a decrease already latched; Time::max() if never. Between now and then rate(qp) is constant.
  virtual Time nextRateChange(uint32_t qp, Time now) { return nextTimer(qp, now); }
  /// Makes QP `qp` (registered or not) a copy of QP `fromQp` of `from`, a controller of the same
  /// algorithm and parameters, its clock moved by `shift` (from's time t is this one's t + shift):
  /// rates, timers' phases and stage counts alike. The hybrid backend carries the state a queue
  /// pair left a simulated congestion episode in to its next message (a SimError if `from` is
  /// another algorithm).
  virtual void copyQueuePair(uint32_t qp, const CongestionControl& from, uint32_t fromQp, Time shift) = 0;
  virtual const char* name() const = 0;

 protected:
  /// For copyQueuePair: to[qp] (grown as needed) made a copy of (*from)[fromQp]. `from` is null
  /// when the source is another algorithm: a SimError, as is a QP it does not have.
  template <class State>
  static State& copyState(std::vector<State>& to, uint32_t qp, const std::vector<State>* from,
                          uint32_t fromQp, const char* algorithm) {
    SIM_CHECK(from != nullptr && fromQp < from->size(),
              std::string("copyQueuePair: not a queue pair of ") + algorithm);
    if (qp >= to.size()) to.resize(static_cast<size_t>(qp) + 1);
    return to[qp] = (*from)[fromQp];
  }
  /// A timer instant moved by `shift`; Time::max() (never) stays.
  static Time shifted(Time t, Time shift) { return t == Time::max() ? t : t + shift; }
};

/// The controller for spec.algorithm ("dcqcn", by spec.dcqcn.variant, or "ibcc"); nullptr for "none".
std::unique_ptr<CongestionControl> makeCongestionControl(const CongestionControlSpec& spec);

}  // namespace fabricsim
