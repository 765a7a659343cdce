// FlowHash: hashing of the RoCEv2 five-tuple and per-switch ECMP member selection.
//
// Models: what a switch's ECMP hash engine does: hash (source IP, destination IP, protocol 17,
// UDP source port, UDP destination port 4791) with a per-switch seed, then map the hash onto
// the group's members. The UDP source port carries per-QP entropy, so two QPs between the same
// pair of NICs may take different paths. Different seeds per switch keep two tiers from making
// correlated choices (hash polarisation). Which header fields enter the hash is configurable
// (routing.hash_fields), as on switch ASICs: a field left out is hashed as zero, so without the
// UDP source port every QP between a pair of NICs has the same digest and takes one path.
// Leaves out: real CRC polynomials (the hash here is a strong 64-bit mixer, statistically
// equivalent for load-balancing). Member weights and resilient buckets live in the group's slot
// table (EcmpFib, EcmpSlots), not in the hash.
#pragma once

#include <cstdint>
#include <string_view>

namespace fabricsim {

struct FiveTuple {
  uint32_t srcIp = 0;
  uint32_t dstIp = 0;
  uint16_t srcPort = 0;
  uint16_t dstPort = 4791;  ///< RoCEv2
  uint8_t protocol = 17;    ///< UDP
};

class FlowHash {
 public:
  /// Header fields a switch may hash (bit mask; routing.hash_fields).
  enum Field : uint8_t { kSrcIp = 1, kDstIp = 2, kProtocol = 4, kSrcPort = 8, kDstPort = 16 };
  static constexpr uint8_t kAllFields = kSrcIp | kDstIp | kProtocol | kSrcPort | kDstPort;
  /// The bit of a field named as in routing.hash_fields (src_ip, dst_ip, protocol, src_port,
  /// dst_port); 0 for any other name.
  static constexpr uint8_t fieldBit(std::string_view name) {
    if (name == "src_ip") return kSrcIp;
    if (name == "dst_ip") return kDstIp;
    if (name == "protocol") return kProtocol;
    if (name == "src_port") return kSrcPort;
    if (name == "dst_port") return kDstPort;
    return 0;
  }
  static constexpr uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
  }
  /// A 64-bit digest of the tuple, computed once per QP direction. Fields outside `fields` are
  /// hashed as zero (with every field the digest is the plain five-tuple hash).
  static constexpr uint64_t tupleHash(const FiveTuple& in, uint8_t fields = kAllFields) {
    FiveTuple t = in;
    if (!(fields & kSrcIp)) t.srcIp = 0;
    if (!(fields & kDstIp)) t.dstIp = 0;
    if (!(fields & kProtocol)) t.protocol = 0;
    if (!(fields & kSrcPort)) t.srcPort = 0;
    if (!(fields & kDstPort)) t.dstPort = 0;
    uint64_t h = mix((static_cast<uint64_t>(t.srcIp) << 32) | t.dstIp);
    h = mix(h ^ ((static_cast<uint64_t>(t.srcPort) << 24) | (static_cast<uint64_t>(t.dstPort) << 8) |
                 t.protocol));
    return h;
  }
  /// Seed of switch `node` for run-level seed `seed`.
  static constexpr uint64_t switchSeed(uint64_t seed, uint32_t node) {
    return mix(seed * 0x9E3779B97F4A7C15ULL + node + 1);
  }
  /// Index in [0, n) for this tuple digest at a switch with `seed`.
  /// Two keyed rounds: with one round, two switches hash inputs that differ by a fixed XOR
  /// (seed1 ^ seed2), and a single finaliser round leaves measurable correlation between their
  /// top bits (the bits the group index comes from).
  static uint32_t select(uint64_t tuple, uint64_t seed, uint32_t n) {
    const uint64_t h = mix(mix(tuple ^ seed) + (seed | 1) * 0x9E3779B97F4A7C15ULL);
    return static_cast<uint32_t>((static_cast<unsigned __int128>(h) * n) >> 64);
  }
  /// The five-tuple digest of the RoCEv2 queue pair (srcNic -> dstNic, traffic class `tc`,
  /// index `qpIndex` between the pair); `reverse` gives the digest of its ACK direction.
  /// The UDP source port keeps 14 bits of entropy (49152..65535) derived from the QP's identity,
  /// so that both backends, whatever order they open QPs in, route a QP over the same path.
  /// `fields`: the header fields the switches hash (EcmpFib::queuePairTuple passes the configured ones).
  static constexpr uint64_t queuePairTuple(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex,
                                           bool reverse = false, uint8_t fields = kAllFields) {
    const uint64_t id =
        mix((static_cast<uint64_t>(srcNic) << 32) | dstNic) ^
        ((static_cast<uint64_t>(tc & 7) << 17) | (static_cast<uint64_t>(qpIndex) << 1) | (reverse ? 1 : 0));
    const uint16_t port = static_cast<uint16_t>(0xC000u | (mix(id) & 0x3FFFu));
    return reverse ? tupleHash(FiveTuple{nicAddress(dstNic), nicAddress(srcNic), port, 4791, 17}, fields)
                   : tupleHash(FiveTuple{nicAddress(srcNic), nicAddress(dstNic), port, 4791, 17}, fields);
  }
  /// IPv4 address of a global NIC index (10.0.0.0/8 plus the index); the value only feeds the hash.
  static constexpr uint32_t nicAddress(uint32_t nic) { return 0x0A000000u + nic; }
};

}  // namespace fabricsim
