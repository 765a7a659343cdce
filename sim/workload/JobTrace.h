// JobTrace: a job as per-rank programs of compute, collective and point-to-point operations;
// what the training generator produces, what `fabricsim trace` writes and `kind: trace` replays.
//
// Models: ranks that play the same role share one Program (for a 3D-parallel job: one program
// per pipeline stage, shared by every TP and DP rank of that stage), so the trace of a
// 100K-rank job stays a few megabytes. Communicators partition the ranks into groups (e.g.
// "tp", "pp", "dp"); a collective op names a communicator and runs on the calling rank's group;
// send/recv name a communicator and a signed offset within the group (pp, +1 = next stage).
// Within a program, each op runs on a named stream: ops of one stream run one after another in
// program order (like a CUDA stream); an op also waits for its explicit dependencies (indices of
// earlier ops of the same program). One program describes one iteration; the executor runs it
// `iterations` times, each rank starting iteration i+1 when it has finished all ops of
// iteration i.
// Leaves out: data values and memory; the cost of kernels other than those listed.
// Units: Bytes, Time (ps, exact integers so a replay reproduces a run exactly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

enum class OpType : uint8_t { Compute, Collective, Send, Recv };

struct TraceOp {
  OpType type = OpType::Compute;
  uint8_t stream = 0;            ///< index into Program::streams
  CollectiveOp collective = CollectiveOp::AllReduce;  ///< Collective only
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;  ///< Collective only; Auto = tuning's
  uint16_t comm = 0;             ///< Collective/Send/Recv: index into JobTrace::communicators
  int32_t peerOffset = 0;        ///< Send/Recv: peer = group[(myIndex + offset) mod groupSize]
  Bytes bytes = 0;               ///< Collective: nccl-tests size convention (CollectiveCall); Send/Recv: payload
  Time duration;                 ///< Compute only
  uint32_t root = 0;             ///< Broadcast: root's index in the group
  uint32_t label = 0;            ///< index into Program::labels (e.g. "fwd", "bwd", "tp", "dp-bucket")
  /// Collective/Send/Recv: the share of the GPU's compute its kernel takes while it moves data
  /// (0: moved by copy engines, or already charged to the GEMM beside it); negative: the
  /// trace's commSmShare.
  double smShare = -1.0;
  std::vector<uint32_t> deps;    ///< earlier ops of this program this one waits for
};

struct Program {
  std::vector<std::string> streams;  ///< e.g. {"compute", "pp-send", "pp-recv", "dp"}
  std::vector<std::string> labels;
  std::vector<TraceOp> ops;
  /// Label index (or index into `labels`) helpers for generators.
  uint32_t label(const std::string& text);
  uint8_t stream(const std::string& text);
};

/// A partition of the job's ranks into groups.
struct Communicator {
  std::string name;
  std::vector<std::vector<uint32_t>> groups;  ///< each: job ranks in group order
  /// Derived by JobTrace::finalize(): the group of each rank and its index in that group.
  std::vector<uint32_t> groupOfRank;
  std::vector<uint32_t> indexInGroup;
};

struct JobTrace {
  std::string name;
  uint32_t ranks = 0;
  int iterations = 1;
  std::vector<Communicator> communicators;
  std::vector<Program> programs;
  std::vector<uint32_t> programOfRank;
  /// For the report only: what generated this (e.g. the training spec), any JSON-able summary.
  std::string generator;
  /// Rank -> GPU as generated (empty: decided at run time by the placement policy).
  std::vector<uint32_t> placement;
  /// Optional: per-program (one per pipeline stage for training) analytic figures for the
  /// report: forward and backward compute time of one micro-batch and micro-batches per
  /// iteration. Zero when unknown.
  Time microbatchForward;
  Time microbatchBackward;
  int microbatches = 0;
  int pipelineStages = 1;
  int virtualStages = 1;  ///< model chunks per stage (the interleaved schedule's v)
  /// Fraction of compute throughput lost while the rank has communication in flight
  /// (GpuSpec::commSmShare) for ops without their own TraceOp::smShare; with several in flight
  /// the largest share applies. 0: compute ops keep their durations.
  double commSmShare = 0.0;
  /// The collective tuning the trace was generated with (replays use it unless their workload
  /// file gives its own `collectives:` block or calibration).
  CollectiveTuning tuning;

  /// Fills the communicators' groupOfRank/indexInGroup and checks the trace is well formed
  /// (every rank in exactly one group of each communicator, programs' deps point backwards,
  /// send/recv peers exist, streams and labels in range). Throws InputError naming `source`.
  void finalize(const std::string& source);
  /// Index of the communicator called `name`, or -1.
  int communicatorIndex(const std::string& name) const;
};

}  // namespace fabricsim
