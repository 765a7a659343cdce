// Megatron's step switches in the training trace, each against a closed form or a structural
// rule written here: fp32 gradient reduction (bytes per rank = parameters / tp x 4, parameters
// gathered at 2 bytes), tied embeddings (one all-reduce of V h / tp gradients between the first
// and the last stage, before the optimizer), --overlap-grad-reduce off (every bucket after the
// whole backward), --overlap-param-gather (gathers first, each chunk's first forward waiting for
// one), --tp-comm-overlap (the TP collectives beside the compute, same bytes; a GEMM with
// Transformer Engine's SM margin slowed by sms / (sms - num_sm), a bulk kernel's share), causal attention
// FLOPs (half the square), the element-wise bytes per layer, fp8 GEMMs at the fp8 peak, Transformer
// Engine's fp8 casts and transposes kernel by kernel, the bf16 output layer of an fp8 job, the
// in-step rate, the deferred output-layer weight gradient, sequence parallelism's backward, context
// parallelism (ranks, ring attention bytes, s/cp tokens), expert parallelism (groups, all-to-all bytes,
// expert gradients) and Mixtral's parameter counts, FLOPs per token (6N plus attention) and the published MFU
// reproduced from the published step times, and the bad combinations refused.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/config/ModelPresets.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/core/Error.h"
#include "sim/workload/ComputeModel.h"
#include "sim/workload/JobTrace.h"
#include "sim/workload/TrainingTraceBuilder.h"
#include "sim/workload/TransformerModel.h"
#include "tests/support/ClosedFormStep.h"

using namespace fabricsim;

namespace {

constexpr int64_t kHidden = 512;
constexpr int64_t kSeq = 256;
constexpr int64_t kLayerParams = 12 * kHidden * kHidden + 4 * kHidden;  // attention 4h^2, MLP 8h^2, norms 4h

TrainingSpec spec(int tp, int pp, int dp, int global, int layers = 8) {
  TrainingSpec s;
  s.model.layers = layers;
  s.model.hidden = static_cast<int>(kHidden);
  s.model.heads = 8;
  s.model.seqLen = static_cast<int>(kSeq);
  s.parallelism.tp = tp;
  s.parallelism.pp = pp;
  s.parallelism.dp = dp;
  s.parallelism.microBatch = 1;
  s.parallelism.globalBatch = global;
  testsupport::pinClosedFormStep(s);
  return s;
}

JobTrace build(const TrainingSpec& s) {
  return buildTrainingTrace(s, CollectiveTuning{}, "job");
}

std::map<std::string, int64_t> bytesByLabel(const Program& prog) {
  std::map<std::string, int64_t> out;
  for (const TraceOp& op : prog.ops)
    if (op.type != OpType::Compute) out[prog.labels[op.label]] += op.bytes;
  return out;
}

/// A layer of round figures for per-layer closed forms: h 1024, 8 heads of 128, ffn 4096, s 4096.
ModelSpec smallModel() {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 1024;
  m.heads = 8;
  m.seqLen = 4096;
  m.ffnHidden = 4096;
  return m;
}

/// A GPU of round figures for closed forms: bf16 1000 TFLOP/s (GEMMs at 0.8, attention 0.5), fp8
/// 2000 TFLOP/s at 0.6, HBM 2 TB/s at 0.5.
GpuSpec roundGpu() {
  GpuSpec g;
  g.peakFlops = 1000e12;
  g.gemmEfficiency = 0.8;
  g.attentionEfficiency = 0.5;
  g.peakFp8Flops = 2000e12;
  g.fp8GemmEfficiency = 0.6;
  g.hbmBytesPerSecond = 2e12;
  g.memoryEfficiency = 0.5;
  return g;
}

std::string inputErrorKey(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.diagnostics().empty() ? "" : e.diagnostics()[0].key;
  }
  return "(no error)";
}

}  // namespace

TEST(MegatronStep, Fp32GradientReductionAndBf16ParameterGather) {
  TrainingSpec s = spec(2, 2, 2, 4);
  s.parallelism.distributedOptimizer = true;
  s.gradReduceBytes = 4;
  s.gradReduceDtype = "fp32";
  const JobTrace t = build(s);
  // 4 layers per stage, each layer's parameters split over tp = 2.
  const int64_t perRank = 4 * kLayerParams / 2;
  for (const Program& prog : t.programs) {
    const auto bytes = bytesByLabel(prog);
    EXPECT_EQ(bytes.at("dp-reducescatter"), perRank * 4);
    EXPECT_EQ(bytes.at("dp-allgather"), perRank * 2);
  }
}

TEST(MegatronStep, TiedEmbeddingsAllReduceBetweenFirstAndLastStage) {
  TrainingSpec s = spec(2, 3, 2, 6, 6);
  s.model.vocab = 1000;
  s.model.tiedEmbeddings = true;
  s.gradReduceBytes = 4;
  const JobTrace t = build(s);
  ASSERT_EQ(t.communicators.size(), 4u);
  const Communicator& embd = t.communicators[3];
  EXPECT_EQ(embd.name, "embd");
  // Megatron rank order r = tp_idx + tp (dp_idx + dp pp_idx): stage 0 holds ranks 0..3, stage 2
  // ranks 8..11; rank 0 pairs with rank 8, the middle stage's ranks are alone.
  EXPECT_EQ(embd.groups[embd.groupOfRank[0]], (std::vector<uint32_t>{0, 8}));
  EXPECT_EQ(embd.groups[embd.groupOfRank[4]], (std::vector<uint32_t>{4}));
  const int64_t embeddingGradBytes = 1000 * kHidden / 2 * 4;  // V h / tp, fp32
  for (int stage = 0; stage < 3; ++stage) {
    const Program& prog = t.programs[static_cast<size_t>(stage)];
    const auto bytes = bytesByLabel(prog);
    if (stage == 1) {
      EXPECT_EQ(bytes.count("embedding-allreduce"), 0u);
      continue;
    }
    EXPECT_EQ(bytes.at("embedding-allreduce"), embeddingGradBytes);
    // The optimizer waits for it.
    const TraceOp& opt = prog.ops.back();
    ASSERT_EQ(prog.labels[opt.label], "optimizer");
    bool waits = false;
    for (uint32_t d : opt.deps) waits |= prog.labels[prog.ops[d].label] == "embedding-allreduce";
    EXPECT_TRUE(waits) << "stage " << stage;
  }
  // With one stage there is nothing to share.
  TrainingSpec one = spec(2, 1, 2, 2, 2);
  one.model.vocab = 1000;
  one.model.tiedEmbeddings = true;
  EXPECT_EQ(build(one).communicators.size(), 3u);
}

