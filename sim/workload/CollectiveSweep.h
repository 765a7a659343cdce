// CollectiveSweep: the nccl-tests emulation (`kind: collective`): one collective run over a
// range of sizes on a set of GPUs, timed the way nccl-tests times it.
//
// Models: for each size from min to max (times `factor`, or plus `step`), `warmup` untimed
// calls followed by `iterations` timed calls issued back to back (each starts when the
// previous one has completed, as on one CUDA stream); the reported time is the mean of the
// timed calls. Sizes are rounded as nccl-tests rounds them: to whole elements, and for
// all_gather, reduce_scatter and alltoall to a per-rank count that is a multiple of 16 bytes.
// algbw = size / time, busbw = algbw x the op's factor (CollectiveEngine::busBandwidthFactor),
// in GB/s (1e9 bytes per second) as nccl-tests prints them.
// Leaves out: in-place vs out-of-place differences (the simulator moves the same bytes, so
// both columns are equal) and data checking (#wrong is always 0).
// Units: bytes, Time (ps); the table in us and GB/s.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/workload/CollectiveEngine.h"
#include "sim/workload/Workload.h"

namespace fabricsim {

struct CollectiveSweepRow {
  Bytes size = 0;        ///< bytes as nccl-tests prints them
  uint64_t count = 0;    ///< elements as nccl-tests prints them
  Time time;             ///< mean of the timed iterations
  double algbwGBps = 0;
  double busbwGBps = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;  ///< what the tuner ran `algorithm` with
  /// NCCL's own cost-model estimate (us) for the same call, algorithm and protocol (its
  /// ncclTopoGetAlgoTime); none for all-to-all, send/recv and hierarchical.
  std::optional<double> ncclModelUs;
};

class CollectiveSweep final : public Workload, public CollectiveListener, public EventHandler {
 public:
  /// `gpus` are the participating GPUs in rank order.
  CollectiveSweep(Simulator& sim, Fabric& fabric, const WorkloadSpec& spec, std::vector<uint32_t> gpus,
                  int gpusPerHost);

  const std::string& name() const override { return name_; }
  void start(Time origin = Time::zero()) override;
  bool finished() const override { return finished_; }
  Time startTime() const override { return origin_ + spec_.start; }
  Time finishTime() const override { return finish_; }
  Bytes bytesRequested() const override { return requested_; }
  Bytes bytesDelivered() const override { return delivered_; }

  void onCollectiveDone(uint64_t id, Time when) override;
  void onEvent(uint32_t tag) override;

  const std::vector<CollectiveSweepRow>& rows() const { return rows_; }
  const CollectiveSweepSpec& sweep() const { return spec_.collective; }
  size_t ranks() const { return gpus_.size(); }
  /// Mean busbw over the rows, as nccl-tests' "Avg bus bandwidth" line.
  double averageBusBandwidth() const;
  /// Prints the table in nccl-tests' layout.
  void printTable(std::FILE* out) const;
  /// Sizes (rounded, nccl-tests convention) and counts the sweep will run; exposed for tests.
  static std::vector<std::pair<Bytes, uint64_t>> sizes(const CollectiveSweepSpec& spec, size_t ranks);

 private:
  void issue();

  Simulator& sim_;
  WorkloadSpec spec_;
  std::string name_;
  std::vector<uint32_t> gpus_;
  CollectiveEngine engine_;
  std::vector<std::pair<Bytes, uint64_t>> sizes_;
  std::vector<CollectiveSweepRow> rows_;
  size_t sizeIndex_ = 0;
  int call_ = 0;  // calls done for the current size (warm-up included)
  Time timedStart_;
  Time origin_;
  Time finish_;
  bool finished_ = false;
  Bytes requested_ = 0;
  Bytes delivered_ = 0;
};

}  // namespace fabricsim
