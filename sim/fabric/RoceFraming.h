// RoceFraming: bytes a RoCEv2 frame occupies on an Ethernet link.
//
// Models: per-packet overhead of RoCEv2 over IPv4: preamble + start-of-frame delimiter (8),
// Ethernet header (14), IPv4 (20), UDP (8), InfiniBand BTH (12), ICRC (4), Ethernet FCS (4) and
// the minimum inter-frame gap (12): 82 bytes around the payload. ACK/NACK frames add an AETH
// (4) and carry no payload: 86 bytes. Frames shorter than Ethernet's 64-byte minimum (header
// to FCS) are padded.
// Leaves out: VLAN tags (4 bytes when PFC priorities are carried in 802.1Q), RETH/ImmDt on the
// first/last packet of RDMA WRITE messages (treated as SEND), IPv6.
// Units: bytes.
#pragma once

#include <algorithm>
#include <cstdint>

namespace fabricsim {

struct RoceFraming {
  static constexpr uint32_t kPreambleSfd = 8;
  static constexpr uint32_t kEthernetHeader = 14;
  static constexpr uint32_t kIpv4 = 20;
  static constexpr uint32_t kUdp = 8;
  static constexpr uint32_t kBth = 12;
  static constexpr uint32_t kAeth = 4;
  static constexpr uint32_t kIcrc = 4;
  static constexpr uint32_t kFcs = 4;
  static constexpr uint32_t kInterFrameGap = 12;
  static constexpr uint32_t kMinFrame = 64;  // Ethernet header .. FCS

  static constexpr uint32_t frameOnWire(uint32_t frame) {
    return std::max(frame, kMinFrame) + kPreambleSfd + kInterFrameGap;
  }
  /// Wire bytes of a data packet carrying `payload` bytes.
  static constexpr uint32_t dataWireBytes(uint32_t payload) {
    return frameOnWire(kEthernetHeader + kIpv4 + kUdp + kBth + payload + kIcrc + kFcs);
  }
  /// Wire bytes of an ACK or NACK.
  static constexpr uint32_t ackWireBytes() {
    return frameOnWire(kEthernetHeader + kIpv4 + kUdp + kBth + kAeth + kIcrc + kFcs);
  }
  /// Wire bytes of a CNP (BTH + 16 reserved bytes, RoCEv2 annex A17).
  static constexpr uint32_t cnpWireBytes() {
    return frameOnWire(kEthernetHeader + kIpv4 + kUdp + kBth + 16 + kIcrc + kFcs);
  }
  /// Wire bytes of an 802.1Qbb PFC frame (a minimum-size MAC control frame).
  static constexpr uint32_t pauseWireBytes() { return frameOnWire(kMinFrame); }
};

static_assert(RoceFraming::dataWireBytes(4096) == 4096 + 82);
static_assert(RoceFraming::ackWireBytes() == 86);
static_assert(RoceFraming::cnpWireBytes() == 98);
static_assert(RoceFraming::pauseWireBytes() == 84);

}  // namespace fabricsim