TEST(MegatronStep, WithoutGradOverlapEveryBucketWaitsForTheWholeBackward) {
  TrainingSpec s = spec(1, 2, 4, 16);
  s.dpBucketBytes = kLayerParams * 2;  // one bucket per layer
  s.parallelism.overlapGradReduce = false;
  const JobTrace t = build(s);
  for (const Program& prog : t.programs) {
    uint32_t lastCompute = 0;
    for (uint32_t i = 0; i < prog.ops.size(); ++i)
      if (prog.ops[i].type == OpType::Compute && prog.labels[prog.ops[i].label] != "optimizer")
        lastCompute = i;
    int buckets = 0;
    for (const TraceOp& op : prog.ops) {
      if (op.type != OpType::Collective || prog.labels[op.label] != "dp-allreduce") continue;
      ++buckets;
      EXPECT_EQ(op.deps, (std::vector<uint32_t>{lastCompute}));
    }
    EXPECT_EQ(buckets, 4);
  }
}

TEST(MegatronStep, OverlappedParameterGatherComesFirstAndGatesTheFirstForward) {
  TrainingSpec s = spec(1, 4, 2, 8);
  s.parallelism.schedule = "interleaved";
  s.parallelism.virtualStages = 2;
  s.parallelism.distributedOptimizer = true;
  s.parallelism.overlapParamGather = true;
  s.dpBucketBytes = kLayerParams * 2;  // one bucket per layer: 2 chunks of 1 layer per stage
  const JobTrace t = build(s);
  for (const Program& prog : t.programs) {
    ASSERT_GE(prog.ops.size(), 2u);
    // Two buckets, both gathered before anything else; none after the optimizer.
    EXPECT_EQ(prog.labels[prog.ops[0].label], "dp-allgather");
    EXPECT_EQ(prog.labels[prog.ops[1].label], "dp-allgather");
    EXPECT_NE(prog.labels[prog.ops.back().label], "dp-allgather");
    // The first forward compute op waits for a gather; chunk 0's layer is the last bucket in
    // backward order, gathered first (op 0).
    for (const TraceOp& op : prog.ops) {
      if (op.type != OpType::Compute) continue;
      ASSERT_EQ(prog.labels[op.label], "fwd");
      bool gated = false;
      for (uint32_t d : op.deps) gated |= d == 0;
      EXPECT_TRUE(gated);
      break;
    }
  }
}

TEST(MegatronStep, TpCommOverlapMovesTheCollectivesBesideTheCompute) {
  TrainingSpec s = spec(4, 1, 1, 2, 2);
  s.parallelism.sequenceParallel = true;
  const JobTrace blocking = build(s);
  s.parallelism.tpCommOverlap = true;
  s.gpu.commSmShare = 0.2;
  // Every slot by ring exchange without the SM margin: copy engines move the data, so the
  // GEMMs keep their times and no TP kernel takes compute (share 0, not the GPU's 0.2).
  TpOverlapConfig& c = s.parallelism.tpCommOverlapCfg;
  for (const auto& [name, slot] : c.slots()) *slot = {"ring_exchange", 1, false};
  const JobTrace overlapped = build(s);
  const Program& b = blocking.programs[0];
  const Program& o = overlapped.programs[0];
  // The same traffic, plus sequence parallelism's re-gather of each backward block's input
  // (b s h x 2 bytes; 2 layers x 2 blocks x 2 micro-batches), which the blocking step leaves out.
  auto withRegather = bytesByLabel(b);
  withRegather["tp-regather"] = 2 * 2 * 2 * (kSeq * kHidden * 2);
  EXPECT_EQ(bytesByLabel(o), withRegather);
  Time blockingCompute, overlappedCompute;
  for (const TraceOp& op : b.ops)
    if (op.type == OpType::Compute) blockingCompute += op.duration;
  for (size_t i = 0; i < o.ops.size(); ++i) {
    const TraceOp& op = o.ops[i];
    if (op.type == OpType::Collective && o.labels[op.label].rfind("tp-", 0) == 0) {
      EXPECT_EQ(o.streams[op.stream], "tp-overlap");
      EXPECT_EQ(op.smShare, 0.0);
      continue;
    }
    if (op.type != OpType::Compute) continue;
    overlappedCompute += op.duration;
    // A compute op never waits for a TP collective emitted just before it (its own block's).
    for (uint32_t d : op.deps) {
      if (o.ops[d].type == OpType::Collective && d + 2 >= i)
        ADD_FAILURE() << "op " << i << " waits for " << d;
    }
  }
  EXPECT_EQ(overlappedCompute, blockingCompute);
}

