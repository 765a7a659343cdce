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
  };
  bool empty() const { return ring_.empty(); }
  uint64_t bytes() const { return bytes_; }
  uint32_t packets() const { return ring_.size(); }
  void push(uint32_t packet, uint32_t wireBytes) {
    ring_.push(Entry{packet, wireBytes});
    bytes_ += wireBytes;
  }
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
