// NvlinkModel: GPU-to-GPU transfers inside a host (NVLink / NVSwitch) as a fluid model.
//
// Models: each GPU's NVLink egress serves its transfers one after another (FIFO) at the
// per-GPU NVLink bandwidth; a transfer is delivered its bytes' time after it starts being
// served, plus the NVLink latency. NVLink packets would swamp the event queue for no insight
// (DESIGN.md section 4), so there are none.
// Leaves out: ingress contention at the receiving GPU, NVSwitch internal limits, SHARP.
// Units: BitRate (bit/s) per GPU and direction, Time (ps).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/Simulator.h"
#include "sim/core/Units.h"

namespace fabricsim {

class NvlinkModel final : public EventHandler {
 public:
  /// `onDelivered(record)` is called at each transfer's delivery time.
  NvlinkModel(Simulator& sim, size_t gpus, BitRate bandwidth, Time latency,
              std::function<void(uint32_t record)> onDelivered);

  /// Starts a transfer of `bytes` from GPU `src` now; returns its delivery time.
  Time send(uint32_t src, int64_t bytes, uint32_t record);
  /// Time the transfer would take alone.
  Time idealTime(int64_t bytes) const { return serializationTime(bytes, bandwidth_) + latency_; }

  void onEvent(uint32_t tag) override;
  /// Bytes held: per-GPU state and the slots of transfers in flight (reused once delivered).
  size_t memoryBytes() const {
    return busyUntil_.capacity() * sizeof(Time) +
           (pending_.capacity() + freeSlots_.capacity()) * sizeof(uint32_t);
  }

 private:
  Simulator& sim_;
  BitRate bandwidth_;
  Time latency_;
  std::vector<Time> busyUntil_;
  std::vector<uint32_t> pending_;  // record per slot
  std::vector<uint32_t> freeSlots_;
  std::function<void(uint32_t)> onDelivered_;
};

}  // namespace fabricsim
