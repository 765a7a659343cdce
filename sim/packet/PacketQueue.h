// PacketQueue: one egress FIFO of packets, with its length in bytes.
//
// Models: a switch or NIC output queue for one traffic class. Each entry keeps the packet's
// wire size beside its index so the transmitter never has to load the packet itself.
// Units: bytes (wire bytes, all framing included).
#pragma once

#include <cstdint>

#include "sim/packet/PacketRing.h"

namespace fabricsim {

class PacketQueue {
 public:
  struct Entry {
    uint32_t packet;
    uint32_t wireBytes;
    uint32_t inPort;  ///< local ingress port at this switch (for PFC and credit accounting)
  };
  bool empty() const { return ring_.empty(); }
  uint64_t bytes() const { return bytes_; }
  uint32_t packets() const { return ring_.size(); }
  const Entry& front() const { return ring_.front(); }
  void push(uint32_t packet, uint32_t wireBytes, uint32_t inPort = 0) {
    ring_.push(Entry{packet, wireBytes, inPort});
    bytes_ += wireBytes;
  }
  void releaseIfEmpty() { ring_.releaseIfEmpty(); }
  Entry pop() {
    const Entry e = ring_.pop();
    bytes_ -= e.wireBytes;
    return e;
  }

 private:
  PacketRing<Entry> ring_;
  uint64_t bytes_ = 0;
};

}  // namespace fabricsim
