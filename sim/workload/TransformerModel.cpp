#include "sim/workload/TransformerModel.h"

#include <algorithm>
#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {

TransformerModel::TransformerModel(const ModelSpec& spec, int dtypeBytes, int tp, bool sequenceParallel, int cp)
    : layers_(spec.layers),
      hidden_(spec.hidden),
      ffn_(spec.ffnHidden > 0 ? spec.ffnHidden : 4 * static_cast<int64_t>(spec.hidden)),
      heads_(spec.heads),
      kvHeads_(spec.kvHeads > 0 ? spec.kvHeads : spec.heads),
      seq_(spec.seqLen),
      vocab_(std::max(spec.vocab, 0)),
      gated_(spec.gatedMlp),
      dtype_(dtypeBytes),
      tp_(tp),
      sequenceParallel_(sequenceParallel),
      causal_(spec.causal),
      cp_(cp),
      experts_(std::max(spec.experts, 0)),
      topK_(spec.topK),
      moeFfn_(spec.moeFfnHidden > 0 ? spec.moeFfnHidden : ffn_),
      capacity_(spec.capacityFactor) {
  SIM_CHECK(layers_ > 0 && hidden_ > 0 && heads_ > 0 && seq_ > 0, "model shape must be positive");
  SIM_CHECK(hidden_ % heads_ == 0, "hidden must be a multiple of heads");
  SIM_CHECK(dtype_ >= 1 && tp_ >= 1 && cp_ >= 1, "dtype bytes, tp and cp must be positive");
  SIM_CHECK(seq_ % cp_ == 0, "cp must divide the sequence");
}

int64_t TransformerModel::attentionParamsPerLayer() const {
  const int64_t qkv = hidden_ * (hidden_ + 2 * kvHeads_ * headDim());
  return qkv + hidden_ * hidden_;
}

int64_t TransformerModel::mlpParamsPerLayer() const {
  return (gated_ ? 3 : 2) * hidden_ * ffn_;
}

int64_t TransformerModel::paramsPerLayer() const {
  return attentionParamsPerLayer() + (moe() ? routerParamsPerLayer() : mlpParamsPerLayer()) +
         layerNormParamsPerLayer();
}

int64_t TransformerModel::expertParamsPerLayer() const {
  return moe() ? static_cast<int64_t>(experts_) * (gated_ ? 3 : 2) * hidden_ * moeFfn_ : 0;
}

int64_t TransformerModel::totalParams() const {
  return stageParams(layers_, true, true) + static_cast<int64_t>(layers_) * expertParamsPerLayer();
}

double TransformerModel::dispatchedTokens(int b) const {
  const double tokens = localTokens(b) / (sequenceParallel_ ? tp_ : 1);
  return tokens * topK_ * (capacity_ > 0 ? capacity_ : 1.0);
}

Flops TransformerModel::routerForward(int b) const {
  const double tokens = localTokens(b) / (sequenceParallel_ ? tp_ : 1);
  return {2.0 * tokens * static_cast<double>(hidden_) * experts_, 0.0};
}

Flops TransformerModel::expertForward(int b) const {
  return {2.0 * dispatchedTokens(b) * (gated_ ? 3.0 : 2.0) * static_cast<double>(hidden_) *
              static_cast<double>(moeFfn_),
          0.0};
}

Bytes TransformerModel::dispatchBytes(int b) const {
  return static_cast<Bytes>(std::llround(dispatchedTokens(b) * static_cast<double>(hidden_))) * dtype_;
}

int64_t TransformerModel::stageParams(int count, bool embedding, bool outputLayer) const {
  return static_cast<int64_t>(count) * paramsPerLayer() + (embedding ? embeddingParams() : 0) +
         (outputLayer ? outputLayerParams() : 0);
}

Flops TransformerModel::attentionForward(int b) const {
  const double tokens = localTokens(b);
  Flops f;
  f.gemm = 2.0 * tokens * static_cast<double>(attentionParamsPerLayer()) / tp_;
  f.attention = (causal_ ? 2.0 : 4.0) * tokens * static_cast<double>(seq_) * static_cast<double>(hidden_) / tp_;
  return f;
}

namespace {
constexpr double kElementwiseBytes = 2.0;  // bf16 activations between the GEMMs
}  // namespace

double TransformerModel::attentionElementwiseBytes(int b) const {
  const double tokens = localTokens(b) / (sequenceParallel_ ? tp_ : 1);
  const double a = tokens * static_cast<double>(hidden_) * kElementwiseBytes;
  return 2.0 * a + 3.5 * a;
}

