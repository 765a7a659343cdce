// RetransmitSchedule: when a reliable connection's sender retransmits after losing packets,
// and when it gives up, as both backends model it.
//
// Models: RoCEv2 NICs (ConnectX adaptive retransmission) start at nic.retransmit_timeout and
// multiply the timeout by nic.rto_backoff after every consecutive expiry without progress, up
// to nic.max_rto; InfiniBand NICs wait the IBTA local ACK timeout 4.096 us x 2^N after every
// expiry (N = nic.local_ack_timeout; 0: no timer at all). The connection fails on the expiry
// after `retryLimit` retries without progress (IBV_WC_RETRY_EXC_ERR).
// Leaves out: RNR (receiver not ready) retries, which never happen with pre-posted receives.
// Units: Time (ps).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Time.h"

namespace fabricsim {

struct RetransmitSchedule {
  /// Timeout armed after k consecutive expiries without progress (k = 0: the first), for
  /// k = 0..retryLimit; empty: no retransmission timer (InfiniBand local_ack_timeout 0).
  std::vector<Time> rto;
  int retryLimit = 7;

  bool enabled() const { return !rto.empty(); }
  Time at(uint32_t expiries) const { return rto[std::min<size_t>(expiries, rto.size() - 1)]; }

  /// initial x backoff^k, rounded to the picosecond and capped at `cap`, for k = 0..retries.
  static std::vector<Time> backoff(Time initial, double factor, Time cap, int retries) {
    cap = std::max(cap, initial);
    std::vector<Time> s;
    double x = static_cast<double>(initial.picos());
    for (int k = 0; k <= retries; ++k) {
      s.push_back(x >= static_cast<double>(cap.picos()) ? cap : Time::ps(std::llround(x)));
      x *= factor;
    }
    return s;
  }
  /// The IBTA local ACK timeout for exponent n (1..31): 4.096 us x 2^n.
  static Time localAckTimeout(int n) { return Time::ns(4096) * (int64_t{1} << n); }

  /// The schedule of the topology's NICs (`infiniband`: links.technology is infiniband).
  static RetransmitSchedule of(const NicSpec& nic, bool infiniband) {
    RetransmitSchedule s;
    if (infiniband) {
      if (nic.localAckTimeout > 0) s.rto.push_back(localAckTimeout(nic.localAckTimeout));
      s.retryLimit = nic.retryCount;
    } else {
      s.rto = backoff(nic.retransmitTimeout, nic.rtoBackoff, nic.maxRto, nic.retryLimit);
      s.retryLimit = nic.retryLimit;
    }
    return s;
  }
};

}  // namespace fabricsim
