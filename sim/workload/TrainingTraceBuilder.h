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
// all-gather; full activation recomputation; layers that do not divide evenly over the
// virtual stages (see layersOfVirtualStages). Megatron's switches: gradients reduced in
// their own dtype (grad_reduce_dtype, fp32 by --accumulate-allreduce-grads-in-fp32),
// --overlap-grad-reduce (buckets under the backward, or all after it), --overlap-param-gather
// (the parameter all-gathers issued at the start of the step, each chunk's first forward
// waiting for its bucket), --tp-comm-overlap (each block's TP all-gather and reduce-scatter on
// a "tp-overlap" stream beside its compute; the next block waits for both), tied embeddings
// (the shared weight's gradient all-reduced over communicator "embd" between the first and the
// last stage before the optimizer), element-wise kernels at the memory rate, fp8 GEMMs.
// Streams of every program: "compute", "pp-recv-fwd", "pp-send-fwd", "pp-recv-bwd",
// "pp-send-bwd", "dp", and "tp-overlap" with tp_comm_overlap.
// Leaves out: placement (decided at run time), the first chunk of an overlapped TP collective
// (Transformer Engine's split pipeline exposes it), sequence parallelism's re-gather of the
// layer input in backward, data loading, gradient clipping, the loss all-reduces of the
// vocab-parallel cross-entropy.
// Units: Bytes, Time (ps).
#pragma once

#include <string>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/workload/JobTrace.h"

namespace fabricsim {

/// Transformer layers of each of `virtualStages` = pp * virtual_stages virtual stages (index
/// j = chunk * pp + stage), as Meta's Llama 3 and Megatron's uneven pipeline split do it: with
/// base = layers / V and r = layers % V, every virtual stage gets base layers and the r extra
/// ones go one each to virtual stages 1, 2, ..., r; when r = V - 1 (more extras than the V - 2
/// middle stages) the one left over goes to virtual stage 0. So every count is base or base + 1,
/// and the first virtual stage (embedding) and the last (output layer) are light: the last always
/// has base layers (it also runs the output layer's GEMM), the first only not when r = V - 1.
/// Llama-3 405B, 126 layers over 16: 7, 8 x 14, 7. Requires 1 <= virtualStages <= layers.
std::vector<int> layersOfVirtualStages(int layers, int virtualStages);

/// Builds and finalizes the trace of one training job called `name` (also the source named by
/// InputError). Throws InputError for a spec that cannot be expanded (micro-batches that do
/// not divide, fewer layers than pp * virtual_stages, tp not dividing heads, an interleaved
/// schedule with pp <= 2 or micro-batches not a multiple of pp, ...). `tuning` is
/// not baked in: collectives use CollectiveAlgorithm::Auto (the tuning's choice at run time).
/// Layers are split by layersOfVirtualStages; every per-chunk quantity (compute ops, TP
/// collectives, DP buckets, parameters and optimizer step) follows its chunk's layer count.
/// The trace's microbatchForward/microbatchBackward are the layers' compute time of one
/// micro-batch on one stage (embedding and output layer left out); with uneven stages, on the
/// slowest stage (the one with the most layers).
JobTrace buildTrainingTrace(const TrainingSpec& spec, const CollectiveTuning& tuning,
                            const std::string& name);

}  // namespace fabricsim
