// NicParams: settings every NIC of a run shares (transport, framing, congestion control).
// Units: bytes, Time (ps), BitRate (bit/s).
#pragma once

#include <cstdint>

#include "sim/core/Time.h"
#include "sim/fabric/LinkFraming.h"

namespace fabricsim {

class CongestionControl;

struct NicParams {
  uint32_t mtu = 4096;
  int ackEvery = 1;
  uint32_t windowPackets = 0;  ///< 0: no window
  Time rto = Time::us(1000);
  LinkFraming framing = LinkFraming::roce();
  CongestionControl* cc = nullptr;  ///< sender-side rate control; nullptr: line rate
  bool notify = false;              ///< receiver sends CNPs (RoCEv2) / BECNs (InfiniBand) on marks
  Time notifyInterval = Time::us(50);
  bool tolerant = false;            ///< receiver places out-of-order packets (no NACK on a gap)
};

}  // namespace fabricsim
