// PacketPool: storage for every packet in flight, handed out as 32-bit indices.
//
// Models: nothing physical; it is the allocator of the packet backend. Packets live in
// fixed-size chunks, so references stay valid while the pool grows, and freed slots are reused
// (LIFO, which keeps recently used memory warm in cache). One owner per packet at a time.
// Leaves out: thread safety (a run is single-threaded).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/Error.h"
#include "sim/packet/Packet.h"

namespace fabricsim {

class PacketPool {
 public:
  static constexpr uint32_t kChunkBits = 12;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;

  /// A fresh (default-initialised) packet; returns its index.
  uint32_t allocate() {
    uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      if ((capacity_ & (kChunkSize - 1)) == 0) chunks_.emplace_back(new Packet[kChunkSize]);
      id = capacity_++;
    }
    ++live_;
    if (live_ > peak_) peak_ = live_;
    Packet& p = get(id);
    p = Packet{};
    return id;
  }
  void release(uint32_t id) {
    SIM_DCHECK(id < capacity_, "release of a foreign packet");
    free_.push_back(id);
    --live_;
  }
  Packet& get(uint32_t id) { return chunks_[id >> kChunkBits][id & (kChunkSize - 1)]; }
  const Packet& get(uint32_t id) const { return chunks_[id >> kChunkBits][id & (kChunkSize - 1)]; }

  /// Gives every chunk back when no packet is live (after a run; allocate() starts again).
  void releaseIfEmpty() {
    if (live_ != 0) return;
    chunks_.clear();
    chunks_.shrink_to_fit();
    free_.clear();
    free_.shrink_to_fit();
    capacity_ = 0;
  }
  uint64_t live() const { return live_; }
  uint64_t peak() const { return peak_; }
  uint64_t capacity() const { return capacity_; }

 private:
  std::vector<std::unique_ptr<Packet[]>> chunks_;
  std::vector<uint32_t> free_;
  uint32_t capacity_ = 0;
  uint64_t live_ = 0;
  uint64_t peak_ = 0;
};

}  // namespace fabricsim