// An output projection overlapped in chunks cannot send its last chunk before its GEMM is done:
// with ring exchange (tp = 4 chunks) 1/4 of each forward block's reduce-scatter (b s h x 2 bytes
// / 4) follows the block's compute and the next compute waits for it; pipeline with num_splits 2
// leaves half; the other 3/4 (1/2) run beside the compute. Backward (bulk) leaves nothing.
TEST(MegatronStep, ChunkedOutputProjectionExposesItsLastReduceScatterChunk) {
  for (const auto& [method, splits, tailDiv] :
       std::vector<std::tuple<std::string, int, int64_t>>{{"ring_exchange", 4, 4}, {"pipeline", 2, 2}}) {
    TrainingSpec s = spec(4, 1, 1, 2, 2);  // 2 layers, 2 micro-batches
    s.parallelism.sequenceParallel = true;
    s.parallelism.tpCommOverlap = true;
    TpOverlapConfig& c = s.parallelism.tpCommOverlapCfg;
    c.projFprop = {method, 1, false, splits};
    c.fc2Fprop = {method, 1, false, splits};
    const JobTrace t = build(s);
    const Program& o = t.programs[0];
    const int64_t act = kSeq * kHidden * 2;
    int tails = 0;
    for (uint32_t i = 0; i < o.ops.size(); ++i) {
      const TraceOp& op = o.ops[i];
      if (op.type != OpType::Collective || o.labels[op.label] != "tp-reducescatter") continue;
      const bool afterCompute = op.deps.size() == 1 && o.ops[op.deps[0]].type == OpType::Compute;
      if (!afterCompute) continue;
      ++tails;
      EXPECT_EQ(op.bytes, act / tailDiv) << method;
      EXPECT_EQ(o.ops[op.deps[0]].type, OpType::Compute);
      bool waited = false;  // a later compute op waits for the tail
      for (uint32_t j = i + 1; j < o.ops.size() && !waited; ++j)
        if (o.ops[j].type == OpType::Compute)
          for (uint32_t d : o.ops[j].deps) waited = waited || d == i;
      EXPECT_TRUE(waited) << method << ": nothing waits for the tail at op " << i;
    }
    EXPECT_EQ(tails, 2 * 2 * 2) << method;  // layers x forward blocks x micro-batches
    // Every reduce-scatter's bytes together: unchanged (the overlapped part is act - act/div).
    int64_t total = 0;
    for (const TraceOp& op : o.ops)
      if (op.type == OpType::Collective && o.labels[op.label] == "tp-reducescatter") total += op.bytes;
    EXPECT_EQ(total, 2 * 2 * 2 * 2 * act) << method;  // forward and backward blocks
  }
}

TEST(MegatronStep, TpOverlapSmMarginSlowsItsGemmAndABulkKernelTakesItsSms) {
  // tp 4, 8 layers, 2 micro-batches. The output projection's reduce-scatter on 33 of 132 SMs
  // with the margin: that GEMM runs on 99 SMs, 4/3 as long, in each of the 16 attention
  // forwards. Its time, from the shape: 2 b s h^2 / tp FLOPs at 989e12 x 0.6 (the GPU's
  // defaults) = 2 x 256 x 512^2 / 4 / 5.934e14 s = 56.54 ns; 16 x 1/3 of it is added (1 ps of
  // rounding per block). The weight gradient's bulk reduce-scatter on 33 SMs without the
  // margin takes 33/132 = 0.25 of the compute while it moves, in each of the 16 attention
  // backwards; every other slot is ring exchange (share 0).
  TrainingSpec s = spec(4, 1, 1, 2);
  s.parallelism.sequenceParallel = true;
  s.parallelism.tpCommOverlap = true;
  TpOverlapConfig& c = s.parallelism.tpCommOverlapCfg;
  for (const auto& [name, slot] : c.slots()) *slot = {"ring_exchange", 1, false};
  const JobTrace plain = build(s);
  c.projFprop = {"pipeline", 33, true};
  c.qkvWgrad = {"bulk", 33, false};
  const JobTrace margin = build(s);
  auto computeOf = [](const Program& p) {
    Time t;
    for (const TraceOp& op : p.ops)
      if (op.type == OpType::Compute) t += op.duration;
    return t;
  };
  const double projGemmPs = 2.0 * 256 * 512.0 * 512 / 4 / (989e12 * 0.6) * 1e12;
  EXPECT_NEAR(static_cast<double>((computeOf(margin.programs[0]) - computeOf(plain.programs[0])).picos()),
              16 * projGemmPs / 3, 16.0);
  int quarter = 0, other = 0;
  for (const TraceOp& op : margin.programs[0].ops) {
    if (op.type != OpType::Collective) continue;
    if (op.smShare == 0.25)
      ++quarter;
    else if (op.smShare != 0.0)
      ++other;
  }
  EXPECT_EQ(quarter, 16);
  EXPECT_EQ(other, 0);
}

TEST(MegatronStep, CausalAttentionAndElementwiseBytes) {
  ModelSpec m = smallModel();
  m.causal = false;
  const TransformerModel full(m, 2, 4, true);
  m.causal = true;
  const TransformerModel causal(m, 2, 4, true);
  // Attention products 4 b s^2 h / tp, half of it causal; the GEMMs are unchanged.
  EXPECT_DOUBLE_EQ(full.attentionForward(2).attention, 4.0 * 2 * 4096.0 * 4096 * 1024 / 4);
  EXPECT_DOUBLE_EQ(causal.attentionForward(2).attention, 2.0 * 2 * 4096.0 * 4096 * 1024 / 4);
  EXPECT_DOUBLE_EQ(causal.attentionForward(2).gemm, full.attentionForward(2).gemm);
  // Sequence parallel: a = (b s / tp) h x 2 bytes; f = b s ffn / tp x 2 bytes.
  const double a = 2.0 * 4096 / 4 * 1024 * 2, f = 2.0 * 4096 * 4096 / 4 * 2;
  EXPECT_DOUBLE_EQ(causal.attentionElementwiseBytes(2), 5.5 * a);
  EXPECT_DOUBLE_EQ(causal.mlpElementwiseBytes(2), 5.5 * a + 2 * f);
  m.gatedMlp = true;
  const TransformerModel gated(m, 2, 4, false);  // no SP: every rank holds all b s tokens
  EXPECT_DOUBLE_EQ(gated.mlpElementwiseBytes(2), 5.5 * a * 4 + 3 * f);
}

