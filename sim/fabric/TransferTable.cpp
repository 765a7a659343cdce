#include "sim/fabric/TransferTable.h"

#include <algorithm>

#include "sim/core/Error.h"

namespace fabricsim {

void TransferTable::keepAll(bool keep) {
  SIM_CHECK(started_ == 0, "TransferTable::keepAll must be set before the first transfer");
  keepAll_ = keep;
}

uint32_t TransferTable::open(const FlowRecord& record, uint64_t tag, TransferObserver* observer) {
  const auto id = static_cast<uint32_t>(started_++);
  peakInFlight_ = std::max(peakInFlight_, inFlight());
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    records_[slot] = record;
    records_[slot].id = id;
    waiters_[slot] = Waiter{tag, observer};
    state_[slot] = kOpen;
  } else {
    slot = static_cast<uint32_t>(records_.size());
    records_.push_back(record);
    records_.back().id = id;
    waiters_.push_back(Waiter{tag, observer});
    state_.push_back(kOpen);
  }
  return slot;
}

TransferTable::Waiter TransferTable::deliver(uint32_t slot, Time when) {
  SIM_CHECK(slot < state_.size() && state_[slot] == kOpen,
            "TransferTable: delivery of a transfer not in flight");
  FlowRecord& r = records_[slot];
  r.finish = when;
  stats_.add(r.intraHost, r.fct(), r.ideal);
  ++delivered_;
  const Waiter w = waiters_[slot];
  if (keepAll_) {
    state_[slot] = kDone;
  } else {
    state_[slot] = kFree;
    waiters_[slot] = Waiter{};
    free_.push_back(slot);
  }
  return w;
}

void TransferTable::fail(uint32_t slot) {
  SIM_CHECK(slot < state_.size() && state_[slot] == kOpen, "TransferTable: failing a transfer not in flight");
  records_[slot].failed = true;
  state_[slot] = kFailed;
  ++failed_;
}

const std::vector<FlowRecord>& TransferTable::records() const {
  SIM_CHECK(keepAll_, "per-transfer records are kept only with keepAll(true) (Fabric::keepFlowRecords)");
  return records_;
}

size_t TransferTable::memoryBytes() const {
  return records_.capacity() * sizeof(FlowRecord) + waiters_.capacity() * sizeof(Waiter) + state_.capacity() +
         free_.capacity() * sizeof(uint32_t) + stats_.memoryBytes();
}

}  // namespace fabricsim
