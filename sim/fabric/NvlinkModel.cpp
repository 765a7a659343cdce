#include "sim/fabric/NvlinkModel.h"

#include <algorithm>

namespace fabricsim {

NvlinkModel::NvlinkModel(Simulator& sim, size_t gpus, BitRate bandwidth, Time latency,
                         std::function<void(uint32_t)> onDelivered)
    : sim_(sim), bandwidth_(bandwidth), latency_(latency), busyUntil_(gpus), onDelivered_(std::move(onDelivered)) {}

Time NvlinkModel::send(uint32_t src, int64_t bytes, uint32_t record) {
  const Time start = std::max(sim_.now(), busyUntil_[src]);
  busyUntil_[src] = start + serializationTime(bytes, bandwidth_);
  const Time done = busyUntil_[src] + latency_;
  uint32_t slot;
  if (!freeSlots_.empty()) {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
    pending_[slot] = record;
  } else {
    slot = static_cast<uint32_t>(pending_.size());
    pending_.push_back(record);
  }
  sim_.schedule(done, this, slot);
  return done;
}

void NvlinkModel::onEvent(uint32_t slot) {
  const uint32_t record = pending_[slot];
  freeSlots_.push_back(slot);
  onDelivered_(record);
}

}  // namespace fabricsim