TEST(MegatronStep, Fp8GemmsRunAtTheFp8Peak) {
  const GpuSpec g = roundGpu();
  const ComputeModel bf16(g), fp8(g, true);
  const Flops work{1.2e12, 0.5e12};
  // bf16: 1.2e12 / 0.8e15 + 0.5e12 / 0.5e15 = 2.5 ms; fp8: 1.2e12 / 1.2e15 + 1 ms = 2 ms.
  EXPECT_EQ(bf16.computeTime(work), Time::us(2500));
  EXPECT_EQ(fp8.computeTime(work), Time::us(2000));
  // 1 GB at 2 TB/s x 0.5 = 1 ms.
  EXPECT_EQ(bf16.memoryTime(1e9), Time::ms(1));
  EXPECT_EQ(fp8.computeTime(work, 1e9), Time::us(3000));
}

// gpu.in_step_rate divides the tensor-core work (GEMMs and attention) and leaves memory-bound
// kernels alone: 2.5 ms / 0.8 = 3.125 ms; 1 GB at 2 TB/s x 0.5 stays 1 ms.
TEST(MegatronStep, InStepRateSlowsTensorCoreKernelsOnly) {
  GpuSpec g = roundGpu();
  g.inStepRate = 0.8;
  const ComputeModel bf16(g), fp8(g, true);
  const Flops work{1.2e12, 0.5e12};
  EXPECT_EQ(bf16.computeTime(work), Time::ns(3125000));
  EXPECT_EQ(fp8.computeTime(work), Time::us(2500));  // 2 ms / 0.8
  EXPECT_EQ(bf16.memoryTime(1e9), Time::ms(1));
  EXPECT_EQ(bf16.computeTime(work, 1e9), Time::ns(4125000));
}

// Transformer Engine's fp8 casts and transposes, kernel by kernel, for h 1024, 8 heads of 128,
// ffn 4096, s 4096, b 2, tp 4 with sequence parallelism: T = 8192 tokens seen by the GEMMs,
// T_sp = 2048 held between them.
TEST(MegatronStep, Fp8CastAndTransposeBytesKernelByKernel) {
  const ModelSpec m = smallModel();
  const TransformerModel sp(m, 1, 4, true);
  const double t = 8192, tsp = 2048, h = 1024;
  const double qkvInputTranspose = t * h * (1 + 1);                 // fp8 in, fp8 out
  const double projInputCastTranspose = t * (h / 4) * (2 + 1 + 1);  // bf16 in, fp8 + fp8^T out
  const double layerNormFp8Output = -tsp * h * 1;                   // writes 1 byte instead of 2
  const double projGradCast = tsp * h * (2 + 1), projGradGatheredTranspose = t * h * (1 + 1);
  const double qkvGradCastTranspose = t * (3 * h / 4) * (2 + 1 + 1);
  EXPECT_DOUBLE_EQ(sp.attentionFp8CastBytes(2).forward,
                   qkvInputTranspose + projInputCastTranspose + layerNormFp8Output);
  EXPECT_DOUBLE_EQ(sp.attentionFp8CastBytes(2).backward,
                   projGradCast + projGradGatheredTranspose + qkvGradCastTranspose);
  const double fc1InputTranspose = t * h * 2, geluFp8Output = -t * (4096 / 4) * 1,
               fc2InputTranspose = t * (4096 / 4) * 2;
  EXPECT_DOUBLE_EQ(sp.mlpFp8CastBytes(2).forward,
                   fc1InputTranspose + geluFp8Output + fc2InputTranspose + layerNormFp8Output);
  EXPECT_DOUBLE_EQ(sp.mlpFp8CastBytes(2).backward, projGradCast + projGradGatheredTranspose);  // FC2's grad
  // Without sequence parallelism the gradient is cast and transposed in one kernel on all T.
  const TransformerModel noSp(m, 1, 4, false);
  EXPECT_DOUBLE_EQ(noSp.mlpFp8CastBytes(2).backward, t * h * (2 + 1 + 1));
  EXPECT_DOUBLE_EQ(noSp.attentionFp8CastBytes(2).forward, qkvInputTranspose + projInputCastTranspose - t * h);
}

// In an fp8 job the output layer (Megatron's own ColumnParallelLinear) stays bf16: the last
// stage's logits take 2 b s h V / tp / (peak x gemm efficiency) forward, twice that backward.
TEST(MegatronStep, Fp8JobKeepsTheOutputLayerInBf16) {
  TrainingSpec s = spec(1, 1, 1, 1, 2);
  s.model.vocab = 1024;
  s.dtype = "fp8";
  s.dtypeBytes = 1;
  s.gpu.peakFlops = 1000e12;
  s.gpu.gemmEfficiency = 0.5;
  s.gpu.peakFp8Flops = 2000e12;
  s.gpu.fp8GemmEfficiency = 0.5;
  const JobTrace t = build(s);
  const Program& prog = t.programs[0];
  std::vector<Time> logits;
  for (const TraceOp& op : prog.ops)
    if (op.type == OpType::Compute && prog.labels[op.label] == "logits") logits.push_back(op.duration);
  ASSERT_EQ(logits.size(), 2u);
  const double fwdSeconds = 2.0 * kSeq * kHidden * 1024 / (1000e12 * 0.5);
  EXPECT_EQ(logits[0], Time::ps(std::llround(fwdSeconds * 1e12)));
  EXPECT_EQ(logits[1], Time::ps(std::llround(2 * fwdSeconds * 1e12)));
}

