// TransformerModel: the shapes, parameter counts, FLOPs and message sizes of a Megatron-style
// decoder-only transformer split over tensor parallelism (see docs/training-model.md).
//
// Models: per layer an attention block (QKV projection with grouped-query attention, output
// projection, the s x s score and value products) and an MLP block (two matrices, or three
// with a gated SwiGLU MLP), plus two layer norms; an input embedding (vocab x hidden) on the
// first pipeline stage and an untied output layer (vocab x hidden, the logits) on the last.
// FLOPs count 2 per multiply-add; attention's s x s products are counted in full (causal
// masking is NOT halved: FlashAttention's skipped blocks are left to the attention efficiency).
// Backward = 2 x forward. All FLOPs are per tensor-parallel rank (divided by tp).
// Message sizes: one TP collective moves the layer's activation b*s*h*dtype (nccl-tests size
// convention: the full tensor, also for reduce-scatter and all-gather); a pipeline message is
// that divided by tp (each TP rank sends its slice); DP gradients are the stage's parameters
// divided by tp, times dtype.
// Leaves out: biases, position embeddings, softmax/dropout/layer-norm FLOPs, the vocab-parallel
// cross-entropy's small all-reduces, activation memory.
// Units: parameters and FLOPs as counts (int64 / double), Bytes.
#pragma once

#include <cstdint>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Units.h"

namespace fabricsim {

/// FLOPs of one piece of work, split by the efficiency that applies to it.
struct Flops {
  double gemm = 0;       ///< matrix multiplies of weights (GEMM efficiency)
  double attention = 0;  ///< s x s score and value products (attention efficiency)

  Flops operator+(const Flops& o) const { return {gemm + o.gemm, attention + o.attention}; }
  Flops operator*(double k) const { return {gemm * k, attention * k}; }
  double total() const { return gemm + attention; }
};

class TransformerModel {
 public:
  /// Reads the numeric fields of `spec` (presets are resolved by the loader): ffnHidden 0 =
  /// 4*hidden, kvHeads 0 = heads. Requires (SIM_CHECK; callers validate user input) positive
  /// layers, hidden, heads, seqLen, hidden % heads == 0, dtypeBytes >= 1, tp >= 1.
  TransformerModel(const ModelSpec& spec, int dtypeBytes, int tp, bool sequenceParallel);

  int layers() const { return layers_; }
  int64_t hidden() const { return hidden_; }
  int64_t ffnHidden() const { return ffn_; }
  int64_t heads() const { return heads_; }
  int64_t kvHeads() const { return kvHeads_; }
  int64_t headDim() const { return hidden_ / heads_; }
  int64_t seqLen() const { return seq_; }
  int64_t vocab() const { return vocab_; }
  int dtypeBytes() const { return dtype_; }
  int tp() const { return tp_; }
  bool sequenceParallel() const { return sequenceParallel_; }

  // --- parameters (whole model, not divided by tp) ---
  /// QKV h*(h + 2*kvHeads*headDim) plus output projection h*h.
  int64_t attentionParamsPerLayer() const;
  /// (gated ? 3 : 2) * h * ffn.
  int64_t mlpParamsPerLayer() const;
  /// Two layer norms, 2h each.
  int64_t layerNormParamsPerLayer() const { return 4 * hidden_; }
  int64_t paramsPerLayer() const;
  /// Input embedding V*h (0 without vocab).
  int64_t embeddingParams() const { return vocab_ * hidden_; }
  /// Output layer V*h, untied from the embedding (0 without vocab).
  int64_t outputLayerParams() const { return vocab_ * hidden_; }
  /// layers * paramsPerLayer + embedding + output layer.
  int64_t totalParams() const;
  /// Parameters of `count` layers plus, optionally, the embedding and the output layer.
  int64_t stageParams(int count, bool embedding, bool outputLayer) const;

  // --- FLOPs per TP rank for a micro-batch of `b` sequences ---
  /// Forward of the attention block: GEMMs 2*b*s*attentionParams, attention 4*b*s*s*h; / tp.
  Flops attentionForward(int b) const;
  /// Forward of the MLP block: 2*b*s*mlpParams / tp.
  Flops mlpForward(int b) const;
  Flops layerForward(int b) const { return attentionForward(b) + mlpForward(b); }
  /// Forward of the output layer: 2*b*s*h*V / tp (0 without vocab).
  Flops logitsForward(int b) const;
  /// Backward of anything = 2 x its forward.
  static Flops backwardOf(const Flops& forward) { return forward * 2.0; }

  // --- message sizes ---
  /// b*s*h*dtype: one layer activation; the size of each TP collective.
  Bytes activationBytes(int b) const;
  Bytes tpCollectiveBytes(int b) const { return activationBytes(b); }
  /// activationBytes / tp: what each TP rank sends to the next pipeline stage.
  Bytes pipelineMessageBytes(int b) const;
  /// Gradient (or bf16 parameter) bytes per rank for `params` parameters: ceil(params/tp)*dtype.
  Bytes gradientBytesPerRank(int64_t params) const;
  /// Megatron DDP's default bucket: max(40e6, 1e6*dp) parameters * dtype.
  static Bytes defaultBucketBytes(int dp, int dtypeBytes);

 private:
  int layers_;
  int64_t hidden_;
  int64_t ffn_;
  int64_t heads_;
  int64_t kvHeads_;
  int64_t seq_;
  int64_t vocab_;
  bool gated_;
  int dtype_;
  int tp_;
  bool sequenceParallel_;
};

}  // namespace fabricsim
