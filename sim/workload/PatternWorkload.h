// PatternWorkload: synthetic traffic patterns (`kind: pattern`): permutation, incast and
// all-to-all among a range of GPUs.
//
// Models: permutation: every GPU sends to one other GPU and receives from one, drawn as a
// seeded random derangement (no GPU sends to itself); incast: N senders to one receiver;
// all-to-all: every GPU sends to every other GPU at once. Each sender-receiver pair sends its
// message `repetitions` times, closed loop (the next after the previous is delivered, plus the
// gap), spreading repetitions over `qps_per_pair` queue pairs. All first messages start at
// `start`.
// Leaves out: open-loop arrivals (Poisson) and flow-size distributions (a later addition).
// Units: bytes, Time (ps).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/workload/Workload.h"

namespace fabricsim {

class PatternWorkload final : public Workload, public TransferObserver, public EventHandler {
 public:
  /// `totalGpus` is the number of GPUs in the topology; throws InputError if the spec's GPU
  /// range or incast receiver does not fit.
  PatternWorkload(Simulator& sim, Fabric& fabric, const WorkloadSpec& spec, size_t totalGpus);

  const std::string& name() const override { return name_; }
  void start(Time origin = Time::zero()) override;
  bool finished() const override { return outstanding_ == 0 && started_; }
  Time startTime() const override { return origin_ + spec_.start; }
  Time finishTime() const override { return finish_; }
  Bytes bytesRequested() const override { return requested_; }
  Bytes bytesDelivered() const override { return delivered_; }

  void onTransferDelivered(uint64_t tag, Time when) override;
  void onEvent(uint32_t tag) override;

  /// The (sender, receiver) pairs, in issue order.
  const std::vector<std::pair<uint32_t, uint32_t>>& pairs() const { return pairs_; }

 private:
  void post(uint32_t pair);

  Simulator& sim_;
  Fabric& fabric_;
  PatternSpec spec_;
  std::string name_;
  std::vector<std::pair<uint32_t, uint32_t>> pairs_;
  std::vector<int> sent_;  // repetitions posted per pair
  uint64_t outstanding_ = 0;
  bool started_ = false;
  Time finish_;
  Time origin_;
  Bytes requested_ = 0;
  Bytes delivered_ = 0;
};

}  // namespace fabricsim