// Megatron's defer_embedding_wgrad_compute with wgrad_deferral_limit 3 of m = 5 micro-batches
// (pp 2, tp 2): on the last stage the first 3 output-layer backwards are the data gradient only
// (2 b s h V / tp / rate, as the forward), the last 2 the full backward (twice that), and after
// the last backward one drain of the 3 deferred weight gradients (3 x the forward); the output
// layer's gradient bucket waits for the drain. The first stage is unchanged.
TEST(MegatronStep, DeferredOutputLayerWgradRunsInTheFlush) {
  TrainingSpec s = spec(2, 2, 2, 10, 2);
  s.model.vocab = 1024;
  s.gpu.peakFlops = 1000e12;
  s.gpu.gemmEfficiency = 0.5;
  s.parallelism.overlapGradReduce = true;
  s.parallelism.deferEmbeddingWgrad = true;
  s.parallelism.wgradDeferralLimit = 3;
  const JobTrace t = build(s);
  const Program& last = t.programs[1];
  const Time fwd = Time::ps(std::llround(2.0 * kSeq * kHidden * 1024 / 2 / (1000e12 * 0.5) * 1e12));
  std::vector<Time> logits;
  int drain = -1, lastBwd = -1;
  for (size_t i = 0; i < last.ops.size(); ++i) {
    const TraceOp& op = last.ops[i];
    if (op.type != OpType::Compute) continue;
    const std::string& label = last.labels[op.label];
    if (label == "logits") logits.push_back(op.duration);
    if (label == "bwd") lastBwd = static_cast<int>(i);
    if (label == "logits-wgrad") {
      EXPECT_EQ(drain, -1);
      drain = static_cast<int>(i);
      // Tolerance 3 ps: three weight gradients, each rounded to the picosecond on its own.
      EXPECT_NEAR(static_cast<double>(op.duration.picos()), static_cast<double>((fwd * 3).picos()), 3.0);
    }
  }
  // 1F1B on the last stage of 2: forward, backward, ... The backwards, in order: 3 deferred
  // (the data gradient, the forward's FLOPs), then 2 in full (twice).
  ASSERT_EQ(logits.size(), 10u);
  // Tolerance 1 ps: each duration is rounded to the picosecond on its own, and a deferred
  // backward is the full backward less the weight gradient (two roundings).
  for (size_t i = 0; i < logits.size(); ++i)
    EXPECT_NEAR(static_cast<double>(logits[i].picos()),
                static_cast<double>((i % 2 == 0 || i < 6 ? fwd : fwd * 2).picos()), 1.0)
        << "logits op " << i;
  ASSERT_GT(drain, lastBwd) << "the drain follows the stage's last backward";
  bool bucketWaits = false;
  for (const TraceOp& op : last.ops)
    if (op.type == OpType::Collective && last.labels[op.label] == "dp-allreduce")
      for (const uint32_t d : op.deps) bucketWaits = bucketWaits || d == static_cast<uint32_t>(drain);
  EXPECT_TRUE(bucketWaits) << "the output layer's gradient bucket waits for the deferred GEMMs";
  for (const TraceOp& op : t.programs[0].ops) EXPECT_NE(t.programs[0].labels[op.label], "logits-wgrad");
}

