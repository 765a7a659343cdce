// IbFraming: bytes an InfiniBand packet occupies on an IB link.
//
// Models: the local route header (LRH, 8), base transport header (BTH, 12), invariant CRC
// (ICRC, 4) and variant CRC (VCRC, 2) around the payload: 26 bytes. ACK/NACK add an AETH (4);
// a BECN notification is an ACK-sized packet. No Ethernet, IP or UDP headers, no preamble or
// inter-frame gap; the line code's overhead is already excluded from IB data rates.
// Leaves out: GRH (only on routed, inter-subnet traffic), RETH on RDMA WRITE, link-layer flow
// control packets (credits are returned as delayed updates, see EgressPort).
// Units: bytes.
#pragma once

#include <cstdint>

namespace fabricsim {

struct IbFraming {
  static constexpr uint32_t kLrh = 8;
  static constexpr uint32_t kBth = 12;
  static constexpr uint32_t kAeth = 4;
  static constexpr uint32_t kIcrc = 4;
  static constexpr uint32_t kVcrc = 2;

  static constexpr uint32_t dataWireBytes(uint32_t payload) { return kLrh + kBth + payload + kIcrc + kVcrc; }
  static constexpr uint32_t ackWireBytes() { return kLrh + kBth + kAeth + kIcrc + kVcrc; }
  static constexpr uint32_t becnWireBytes() { return ackWireBytes(); }
};

static_assert(IbFraming::dataWireBytes(4096) == 4096 + 26);

}  // namespace fabricsim