double TransformerModel::moeElementwiseBytes(int b) const {
  const double d = dispatchedTokens(b);
  return attentionElementwiseBytes(b) + (gated_ ? 3.0 : 2.0) * d * static_cast<double>(moeFfn_) * kElementwiseBytes +
         4.0 * d * static_cast<double>(hidden_) * kElementwiseBytes;
}

double TransformerModel::mlpElementwiseBytes(int b) const {
  const double f = localTokens(b) * static_cast<double>(ffn_) / tp_ * kElementwiseBytes;
  return attentionElementwiseBytes(b) + (gated_ ? 3.0 : 2.0) * f;
}

namespace {
/// Bytes of casting (3) and transposing (2) a row-parallel GEMM's output gradient: the gradient
/// arrives on the rank's `spTokens` (sequence parallel) and the GEMM sees all `tokens`.
double rowParallelGradCastBytes(double tokens, double spTokens, double width, bool sequenceParallel) {
  return sequenceParallel ? 3.0 * spTokens * width + 2.0 * tokens * width : 4.0 * tokens * width;
}
}  // namespace

TransformerModel::PassBytes TransformerModel::attentionFp8CastBytes(int b) const {
  const double t = localTokens(b), tsp = sequenceParallel_ ? t / tp_ : t, h = static_cast<double>(hidden_);
  const double qkvWidth = static_cast<double>(hidden_ + 2 * kvHeads_ * headDim()) / tp_;
  return {2.0 * t * h + 4.0 * t * h / tp_ - tsp * h,
          rowParallelGradCastBytes(t, tsp, h, sequenceParallel_ && tp_ > 1) + 4.0 * t * qkvWidth};
}

TransformerModel::PassBytes TransformerModel::mlpFp8CastBytes(int b) const {
  const double t = localTokens(b), tsp = sequenceParallel_ ? t / tp_ : t, h = static_cast<double>(hidden_);
  const double f = static_cast<double>(ffn_) / tp_;
  return {2.0 * t * h + t * f - tsp * h, rowParallelGradCastBytes(t, tsp, h, sequenceParallel_ && tp_ > 1)};
}

Flops TransformerModel::mlpForward(int b) const {
  return {2.0 * localTokens(b) * static_cast<double>(mlpParamsPerLayer()) / tp_, 0.0};
}

double TransformerModel::qkvGemmFlops(int b) const {
  return 2.0 * localTokens(b) * static_cast<double>(hidden_ * (hidden_ + 2 * kvHeads_ * headDim())) / tp_;
}

double TransformerModel::projGemmFlops(int b) const {
  return 2.0 * localTokens(b) * static_cast<double>(hidden_ * hidden_) / tp_;
}

double TransformerModel::fc1GemmFlops(int b) const {
  return 2.0 * localTokens(b) * static_cast<double>((gated_ ? 2 : 1) * hidden_ * ffn_) / tp_;
}

double TransformerModel::fc2GemmFlops(int b) const {
  return 2.0 * localTokens(b) * static_cast<double>(ffn_ * hidden_) / tp_;
}

Flops TransformerModel::logitsForward(int b) const {
  return {2.0 * localTokens(b) * static_cast<double>(hidden_) * static_cast<double>(vocab_) / tp_, 0.0};
}

Bytes TransformerModel::activationBytes(int b) const {
  return static_cast<Bytes>(b) * (seq_ / cp_) * hidden_ * dtype_;
}

Bytes TransformerModel::ringKvBytes(int b) const {
  const int64_t kvPerRank = std::max<int64_t>(1, kvHeads_ / tp_);
  return static_cast<Bytes>(b) * (seq_ / cp_) * 2 * kvPerRank * headDim() * dtype_;
}

Bytes TransformerModel::pipelineMessageBytes(int b) const {
  return (activationBytes(b) + tp_ - 1) / tp_;
}

Bytes TransformerModel::gradientBytesPerRank(int64_t params, int elementBytes) const {
  return (params + tp_ - 1) / tp_ * (elementBytes > 0 ? elementBytes : dtype_);
}

Bytes TransformerModel::defaultBucketBytes(int dp, int dtypeBytes) {
  return std::max<int64_t>(40'000'000, 1'000'000 * static_cast<int64_t>(dp)) * dtypeBytes;
}

}  // namespace fabricsim
