// TransferTable: the backends' bookkeeping of transfers: a record and the observer to tell for
// each transfer in flight, in a slot that is freed for reuse when the transfer is delivered, and
// the statistics of the delivered ones (TransferStats). Its memory grows with the transfers in
// flight at once, not with the transfers made.
//
// Models: open() takes a free slot (the most recently freed, so runs are deterministic) or a new
// one; deliver() feeds the statistics and frees the slot; fail() marks a transfer whose
// connection gave up: it is counted, and its slot stays taken (its messages may still name it;
// a failure ends the run). With keepAll(true), set before the first transfer, no slot is ever
// freed: slot i is the i-th transfer requested and records() lists every transfer (tests, or
// a per-transfer dump); it is off by default.
// Leaves out: anything backend-specific (paths, queue pairs): the backends keep that.
// Units: Time (ps), Bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/fabric/FlowRecord.h"
#include "sim/fabric/TransferStats.h"

namespace fabricsim {

class TransferObserver;

class TransferTable {
 public:
  /// Whom to tell when a transfer is delivered.
  struct Waiter {
    uint64_t tag = 0;
    TransferObserver* observer = nullptr;
  };

  /// Keep every record (slot i = the i-th transfer) instead of freeing slots at delivery. Only
  /// before the first transfer.
  void keepAll(bool keep);
  bool keepsAll() const { return keepAll_; }

  /// A new transfer: returns its slot, valid until deliver() (for good with keepAll).
  uint32_t open(const FlowRecord& record, uint64_t tag, TransferObserver* observer);
  FlowRecord& record(uint32_t slot) { return records_[slot]; }
  const FlowRecord& record(uint32_t slot) const { return records_[slot]; }
  /// Transfer `slot` was delivered at `when`: counted in the statistics and its slot freed
  /// (kept with keepAll). Returns whom to tell.
  Waiter deliver(uint32_t slot, Time when);
  /// Transfer `slot`'s connection failed: it will never be delivered (its slot stays taken).
  void fail(uint32_t slot);
  /// True while transfer `slot` is in flight (opened, neither delivered nor failed).
  bool isOpen(uint32_t slot) const { return slot < state_.size() && state_[slot] == kOpen; }
  /// Calls f(slot, record) for every transfer neither delivered nor failed, by slot.
  template <typename F>
  void forEachOpen(F&& f) {
    for (uint32_t s = 0; s < records_.size(); ++s)
      if (state_[s] == kOpen) f(s, records_[s]);
  }

  /// Every transfer in request order; only with keepAll (a SimError otherwise, rather than a
  /// silently empty list).
  const std::vector<FlowRecord>& records() const;
  const TransferStats& stats() const { return stats_; }
  uint64_t started() const { return started_; }
  uint64_t delivered() const { return delivered_; }
  uint64_t failed() const { return failed_; }
  /// Transfers in flight now (opened, neither delivered nor failed), and at most at once.
  uint64_t inFlight() const { return started_ - delivered_ - failed_; }
  uint64_t peakInFlight() const { return peakInFlight_; }
  /// The most slots ever taken at once (without keepAll: the peak of transfers in flight, and
  /// failed ones).
  size_t slots() const { return records_.size(); }
  /// Bytes held: slots (record, waiter, state), free list and statistics.
  size_t memoryBytes() const;

 private:
  enum : uint8_t { kFree = 0, kOpen = 1, kDone = 2, kFailed = 3 };
  bool keepAll_ = false;
  std::vector<FlowRecord> records_;  ///< per slot
  std::vector<Waiter> waiters_;      ///< per slot
  std::vector<uint8_t> state_;       ///< per slot
  std::vector<uint32_t> free_;
  TransferStats stats_;
  uint64_t started_ = 0, delivered_ = 0, failed_ = 0, peakInFlight_ = 0;
};

}  // namespace fabricsim
