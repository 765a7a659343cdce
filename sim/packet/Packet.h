// Packet: one frame on the wire, as a flat record owned by exactly one place at a time
// (a queue, a link, or a NIC while it is being processed).
//
// Models: data packets (one MTU of payload or less, with PSN, a last-of-message flag and the
// ECN congestion-experienced / IB FECN bit), their ACK/NACK replies, congestion notifications
// (RoCEv2 CNP, InfiniBand BECN) and PFC PAUSE frames (priority in tc, quanta in psn). wireBytes
// counts every byte the frame occupies on the link (RoceFraming, IbFraming). Protocol variety
// is an enum plus fields, not a class hierarchy.
// Leaves out: the data itself; headers exist only as byte counts.
// Units: bytes, Time (ps).
#pragma once

#include <cstdint>

namespace fabricsim {

enum class PacketType : uint8_t { Data, Ack, Nack, Cnp, Becn, Pause };

inline constexpr uint32_t kNoPacket = 0xFFFFFFFFu;
inline constexpr uint8_t kControlClass = 7;  ///< traffic class of ACK/NACK (strict highest priority)
inline constexpr int kTrafficClasses = 8;
inline constexpr int kMacControlQueue = 8;  ///< PAUSE frames: above every class, never paused

struct Packet {
  uint64_t tuple = 0;  ///< five-tuple digest, for ECMP hashing
  uint32_t qp = 0;     ///< global queue-pair id
  uint32_t psn = 0;    ///< packet sequence number (data) or acknowledged PSN (ACK/NACK)
  uint32_t dstNic = 0;
  uint32_t payload = 0;    ///< payload bytes (0 for control packets)
  uint32_t wireBytes = 0;  ///< bytes occupied on the wire, all overheads included
  PacketType type = PacketType::Data;
  uint8_t tc = 0;
  uint8_t flags = 0;
  /// Hops left: each switch forwarding the packet takes one; at zero it is dropped and counted as
  /// a loop (IP's TTL; on InfiniBand it stands for the switches' packet lifetime limit), so a
  /// forwarding loop during reconvergence can never keep a packet circulating.
  uint8_t ttl = kInitialTtl;
  static constexpr uint8_t kInitialTtl = 64;
  static constexpr uint8_t kLastOfMessage = 1;
  static constexpr uint8_t kCongestionExperienced = 2;  ///< ECN CE (RoCEv2) or FECN (InfiniBand)
};

}  // namespace fabricsim