// Sequence parallelism without TP overlap, one layer (h 1024, 8 heads, s 4096) on tp 2: each
// backward block runs as Megatron's LinearWithGradAccumulationAndAsyncCommunication runs its
// column-parallel GEMM: the compute up to it, then the re-gather of the GEMM's input (b s h x 2
// bytes, on a side stream) beside its data gradient, then the data gradient's reduce-scatter
// beside its weight gradient (which waits for the gathered input); what follows waits for the
// reduce-scatter. Data and weight gradients of qkv: 2 s h 3h / tp FLOPs each; of fc1 (ffn 4096):
// 2 s h ffn / tp; at 1000 TFLOP/s x 0.8. sp_regather: false leaves all of it out.
TEST(MegatronStep, SequenceParallelBackwardReGathersBesideTheDataGradient) {
  TrainingSpec s = spec(2, 1, 1, 1, 1);
  s.model = smallModel();
  s.model.layers = 1;
  s.gpu = roundGpu();
  s.parallelism.sequenceParallel = true;
  const JobTrace t = build(s);
  const Program& prog = t.programs[0];
  const double rate = 1000e12 * 0.8;
  const Time qkvGrad = Time::ps(std::llround(2.0 * 4096 * 1024 * 3 * 1024 / 2 / rate * 1e12));
  const Time fc1Grad = Time::ps(std::llround(2.0 * 4096 * 1024 * 4096 / 2 / rate * 1e12));
  const Bytes act = 4096 * 1024 * 2;
  std::vector<size_t> regathers;
  for (size_t i = 0; i < prog.ops.size(); ++i)
    if (prog.labels[prog.ops[i].label] == "tp-regather") regathers.push_back(i);
  ASSERT_EQ(regathers.size(), 2u);  // the MLP block's backward, then the attention block's
  for (size_t k = 0; k < 2; ++k) {
    SCOPED_TRACE(k == 0 ? "mlp block" : "attention block");
    const size_t g = regathers[k];
    ASSERT_LT(g + 4, prog.ops.size());
    const TraceOp& pre = prog.ops[g - 1];
    const TraceOp& gather = prog.ops[g];
    const TraceOp& dgrad = prog.ops[g + 1];
    const TraceOp& reduce = prog.ops[g + 2];
    const TraceOp& wgrad = prog.ops[g + 3];
    const Time grad = k == 0 ? fc1Grad : qkvGrad;
    EXPECT_EQ(pre.type, OpType::Compute);
    EXPECT_EQ(gather.collective, CollectiveOp::AllGather);
    EXPECT_EQ(gather.bytes, act);
    EXPECT_EQ(prog.streams[gather.stream], "tp-async");
    EXPECT_EQ(gather.deps, (std::vector<uint32_t>{static_cast<uint32_t>(g - 1)}));
    EXPECT_EQ(dgrad.type, OpType::Compute);
    EXPECT_NEAR(static_cast<double>(dgrad.duration.picos()), static_cast<double>(grad.picos()), 1.0);
    EXPECT_EQ(reduce.collective, CollectiveOp::ReduceScatter);
    EXPECT_EQ(reduce.bytes, act);
    EXPECT_EQ(prog.streams[reduce.stream], "tp-async");
    EXPECT_EQ(reduce.deps, (std::vector<uint32_t>{static_cast<uint32_t>(g + 1), static_cast<uint32_t>(g)}));
    EXPECT_EQ(wgrad.type, OpType::Compute);
    EXPECT_NEAR(static_cast<double>(wgrad.duration.picos()), static_cast<double>(grad.picos()), 1.0);
    EXPECT_EQ(wgrad.deps, (std::vector<uint32_t>{static_cast<uint32_t>(g)}));
    // The block's three compute ops add up to its backward (a rounding of a picosecond each).
    const TransformerModel model(s.model, 2, 2, true);
    const ComputeModel cm(s.gpu);
    const Time whole = cm.computeTime(
        TransformerModel::backwardOf(k == 0 ? model.mlpForward(1) : model.attentionForward(1)));
    EXPECT_NEAR(static_cast<double>((pre.duration + dgrad.duration + wgrad.duration).picos()),
                static_cast<double>(whole.picos()), 3.0);
    // The next block's first op on the compute stream waits for the reduce-scatter (the
    // attention block is the layer's last: the optimizer follows it).
    for (size_t j = g + 4; k == 0 && j < prog.ops.size(); ++j)
      if (prog.ops[j].stream == pre.stream) {
        EXPECT_EQ(prog.ops[j].deps, (std::vector<uint32_t>{static_cast<uint32_t>(g + 2)}));
        break;
      }
  }
  s.spRegather = false;
  const JobTrace off = build(s);
  for (const TraceOp& op : off.programs[0].ops) EXPECT_NE(off.programs[0].labels[op.label], "tp-regather");
  for (const std::string& stream : off.programs[0].streams) EXPECT_NE(stream, "tp-async");
}

TEST(MegatronStep, RefusesCombinationsMegatronRefuses) {
  TrainingSpec s = spec(4, 1, 2, 2, 2);
  s.parallelism.tpCommOverlap = true;  // without sequence parallelism
  EXPECT_EQ(inputErrorKey([&] { build(s); }), "parallelism.tp_comm_overlap");
  TrainingSpec p = spec(1, 1, 2, 2, 2);
  p.parallelism.overlapParamGather = true;  // without the distributed optimizer
  EXPECT_EQ(inputErrorKey([&] { build(p); }), "parallelism.overlap_param_gather");
  TrainingSpec c = spec(1, 1, 2, 2, 2);
  c.gpu.commSmShare = 1.0;
  EXPECT_EQ(inputErrorKey([&] { build(c); }), "gpu.comm_sm_share");
  TrainingSpec r = spec(1, 1, 2, 2, 2);
  r.gpu.inStepRate = 1.25;  // faster in a step than alone
  EXPECT_EQ(inputErrorKey([&] { build(r); }), "gpu.in_step_rate");
  TrainingSpec d = spec(1, 1, 2, 2, 2);
  d.parallelism.deferEmbeddingWgrad = true;  // without pipeline parallelism
  EXPECT_EQ(inputErrorKey([&] { build(d); }), "parallelism.defer_embedding_wgrad_compute");
}

