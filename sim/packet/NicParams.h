// NicParams: settings every NIC of a run shares (transport, framing, congestion control).
//
// The retransmission timer is a schedule of RTOs indexed by the number of consecutive timeouts
// without progress: RoCEv2 NICs back off exponentially from an initial RTO up to a cap
// (ConnectX adaptive retransmission); InfiniBand NICs wait the same IBTA local ACK timeout
// 4.096 us x 2^N every time. A QP fails on the timeout after `retryLimit` retries.
// Units: bytes, Time (ps), BitRate (bit/s).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/core/Time.h"
#include "sim/fabric/LinkFraming.h"

namespace fabricsim {

class CongestionControl;

struct NicParams {
  uint32_t mtu = 4096;
  int ackEvery = 1;
  uint32_t windowPackets = 0;  ///< 0: no window
  /// RTO after k consecutive timeouts without progress (k = 0: the first), k = 0..retryLimit;
  /// empty: no retransmission timer (InfiniBand local_ack_timeout 0, "infinite").
  std::vector<Time> rtoSchedule{Time::us(1000)};
  int retryLimit = 7;  ///< retransmissions after timeouts without progress; one more timeout fails the QP
  LinkFraming framing = LinkFraming::roce();
  CongestionControl* cc = nullptr;  ///< sender-side rate control; nullptr: line rate
  bool notify = false;              ///< receiver sends CNPs (RoCEv2) / BECNs (InfiniBand) on marks
  Time notifyInterval = Time::us(50);
  bool tolerant = false;  ///< receiver places out-of-order packets (no NACK on a gap)
  // PFC frames a storming NIC sends (failures: pfc-storm)
  uint8_t pfcClassMask = 0;
  int pfcQuanta = 65535;
  uint32_t pauseFrame = 84;

  bool timerEnabled() const { return !rtoSchedule.empty(); }
  /// The RTO armed after `timeouts` consecutive timeouts without progress.
  Time rto(uint32_t timeouts) const {
    return rtoSchedule[std::min<size_t>(timeouts, rtoSchedule.size() - 1)];
  }
};

}  // namespace fabricsim
