// TransformerModel: the shapes, parameter counts, FLOPs and message sizes of a Megatron-style
// decoder-only transformer split over tensor parallelism (see docs/training-model.md).
//
// Models: per layer an attention block (QKV projection with grouped-query attention, output
// projection, the s x s score and value products) and an MLP block (two matrices, or three
// with a gated SwiGLU MLP), plus two layer norms; an input embedding (vocab x hidden) on the
// first pipeline stage and an untied output layer (vocab x hidden, the logits) on the last.
// FLOPs count 2 per multiply-add; attention's s x s products are counted in full, or halved
// for a causal model (ModelSpec::causal: the kernels skip the masked blocks).
// Backward = 2 x forward. All FLOPs are per tensor-parallel rank (divided by tp) and per
// context-parallel rank (its s/cp tokens; attention: its s/cp queries against all s keys).
// Memory-bound kernels (elementwiseBytes): per layer and forward, two layer norms (read x,
// write y: 2a each), two fused bias-dropout-adds (read the block output and the residual,
// write the sum and a 1-byte dropout mask: 3.5a each at 2-byte activations) and the MLP's
// activation (GeLU reads and writes the intermediate: 2f; SwiGLU reads two: 3f), where a is
// one activation on the tokens a rank holds (all b*s, or b*s/tp with sequence parallelism) and
// f the rank's MLP intermediate (b*s*ffn/tp), at 2 bytes per element (bf16; fp8 training keeps
// these in bf16). Backward moves twice the forward's bytes (gradients in and out plus the saved
// input). Softmax and attention dropout are inside the fused attention kernel. fp8 training adds
// Transformer Engine's casts and transposes (attentionFp8CastBytes, mlpFp8CastBytes).
// Message sizes: one TP collective moves the layer's activation b*s*h*dtype (nccl-tests size
// convention: the full tensor, also for reduce-scatter and all-gather); a pipeline message is
// that divided by tp (each TP rank sends its slice); DP gradients are the stage's parameters
// divided by tp, times dtype.
// Leaves out: biases, position embeddings, the element-wise kernels' FLOPs, the vocab-parallel
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
  TransformerModel(const ModelSpec& spec, int dtypeBytes, int tp, bool sequenceParallel, int cp = 1);

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
  bool causal() const { return causal_; }
  int cp() const { return cp_; }
  /// Tokens a rank's layers compute on: b * s / cp (context parallelism splits the sequence).
  double localTokens(int b) const { return static_cast<double>(b) * static_cast<double>(seq_ / cp_); }

  // --- parameters (whole model, not divided by tp) ---
  /// QKV h*(h + 2*kvHeads*headDim) plus output projection h*h.
  int64_t attentionParamsPerLayer() const;
  /// (gated ? 3 : 2) * h * ffn.
  int64_t mlpParamsPerLayer() const;
  /// Two layer norms, 2h each.
  int64_t layerNormParamsPerLayer() const { return 4 * hidden_; }
  /// The dense parameters of a layer (split by tp): attention, the MLP or, with experts, the
  /// router, layer norms.
  int64_t paramsPerLayer() const;
  /// Input embedding V*h (0 without vocab).
  int64_t embeddingParams() const { return vocab_ * hidden_; }
  /// Output layer V*h, untied from the embedding (0 without vocab).
  int64_t outputLayerParams() const { return vocab_ * hidden_; }
  /// layers * (paramsPerLayer + expertParamsPerLayer) + embedding + output layer.
  int64_t totalParams() const;
  /// Parameters of `count` layers plus, optionally, the embedding and the output layer.
  int64_t stageParams(int count, bool embedding, bool outputLayer) const;

  // --- FLOPs per TP rank for a micro-batch of `b` sequences ---
  /// Forward of the attention block: GEMMs 2*t*attentionParams, attention 4*t*s*h (halved when
  /// causal: the local t = b*s/cp queries against all s keys); / tp.
  Flops attentionForward(int b) const;
  /// Forward of the MLP block: 2*b*s*mlpParams / tp.
  Flops mlpForward(int b) const;
  Flops layerForward(int b) const { return attentionForward(b) + mlpForward(b); }
  /// Forward GEMM FLOPs of each weight matrix of a layer (Transformer Engine's overlap slots;
  /// they sum to attentionForward().gemm and mlpForward().gemm): QKV 2*t*h*(h + 2*kv*hd), the
  /// output projection 2*t*h*h, FC1 2*t*h*ffn (x2 gated), FC2 2*t*ffn*h; t = b*s/cp, / tp.
  double qkvGemmFlops(int b) const;
  double projGemmFlops(int b) const;
  double fc1GemmFlops(int b) const;
  double fc2GemmFlops(int b) const;
  /// Forward of the output layer: 2*b*s*h*V / tp (0 without vocab).
  Flops logitsForward(int b) const;
  /// Backward of anything = 2 x its forward.
  static Flops backwardOf(const Flops& forward) { return forward * 2.0; }

  // --- mixture of experts (ModelSpec::experts > 0; each expert whole on one rank) ---
  bool moe() const { return experts_ > 0; }
  int experts() const { return experts_; }
  int topK() const { return topK_; }
  /// One layer's experts: experts * (gated ? 3 : 2) * h * moeFfn (the whole model's).
  int64_t expertParamsPerLayer() const;
  /// The router: h * experts.
  int64_t routerParamsPerLayer() const { return moe() ? hidden_ * experts_ : 0; }
  /// Tokens a rank dispatches per micro-batch and layer: its b*s/cp tokens, / tp with sequence
  /// parallelism (Megatron requires it with tp > 1), each to topK experts, times the capacity
  /// factor when padded.
  double dispatchedTokens(int b) const;
  /// Forward of the router (2 * tokens * h * experts) and of the experts this rank holds
  /// (2 * dispatched tokens * (gated ? 3 : 2) * h * moeFfn: a balanced router gives each
  /// rank as many tokens as it dispatched).
  Flops routerForward(int b) const;
  Flops expertForward(int b) const;
  /// One all-to-all of the dispatch or the combine (nccl-tests size: the rank's whole send
  /// buffer): dispatched tokens * h * dtype.
  Bytes dispatchBytes(int b) const;
  /// Memory-bound bytes of the MoE block forward: its layer norm and bias-dropout-add (5.5a),
  /// the experts' activation ((gated ? 3 : 2) * dispatched * moeFfn * 2) and the permutation
  /// and un-permutation of the dispatched tokens (read and write each: 4 * dispatched * h * 2).
  double moeElementwiseBytes(int b) const;

  // --- memory-bound kernels per TP rank for a micro-batch of `b` sequences (see the header) ---
  /// Forward bytes of the attention block's layer norm and bias-dropout-add: 5.5a.
  double attentionElementwiseBytes(int b) const;
  /// Forward bytes of the MLP block's layer norm, activation and bias-dropout-add: 5.5a + 2f
  /// (3f gated).
  double mlpElementwiseBytes(int b) const;
  /// Backward = 2 x forward bytes.
  static double backwardElementwiseBytes(double forwardBytes) { return 2.0 * forwardBytes; }

  /// HBM bytes of a block's memory-bound kernels, forward and backward.
  struct PassBytes {
    double forward = 0;
    double backward = 0;
  };
  /// What Transformer Engine's fp8 training adds to the attention block's memory-bound kernels
  /// (see docs/training-model.md): Hopper's fp8 GEMMs read both operands K-major, so the weight
  /// gradient needs a transposed fp8 copy of each GEMM input and of each output gradient.
  /// Forward: the QKV input as the GEMM sees it (T x h, gathered with sequence parallelism) is
  /// transposed (read and write 1 byte each: 2 T h), the attention output (bf16, T x h/tp) is cast
  /// and transposed (read 2, write 1 + 1: 4 T h/tp), and the layer norm writes its output in fp8
  /// (1 byte less per element of its T_sp x h output, T_sp = T/tp with sequence parallelism).
  /// Backward: the projection's output gradient is cast and transposed (with sequence parallelism
  /// cast on T_sp x h, 3 bytes, and the gathered T x h transposed, 2 bytes; else 4 T h) and the QKV
  /// output gradient (bf16 from the attention kernel, T x (h + 2 kv d)/tp) cast and transposed
  /// (4 bytes). T = b s / cp tokens.
  PassBytes attentionFp8CastBytes(int b) const;
  /// The same for the dense MLP block. Forward: the FC1 input is transposed (2 T h) and the
  /// activation's fp8 output (1 byte less per element of T x ffn/tp) transposed (2 bytes); the
  /// layer norm writes fp8 (1 byte less on T_sp x h). Backward: FC2's output gradient as the
  /// projection's; FC1's comes out of the activation's backward kernel already cast and
  /// transposed (no more bytes than its bf16 output).
  PassBytes mlpFp8CastBytes(int b) const;

  // --- message sizes ---
  /// b*(s/cp)*h*dtype: one layer activation; the size of each TP collective.
  Bytes activationBytes(int b) const;
  /// One step of ring attention (context parallelism): the K and V of the local chunk of this
  /// rank's KV heads, b*(s/cp)*2*max(1, kvHeads/tp)*headDim*dtype.
  Bytes ringKvBytes(int b) const;
  Bytes tpCollectiveBytes(int b) const { return activationBytes(b); }
  /// activationBytes / tp: what each TP rank sends to the next pipeline stage.
  Bytes pipelineMessageBytes(int b) const;
  /// Gradient (or parameter) bytes per rank for `params` parameters: ceil(params/tp) *
  /// elementBytes (0: the model's dtype).
  Bytes gradientBytesPerRank(int64_t params, int elementBytes = 0) const;
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
  bool causal_;
  int cp_;
  int experts_;
  int topK_;
  int64_t moeFfn_;
  double capacity_;
};

}  // namespace fabricsim