// Context parallelism: Megatron's rank order tp-cp-dp-pp, a "cp" ring per (tp, dp, pp) index,
// gradients reduced over dp x cp ranks, every activation message of s/cp tokens, and ring
// attention moving cp - 1 chunks of K and V per layer forward and twice that in backward: per
// step b (s/cp) 2 max(1, kv/tp) d_head x 2 bytes.
TEST(MegatronStep, ContextParallelRingAttention) {
  TrainingSpec s = spec(2, 2, 2, 4, 4);  // tp 2, pp 2, dp 2: m = 2 micro-batches, 2 layers a stage
  s.model.kvHeads = 2;
  s.parallelism.cp = 4;
  s.parallelism.sequenceParallel = true;
  const JobTrace t = build(s);
  EXPECT_EQ(t.ranks, 2u * 4 * 2 * 2);
  const int cpIndex = t.communicatorIndex("cp");
  ASSERT_GE(cpIndex, 0);
  const Communicator& cp = t.communicators[static_cast<size_t>(cpIndex)];
  // rank = t + 2 (c + 4 (d + 2 p)): rank 1 is (t 1, c 0, d 0, p 0); its ring is c = 0..3.
  EXPECT_EQ(cp.groups[cp.groupOfRank[1]], (std::vector<uint32_t>{1, 3, 5, 7}));
  const Communicator& dp = t.communicators[static_cast<size_t>(t.communicatorIndex("dp"))];
  EXPECT_EQ(dp.groups[dp.groupOfRank[1]].size(), 8u);  // dp 2 x cp 4
  const int64_t m = 2, layers = 2, tokens = kSeq / 4;
  const int64_t ring = tokens * 2 * 1 * (kHidden / 8) * 2;  // kv 2 over tp 2: one head of 64 each
  const int64_t act = tokens * kHidden * 2;
  for (const Program& prog : t.programs) {
    const auto bytes = bytesByLabel(prog);
    EXPECT_EQ(bytes.at("cp-send"), m * layers * 3 * (4 - 1) * ring);
    EXPECT_EQ(bytes.at("cp-recv"), m * layers * 3 * (4 - 1) * ring);
    // Sequence parallel: per layer and micro-batch 2 all-gathers forward, 2 backward.
    EXPECT_EQ(bytes.at("tp-allgather"), m * layers * 4 * act);
  }
  // Compute: every rank's GEMMs on s/cp tokens.
  TrainingSpec one = s;
  one.parallelism.cp = 1;
  const JobTrace t1 = build(one);
  auto mlpForward = [](const JobTrace& j) {
    const Program& p = j.programs[0];
    int seen = 0;
    for (const TraceOp& op : p.ops)
      if (op.type == OpType::Compute && p.labels[op.label] == "fwd" && ++seen == 2) return op.duration;
    return Time::zero();
  };
  EXPECT_NEAR(static_cast<double>(mlpForward(t).picos()) * 4, static_cast<double>(mlpForward(t1).picos()),
              4.0);
  // cp must divide the sequence.
  TrainingSpec bad = s;
  bad.parallelism.cp = 3;
  EXPECT_EQ(inputErrorKey([&] { build(bad); }), "parallelism.cp");
}

// Expert parallelism: ranks tp x cp x ep x dp x pp in Megatron's order tp-cp-ep-dp-pp; the
// expert-parallel group of a rank; dense gradients over dp x ep ranks, the experts' over dp;
// per layer and micro-batch a dispatch and a combine all-to-all forward and again backward, each
// of (b s / tp) top_k h x 2 bytes (sequence parallel); each rank's expert gradients are its
// experts / ep of the layer's experts; the router replaces the MLP among the dense parameters.
TEST(MegatronStep, ExpertParallelDispatchAndCombine) {
  TrainingSpec s = spec(2, 2, 2, 4, 4);  // tp 2, pp 2, dp 2, m = 2, 2 layers a stage
  s.model.experts = 8;
  s.model.topK = 2;
  s.model.moeFfnHidden = 256;
  s.parallelism.ep = 4;
  s.parallelism.etp = 1;  // whole experts on a rank (Megatron's default splits them over TP)
  s.parallelism.sequenceParallel = true;
  s.parallelism.distributedOptimizer = true;
  const JobTrace t = build(s);
  EXPECT_EQ(t.ranks, 2u * 4 * 2 * 2);
  const Communicator& ep = t.communicators[static_cast<size_t>(t.communicatorIndex("ep"))];
  // rank = t + 2 (e + 4 (d + 2 p)): rank 1 is (t 1, e 0, d 0, p 0).
  EXPECT_EQ(ep.groups[ep.groupOfRank[1]], (std::vector<uint32_t>{1, 3, 5, 7}));
  const Communicator& dp = t.communicators[static_cast<size_t>(t.communicatorIndex("dp"))];
  const Communicator& edp = t.communicators[static_cast<size_t>(t.communicatorIndex("edp"))];
  EXPECT_EQ(dp.groups[dp.groupOfRank[1]].size(), 8u);  // dp 2 x ep 4
  EXPECT_EQ(edp.groups[edp.groupOfRank[1]], (std::vector<uint32_t>{1, 9}));
  const int64_t m = 2, layers = 2;
  const int64_t dispatch = kSeq / 2 * 2 * kHidden * 2;  // tokens / tp x top 2 x h x 2 bytes
  const int64_t expertsPerRank = 8 / 4, expertParams = 2 * kHidden * 256;        // GELU experts: 2 h ffn
  const int64_t denseLayer = 4 * kHidden * kHidden + kHidden * 8 + 4 * kHidden;  // attention, router, norms
  for (const Program& prog : t.programs) {
    const auto bytes = bytesByLabel(prog);
    EXPECT_EQ(bytes.at("ep-dispatch"), m * layers * 2 * dispatch);
    EXPECT_EQ(bytes.at("ep-combine"), m * layers * 2 * dispatch);
    EXPECT_EQ(bytes.at("edp-reducescatter"), layers * expertsPerRank * expertParams * 2);
    EXPECT_EQ(bytes.at("dp-reducescatter"), layers * denseLayer / 2 * 2);
    EXPECT_EQ(bytes.count("tp-allreduce"), 0u);
    // Sequence parallelism's backward re-gather: qkv's input only (the experts get their tokens
    // by the all-to-all), b s h x 2 bytes per layer and micro-batch.
    EXPECT_EQ(bytes.at("tp-regather"), m * layers * kSeq * kHidden * 2);
  }
  // ep must divide the experts; experts with tp > 1 need sequence parallelism.
  TrainingSpec bad = s;
  bad.parallelism.ep = 3;
  EXPECT_EQ(inputErrorKey([&] { build(bad); }), "parallelism.ep");
  TrainingSpec noSp = s;
  noSp.parallelism.sequenceParallel = false;
  EXPECT_EQ(inputErrorKey([&] { build(noSp); }), "parallelism.sequence_parallel");
}

