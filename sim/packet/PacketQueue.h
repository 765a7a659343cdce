// PacketQueue: a FIFO of packets linked through Packet::next (no allocation per packet).
//
// Models: one egress queue (or the in-flight list of a link). Keeps its length in bytes
// (wireBytes) and packets.
// Units: bytes.
#pragma once

#include <cstdint>

#include "sim/packet/PacketPool.h"

namespace fabricsim {

class PacketQueue {
 public:
  bool empty() const { return head_ == kNoPacket; }
  uint32_t head() const { return head_; }
  uint64_t bytes() const { return bytes_; }
  uint32_t packets() const { return count_; }

  void push(PacketPool& pool, uint32_t id) {
    Packet& p = pool.get(id);
    p.next = kNoPacket;
    if (tail_ == kNoPacket) head_ = id;
    else pool.get(tail_).next = id;
    tail_ = id;
    bytes_ += p.wireBytes;
    ++count_;
  }
  uint32_t pop(PacketPool& pool) {
    const uint32_t id = head_;
    Packet& p = pool.get(id);
    head_ = p.next;
    if (head_ == kNoPacket) tail_ = kNoPacket;
    bytes_ -= p.wireBytes;
    --count_;
    return id;
  }

 private:
  uint32_t head_ = kNoPacket;
  uint32_t tail_ = kNoPacket;
  uint64_t bytes_ = 0;
  uint32_t count_ = 0;
};

}  // namespace fabricsim
