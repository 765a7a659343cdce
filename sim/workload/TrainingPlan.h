// TrainingPlan: what every pipeline stage's program of a training job needs: the validated
// shape of the job (parallel sizes, layers per virtual stage, switches), the communicator
// indices, the message sizes and the per-op compute times (built by buildTrainingTrace).
// Units: Bytes, Time (ps), parameters as counts.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

class TransformerModel;
class ComputeModel;

struct TrainingPlan {
  int tp = 1, pp = 1, dp = 1, v = 1, m = 1, b = 1;
  /// Layers of virtual stage j = chunk * pp + stage (layersOfVirtualStages).
  std::vector<int> layersOfVirtual;
  bool sp = false, recompute = false, stageGranularity = false, distOpt = false, interleaved = false;
  bool vocab = false, tied = false, tpOverlap = false, overlapGrad = true, overlapParam = false;
  uint16_t tpComm = 0, ppComm = 0, dpComm = 0, embdComm = 0, cpComm = 0, epComm = 0, edpComm = 0;
  int cp = 1, ep = 1;
  int etp = 1;  ///< expert tensor parallelism: 1, or tp (experts split over the TP group)
  bool moe = false;
  int64_t expertParamsPerLayerRank = 0;  ///< the experts of one layer this rank holds
  Bytes dispatchBytes = 0;               ///< one MoE all-to-all (dispatch or combine)
  Time routerFwd, routerBwd, expertFwd, expertBwd;
  Bytes ringBytes = 0;         ///< one ring-attention step forward (K and V of a chunk); backward moves 2x
  Bytes tpBytes = 0;           ///< one TP collective
  Bytes ppBytes = 0;           ///< one pipeline message per TP rank
  int64_t bucketElements = 0;  ///< DP bucket, in this rank's parameters
  int gradBytes = 2;           ///< bytes per gradient element in the DP reduction
  int paramBytes = 2;          ///< bytes per parameter element in the parameter all-gather
  /// With TP overlap: the compute share the TP kernels beside a block take while they move
  /// data (TraceOp::smShare; 0 for ring exchange, whose copy engines move it, and for a GEMM
  /// with the SM margin, whose lost SMs are in its duration).
  struct TpShares {
    double gather = -1.0, reduce = -1.0;  ///< negative: the GPU's commSmShare
    /// Backward blocks: sequence parallelism's re-gather of the block's input (qkv_dgrad /
    /// fc1_dgrad's bulk all-gather) and its share.
    bool regather = false;
    double regatherShare = -1.0;
    /// Backward blocks without TP overlap: the data (= weight) gradient GEMM time of the block's
    /// column-parallel GEMM (qkv, fc1), which the re-gather and the reduce-scatter run beside.
    Time columnGrad;
    /// Forward blocks: the chunks of the output projection's pipelined or ring-exchange
    /// reduce-scatter. Its last chunk can only leave once the GEMM's last chunk is done, so
    /// 1/reduceSplits of the reduce-scatter follows the block's compute; 0: all of it overlaps.
    int reduceSplits = 0;
  };
  TpShares attnFwdShares, mlpFwdShares, attnBwdShares, mlpBwdShares;
  int64_t paramsPerLayer = 0, embeddingParams = 0, outputParams = 0;
  // Compute times of one micro-batch.
  Time attnFwd, mlpFwd, attnBwd, mlpBwd;  ///< per layer ("layer" granularity)
  /// All layers of virtual stage j ("stage" granularity), indexed like layersOfVirtual.
  std::vector<Time> chunkFwd, chunkBwd;
  Time logitsFwd, logitsBwd, embedding;
  /// Megatron's defer_embedding_wgrad_compute: the output layer's weight-gradient GEMM of one
  /// micro-batch (part of logitsBwd), and how many backwards leave it for the pipeline flush
  /// (0: none deferred).
  Time logitsWgrad;
  int deferredWgrads = 0;
  const TransformerModel* model = nullptr;
  const ComputeModel* compute = nullptr;
};

}  // namespace fabricsim
