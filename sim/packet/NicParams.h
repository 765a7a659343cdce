// NicParams: settings every NIC of a run shares (transport, framing, congestion control).
//
// The retransmission timer is a schedule of RTOs indexed by the number of consecutive timeouts
// without progress: RoCEv2 NICs back off exponentially from an initial RTO up to a cap
// (ConnectX adaptive retransmission); InfiniBand NICs wait the same IBTA local ACK timeout
// 4.096 us x 2^N every time. A QP fails on the timeout after `retryLimit` retries
// (RetransmitSchedule).
// Units: bytes, Time (ps), BitRate (bit/s).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/core/Time.h"
#include "sim/fabric/LinkFraming.h"
#include "sim/fabric/RetransmitSchedule.h"

namespace fabricsim {

class CongestionControl;

struct NicParams {
  uint32_t mtu = 4096;
  int ackEvery = 1;
  uint32_t windowPackets = 0;  ///< 0: no window
  /// Retransmission timeouts and retry limit (RetransmitSchedule, shared with the flow backend).
  RetransmitSchedule retransmit{{Time::us(1000)}, 7};
  LinkFraming framing = LinkFraming::roce();
  CongestionControl* cc = nullptr;  ///< sender-side rate control; nullptr: line rate
  bool notify = false;              ///< receiver sends CNPs (RoCEv2) / BECNs (InfiniBand) on marks
  Time notifyInterval = Time::us(50);
  bool tolerant = false;  ///< receiver places out-of-order packets (no NACK on a gap)
  // PFC frames a storming NIC sends (failures: pfc-storm)
  uint8_t pfcClassMask = 0;
  int pfcQuanta = 65535;
  uint32_t pauseFrame = 84;
};

}  // namespace fabricsim
