// TransformerModel and ComputeModel: parameter counts of published models, the 6*N*T FLOPs
// rule, message sizes and compute times.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/config/WorkloadSpec.h"
#include "sim/workload/ComputeModel.h"
#include "sim/workload/TransformerModel.h"

using namespace fabricsim;

namespace {

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.ffnHidden = 49152;
  m.heads = 96;
  m.seqLen = 2048;
  m.vocab = 50257;
  return m;
}

ModelSpec llama3_70b() {
  ModelSpec m;
  m.layers = 80;
  m.hidden = 8192;
  m.ffnHidden = 28672;
  m.heads = 64;
  m.kvHeads = 8;
  m.seqLen = 8192;
  m.vocab = 128256;
  m.gatedMlp = true;
  return m;
}

ModelSpec llama3_405b() {
  ModelSpec m;
  m.layers = 126;
  m.hidden = 16384;
  m.ffnHidden = 53248;
  m.heads = 128;
  m.kvHeads = 8;
  m.seqLen = 8192;
  m.vocab = 128256;
  m.gatedMlp = true;
  return m;
}

double relErr(double value, double expected) {
  return std::abs(value - expected) / expected;
}

}  // namespace

TEST(TransformerModel, Gpt3ParameterCountMatchesPublished) {
  const TransformerModel model(gpt3_175b(), 2, 1, false);
  EXPECT_LT(relErr(static_cast<double>(model.totalParams()), 174.6e9), 0.01) << model.totalParams();
}

TEST(TransformerModel, Llama3_70bParameterCountMatchesPublished) {
  const TransformerModel model(llama3_70b(), 2, 1, false);
  EXPECT_LT(relErr(static_cast<double>(model.totalParams()), 70.6e9), 0.01) << model.totalParams();
}

TEST(TransformerModel, Llama3_405bParameterCountMatchesPublished) {
  const TransformerModel model(llama3_405b(), 2, 1, false);
  EXPECT_LT(relErr(static_cast<double>(model.totalParams()), 405.8e9), 0.01) << model.totalParams();
}

TEST(TransformerModel, PerLayerParameterFormula) {
  const TransformerModel gpt(gpt3_175b(), 2, 8, false);
  const int64_t h = 12288;
  EXPECT_EQ(gpt.attentionParamsPerLayer(), 4 * h * h);
  EXPECT_EQ(gpt.mlpParamsPerLayer(), 2 * h * 4 * h);
  EXPECT_EQ(gpt.paramsPerLayer(), 12 * h * h + 4 * h);
  // Grouped-query attention: K and V have kvHeads * headDim columns each.
  const TransformerModel llama(llama3_70b(), 2, 8, false);
  EXPECT_EQ(llama.attentionParamsPerLayer(), 8192LL * (8192 + 2 * 8 * 128) + 8192LL * 8192);
  EXPECT_EQ(llama.mlpParamsPerLayer(), 3LL * 8192 * 28672);
}

TEST(TransformerModel, DefaultsFfnAndKvHeads) {
  ModelSpec spec;
  spec.layers = 2;
  spec.hidden = 256;
  spec.heads = 4;
  spec.seqLen = 128;
  const TransformerModel model(spec, 2, 1, false);
  EXPECT_EQ(model.ffnHidden(), 1024);
  EXPECT_EQ(model.kvHeads(), 4);
  EXPECT_EQ(model.embeddingParams(), 0);
  EXPECT_EQ(model.totalParams(), 2 * (12 * 256 * 256 + 4 * 256));
}

TEST(TransformerModel, TrainingFlopsFollowSixNTRule) {
  for (const ModelSpec& spec : {gpt3_175b(), llama3_70b(), llama3_405b()}) {
    for (int tp : {1, 8}) {
      const TransformerModel model(spec, 2, tp, false);
      const int b = 2;
      const double tokens = static_cast<double>(b) * spec.seqLen;
      // Forward + backward (= 3 x forward) of every layer and the logits, GEMMs only, all TP ranks.
      const double perRank = 3.0 * (model.layerForward(b).gemm * spec.layers + model.logitsForward(b).gemm);
      const double flops = perRank * tp;
      EXPECT_LT(relErr(flops, 6.0 * static_cast<double>(model.totalParams()) * tokens), 0.03) << spec.layers;
    }
  }
}

TEST(TransformerModel, AttentionFlopsAreFullSquareDividedByTp) {
  ModelSpec m = gpt3_175b();
  m.causal = false;  // the full square (causal, the default, halves it: MegatronStep's test)
  const TransformerModel model(m, 2, 8, false);
  const Flops f = model.attentionForward(1);
  EXPECT_DOUBLE_EQ(f.attention, 4.0 * 2048.0 * 2048.0 * 12288.0 / 8);
  EXPECT_DOUBLE_EQ(f.gemm, 2.0 * 2048.0 * 4.0 * 12288.0 * 12288.0 / 8);
  const Flops bwd = TransformerModel::backwardOf(f);
  EXPECT_DOUBLE_EQ(bwd.attention, 2 * f.attention);
  EXPECT_DOUBLE_EQ(bwd.gemm, 2 * f.gemm);
  EXPECT_DOUBLE_EQ(model.logitsForward(1).gemm, 2.0 * 2048.0 * 12288.0 * 50257.0 / 8);
}

TEST(TransformerModel, MessageSizes) {
  const TransformerModel model(gpt3_175b(), 2, 8, true);
  EXPECT_EQ(model.activationBytes(1), 2048LL * 12288 * 2);
  EXPECT_EQ(model.tpCollectiveBytes(2), 2 * 2048LL * 12288 * 2);
  EXPECT_EQ(model.pipelineMessageBytes(1), 2048LL * 12288 * 2 / 8);
  EXPECT_EQ(model.gradientBytesPerRank(800), 200);
  EXPECT_EQ(model.gradientBytesPerRank(801), 202);  // ceil(801 / 8) * 2
  EXPECT_EQ(TransformerModel::defaultBucketBytes(16, 2), 80'000'000);
  EXPECT_EQ(TransformerModel::defaultBucketBytes(64, 2), 128'000'000);
}

TEST(ComputeModel, ComputeTimeSplitsEfficiencies) {
  GpuSpec gpu;
  gpu.peakFlops = 1e15;
  gpu.gemmEfficiency = 0.5;
  gpu.attentionEfficiency = 0.25;
  gpu.hbmBytesPerSecond = 3e12;
  const ComputeModel cm(gpu);
  EXPECT_EQ(cm.computeTime({1e12, 0}), Time::ms(2));
  EXPECT_EQ(cm.computeTime({0, 1e12}), Time::ms(4));
  EXPECT_EQ(cm.computeTime({1e12, 1e12}), Time::ms(6));
  EXPECT_EQ(cm.computeTime({1e3, 0}), Time::ps(2));
  EXPECT_EQ(cm.computeTime({1.4e3, 0}), Time::ps(3));  // 2.8 ps, rounded to the nearest
  EXPECT_EQ(cm.memoryTime(3e9), Time::ms(1));
  EXPECT_EQ(cm.optimizerTime(1'000'000'000), Time::ms(10));  // 30 bytes per parameter
  EXPECT_EQ(cm.computeTime({1.2345e13, 6.789e11}), cm.computeTime({1.2345e13, 6.789e11}));
}
