// LinkFraming: the framing of the fabric's link technology (RoCEv2 over Ethernet or
// InfiniBand), chosen once per run so NICs need no branch on technology per packet beyond
// this small table.
// Units: bytes.
#pragma once

#include <cstdint>

#include "sim/fabric/IbFraming.h"
#include "sim/fabric/RoceFraming.h"

namespace fabricsim {

struct LinkFraming {
  bool infiniband = false;
  uint32_t dataOverhead = 82;  ///< wire bytes around the payload (before padding)
  uint32_t ack = 86;
  uint32_t notification = 98;  ///< CNP (RoCEv2) or BECN (InfiniBand)

  static LinkFraming roce() { return LinkFraming{false, 82, RoceFraming::ackWireBytes(), RoceFraming::cnpWireBytes()}; }
  static LinkFraming ib() {
    return LinkFraming{true, IbFraming::dataWireBytes(0), IbFraming::ackWireBytes(), IbFraming::becnWireBytes()};
  }
  uint32_t dataWireBytes(uint32_t payload) const {
    return infiniband ? IbFraming::dataWireBytes(payload) : RoceFraming::dataWireBytes(payload);
  }
};

}  // namespace fabricsim
