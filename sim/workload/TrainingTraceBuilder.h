// TrainingTraceBuilder: expands a `kind: training` spec (a Megatron-style transformer trained
// with tensor, pipeline and data parallelism) into a JobTrace of one program per pipeline stage
// (see docs/training-model.md for every formula).
//
// Models: Megatron's rank order (rank = tp_idx + tp*(dp_idx + dp*pp_idx)) and communicators
// "tp", "dp", "pp"; the 1F1B (PipeDream-Flush) schedule, or Megatron's interleaved schedule
// with virtual stages; per layer and pass the TP collectives that block compute (all-reduce,
// or reduce-scatter + all-gather with sequence parallelism); pipeline send/recv on one stream
// per direction; DP gradient buckets in the order their gradients become final, overlapped
// with the rest of the backward; the optimizer step; the distributed optimizer's parameter
// all-gather; full activation recomputation.
// Streams of every program: "compute", "pp-recv-fwd", "pp-send-fwd", "pp-recv-bwd",
// "pp-send-bwd", "dp".
// Leaves out: placement (decided at run time), overlap of TP communication with compute,
// the embedding-gradient all-reduce between first and last stage (the output layer is untied),
// data loading, gradient clipping, the loss all-reduces of the vocab-parallel cross-entropy.
// Units: Bytes, Time (ps).
#pragma once

#include <string>

#include "sim/config/WorkloadSpec.h"
#include "sim/workload/JobTrace.h"

namespace fabricsim {

/// Builds and finalizes the trace of one training job called `name` (also the source named by
/// InputError). Throws InputError for a spec that cannot be expanded (micro-batches that do
/// not divide, layers not divisible by the stages, tp not dividing heads, an interleaved
/// schedule with pp <= 2 or micro-batches not a multiple of pp, ...). `tuning` is
/// not baked in: collectives use CollectiveAlgorithm::Auto (the tuning's choice at run time).
JobTrace buildTrainingTrace(const TrainingSpec& spec, const CollectiveTuning& tuning,
                            const std::string& name);

}  // namespace fabricsim