// Expert tensor parallelism at Megatron's default (etp = tp = 2): each rank holds half of each of
// its experts, so its expert gradients halve; around the experts the TP group all-gathers the
// tokens its ranks received and reduce-scatters the outputs, each of nccl-tests size tp x one
// rank's dispatched tokens (tokens / tp x top 2 x h x 2 bytes), once each way per pass; the
// all-to-alls and the dense gradients do not change.
TEST(MegatronStep, ExpertTensorParallelSplitsTheExpertsOverTp) {
  TrainingSpec s = spec(2, 2, 2, 4, 4);
  s.model.experts = 8;
  s.model.topK = 2;
  s.model.moeFfnHidden = 256;
  s.parallelism.ep = 4;
  s.parallelism.sequenceParallel = true;
  s.parallelism.distributedOptimizer = true;
  ASSERT_EQ(s.parallelism.etp, 0);  // the default: tp
  const JobTrace t = build(s);
  const int64_t m = 2, layers = 2, tp = 2;
  const int64_t dispatch = kSeq / 2 * 2 * kHidden * 2;
  const int64_t expertsPerRank = 8 / 4, expertParams = 2 * kHidden * 256;
  const int64_t denseLayer = 4 * kHidden * kHidden + kHidden * 8 + 4 * kHidden;
  for (const Program& prog : t.programs) {
    const auto bytes = bytesByLabel(prog);
    EXPECT_EQ(bytes.at("ep-dispatch"), m * layers * 2 * dispatch);
    EXPECT_EQ(bytes.at("etp-allgather"), m * layers * 2 * tp * dispatch);  // forward and backward
    EXPECT_EQ(bytes.at("etp-reducescatter"), m * layers * 2 * tp * dispatch);
    EXPECT_EQ(bytes.at("edp-reducescatter"), layers * expertsPerRank * expertParams / tp * 2);
    EXPECT_EQ(bytes.at("dp-reducescatter"), layers * denseLayer / 2 * 2);
  }
  TrainingSpec three = s;
  three.parallelism.etp = 3;
  EXPECT_EQ(inputErrorKey([&] { build(three); }), "parallelism.etp");
}

// Mixtral 8x7B as its paper gives it: 46.7B parameters in all (Mistral AI's figure), of which a
// token uses 12.9B (two of eight experts); tolerance 1% (biases and the exact vocabulary rounding
// left out).
TEST(MegatronStep, MixtralParameterCounts) {
  const auto preset = modelPreset("mixtral-8x7b");
  ASSERT_TRUE(preset);
  const TransformerModel m(*preset, 2, 1, false);
  EXPECT_NEAR(static_cast<double>(m.totalParams()), 46.7e9, 0.01 * 46.7e9);
  const double active =
      static_cast<double>(m.totalParams()) -
      static_cast<double>(m.layers()) * static_cast<double>(m.expertParamsPerLayer()) * 6 / 8;
  EXPECT_NEAR(active, 12.9e9, 0.01 * 12.9e9);
}

// FLOPs per token against the closed forms: forward + backward of a decoder is 6 N (N the GEMM
// parameters, the output layer's included) plus attention 12 l s h, halved (6 l s h) when causal;
// for GPT-3 175B that is Narayanan et al.'s 72 s l h^2 (1 + s / (6h) + V / (12 h l)) per sequence,
// which NVIDIA's table gives as 2.20e15 (three figures: within 0.5%).
TEST(MegatronStep, FlopsPerTokenAreSixNPlusAttention) {
  for (const bool causal : {false, true}) {
    ModelSpec m = *modelPreset("gpt3-175b");
    m.causal = causal;
    const TransformerModel model(m, 2, 1, false);
    const double s = m.seqLen, h = m.hidden, l = m.layers, v = m.vocab;
    const double perSequence =
        3.0 * (l * model.layerForward(1).total() + model.logitsForward(1).total());  // forward + 2 x backward
    const double n =
        l * static_cast<double>(model.attentionParamsPerLayer() + model.mlpParamsPerLayer()) + v * h;
    const double attention = (causal ? 6.0 : 12.0) * l * s * h;
    EXPECT_NEAR(perSequence / s, 6.0 * n + attention, 1e-9 * perSequence / s) << "causal " << causal;
    if (!causal) {
      EXPECT_NEAR(perSequence, 72.0 * s * l * h * h * (1 + s / (6 * h) + v / (12 * h * l)),
                  1e-9 * perSequence);
      EXPECT_NEAR(perSequence, 2.20e15, 0.005 * 2.20e15);
    }
  }
}

// The published MFU of the 128-GPU GPT-3 175B rows (validation/data/nvidia_dgxc_gpt3_175b_128gpu_
// step_times.csv) follows from their step times by the source's definition, MFU = GBS x 2.20e15 /
// step time / GPUs / peak (bf16 989, fp8 1979 TFLOPS): the table's mfu_percent to its rounding
// (two decimals; 0.02 points for the rounded FLOPs and step time).
TEST(MegatronStep, PublishedMfuFollowsFromTheStepTimes) {
  std::ifstream in(std::string(FABRICSIM_SOURCE_DIR) +
                   "/validation/data/nvidia_dgxc_gpt3_175b_128gpu_step_times.csv");
  ASSERT_TRUE(in);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("model,", 0) == 0) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 14u) << line;
    const double gpus = std::stod(f[2]), gbs = std::stod(f[9]), step = std::stod(f[11]),
                 mfu = std::stod(f[13]);
    const double peak = f[1] == "FP8" ? 1979e12 : 989e12;
    EXPECT_NEAR(100.0 * gbs * 2.20e15 / step / gpus / peak, mfu, 0.02) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 2);
}
