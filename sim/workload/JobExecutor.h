// JobExecutor: runs a JobTrace on a Fabric: every rank steps through its program's streams,
// collectives run when all members of the group have issued them, send/recv pairs when both
// sides have posted them.
//
// Models: per rank, ops of one stream run one at a time in program order, an op also waits for
// its dependencies; compute ops take their duration; a collective starts when the last member
// of its group issues it (NCCL's kernels synchronise the group through the data they exchange)
// and completes for every member at once; the i-th send from A to B matches the i-th receive at
// B from A, and the message starts when both are posted. A rank starts iteration i+1 when all
// its ops of iteration i are done. With `communication` off every collective and message takes
// zero time but keeps its synchronisation (this gives the compute-only critical path: compute
// plus pipeline bubble).
// Leaves out: GPU memory limits, kernel contention between streams (compute and communication
// kernels overlap perfectly), host-side launch overheads other than the collectives' step
// latency.
// Units: Time (ps), Bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/workload/CollectiveEngine.h"
#include "sim/workload/ExecutionObserver.h"
#include "sim/workload/JobTrace.h"
#include "sim/workload/Workload.h"

namespace fabricsim {

/// Collectives of one kind (label, op, size, group size, algorithm; the protocol follows from
/// them) and how long they took.
struct CollectiveSummary {
  std::string label;
  CollectiveOp op = CollectiveOp::AllReduce;
  Bytes bytes = 0;
  uint32_t ranks = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;  ///< what the tuner ran `algorithm` with
  uint64_t count = 0;
  Time total;  ///< sum of durations (last member's arrival to completion)
  Time min = Time::max();
  Time max;
  Time mean() const { return count ? total / static_cast<int64_t>(count) : Time::zero(); }
};

class JobExecutor final : public Workload, public CollectiveListener, public EventHandler {
 public:
  /// `gpus[r]` is the GPU of job rank r; `trace` must outlive the executor (finalized).
  /// `fabric` may be null when `communication` is false.
  JobExecutor(Simulator& sim, Fabric* fabric, std::shared_ptr<const JobTrace> trace, std::vector<uint32_t> gpus,
              int gpusPerHost, const CollectiveTuning& tuning, std::string name, Time start, bool communication);
  ~JobExecutor() override;

  const std::string& name() const override { return name_; }
  void start(Time origin = Time::zero()) override;
  bool finished() const override { return finished_; }
  Time startTime() const override { return origin_ + start_; }
  Time finishTime() const override { return finish_; }
  Bytes bytesRequested() const override { return requested_; }
  Bytes bytesDelivered() const override { return delivered_; }

  void onCollectiveDone(uint64_t id, Time when) override;
  void onEvent(uint32_t tag) override;

  void setObserver(ExecutionObserver* observer) { observer_ = observer; }
  /// Calls and messages on communicator c take no time where free[c] (a what-if: how much of the
  /// job's time that communication costs; `fabricsim explain`). Before start().
  void setFreeCommunicators(std::vector<bool> free) { free_ = std::move(free); }
  const JobTrace& trace() const { return *trace_; }
  const std::vector<uint32_t>& gpus() const { return gpus_; }
  /// When all ranks had finished iteration i (absolute times), for i in [0, iterations).
  const std::vector<Time>& iterationEnds() const { return iterationEnds_; }
  /// Busy compute time of one iteration of the busiest program.
  Time computePerIteration() const { return computePerIteration_; }
  /// Collective summaries, sorted by total time, largest first.
  std::vector<CollectiveSummary> collectiveSummaries() const;
  /// Point-to-point messages: count and total time (post of the later side to delivery).
  uint64_t messages() const { return messages_; }
  Time messageTime() const { return messageTime_; }
  const CollectiveEngine* engine() const { return engine_.get(); }

 private:
  struct RankState;
  struct SlowCompute;
  struct PendingCollective;
  struct PendingMessage;
  void issueReady(uint32_t rank);
  void startOp(uint32_t rank, uint32_t op);
  /// SM contention (a share > 0 with communication on): a compute op progresses at 1 - share
  /// of its speed while one of its rank's collectives or messages is moving data (from the
  /// launch of the collective, or the match of send and receive, to its completion: its
  /// kernel's CTAs copy on SMs), at full speed otherwise; its completion is rescheduled when
  /// that changes. share: the op's TraceOp::smShare, or JobTrace::commSmShare; with several
  /// moving, the largest (concurrent kernels are not added up: a simplification). A kernel
  /// posted and waiting for its peers is not counted.
  bool slowdownModelled() const;
  void markTransferring(uint32_t rank, uint32_t op);
  void commChanged(uint32_t rank);
  void scheduleSlow(uint32_t slot);
  void completeOp(uint32_t rank, uint32_t op);
  void drain();
  void beginIteration(uint32_t rank);
  void launchCollective(uint64_t key);
  void launchMessage(uint32_t src, uint32_t srcOp, uint32_t dst, uint32_t dstOp);

  Simulator& sim_;
  Fabric* fabric_;
  std::shared_ptr<const JobTrace> trace_;
  std::vector<uint32_t> gpus_;
  std::unique_ptr<CollectiveEngine> engine_;
  std::string name_;
  Time start_;
  Time origin_;
  bool communication_;
  ExecutionObserver* observer_ = nullptr;

  // Per program: the ops of each stream in order, and the busy compute time.
  struct ProgramInfo {
    std::vector<std::vector<uint32_t>> streamOps;
    std::vector<uint32_t> positionInStream;  // per op
    Time compute;
    std::vector<uint8_t> commStream;  // per stream: 1 when it carries communication
  };
  std::vector<ProgramInfo> programs_;
  std::vector<RankState> ranks_;
  // Collective instances waiting for members: key = (comm, group, sequence).
  std::unordered_map<uint64_t, PendingCollective> pendingCollectives_;
  std::vector<uint32_t> collectiveSeq_;  // per (rank, comm): collectives issued so far
  struct Running {
    uint64_t key;  // pending collective key, or message id
    bool message;
    Time started;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
    CollectiveProtocol protocol = CollectiveProtocol::Simple;
  };
  std::unordered_map<uint64_t, Running> running_;
  std::vector<bool> free_;  // per communicator: its communication takes no time
  bool isFree(uint16_t comm) const { return comm < free_.size() && free_[comm]; }
  uint64_t nextRunId_ = 1;
  // Point-to-point: unmatched sends and receives per ordered (src, dst) rank pair.
  std::unordered_map<uint64_t, PendingMessage> pendingMessages_;
  std::unordered_map<uint64_t, std::pair<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>>> messageOps_;
  std::map<std::tuple<std::string, int, Bytes, uint32_t, int>, CollectiveSummary> summaries_;
  // Completions to process (avoids recursion when ops complete at once).
  std::vector<std::pair<uint32_t, uint32_t>> completions_;
  bool draining_ = false;
  // Compute ops in flight, indexed by the event tag.
  std::vector<std::pair<uint32_t, uint32_t>> computeSlots_;
  std::vector<SlowCompute> slow_;  // per compute slot, with commSmShare
  bool anyShare_ = false;          // the trace's or an op's share is positive
  std::vector<uint32_t> freeComputeSlots_;

  std::vector<Time> iterationEnds_;
  std::vector<uint32_t> ranksDoneIteration_;
  uint32_t ranksFinished_ = 0;
  Time computePerIteration_;
  uint64_t messages_ = 0;
  Time messageTime_;
  Time finish_;
  bool finished_ = false;
  bool started_ = false;
  Bytes requested_ = 0;
  Bytes delivered_ = 0;
};

}  // namespace fabricsim
