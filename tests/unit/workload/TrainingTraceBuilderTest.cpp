// TrainingTraceBuilder and JobTrace::finalize: rank order and communicators, per-GPU bytes of
// every communication type against closed forms written here independently, the 1F1B and
// interleaved orders, DP bucket dependencies, input errors and malformed traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
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

/// A small uniform model (no vocab): layers of 12h^2 + 4h parameters.
TrainingSpec smallSpec(int tp, int pp, int dp, int micro, int global, int layers = 8) {
  TrainingSpec spec;
  spec.model.layers = layers;
  spec.model.hidden = 512;
  spec.model.heads = 8;
  spec.model.seqLen = 256;
  spec.parallelism.tp = tp;
  spec.parallelism.pp = pp;
  spec.parallelism.dp = dp;
  spec.parallelism.microBatch = micro;
  spec.parallelism.globalBatch = global;
  testsupport::pinClosedFormStep(spec);
  return spec;
}

JobTrace build(const TrainingSpec& spec) {
  return buildTrainingTrace(spec, CollectiveTuning{}, "job");
}

/// Sum of the bytes of one program's ops, by label.
std::map<std::string, int64_t> bytesByLabel(const Program& prog) {
  std::map<std::string, int64_t> out;
  for (const TraceOp& op : prog.ops) {
    if (op.type != OpType::Compute) out[prog.labels[op.label]] += op.bytes;
  }
  return out;
}

std::map<std::string, int> countByLabel(const Program& prog) {
  std::map<std::string, int> out;
  for (const TraceOp& op : prog.ops) ++out[prog.labels[op.label]];
  return out;
}

/// The compute stream's passes as a string: 'F' per forward, 'B' per backward of a stage whose
/// chunks have one layer and tp = 1 (two "fwd" ops per forward, two "bwd" per backward).
std::string passes(const Program& prog) {
  std::string out;
  std::string prev;
  int run = 0;
  for (const TraceOp& op : prog.ops) {
    if (op.type != OpType::Compute) continue;
    const std::string& l = prog.labels[op.label];
    if (l != "fwd" && l != "bwd") continue;
    if (l != prev) run = 0;
    if (run % 2 == 0) out += l == "fwd" ? 'F' : 'B';
    ++run;
    prev = l;
  }
  return out;
}

int warmupForwards(const std::string& p) {
  const auto pos = p.find('B');
  return static_cast<int>(pos == std::string::npos ? p.size() : pos);
}

std::string inputErrorKey(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.diagnostics().at(0).key;
  }
  return "<no InputError>";
}

}  // namespace

TEST(TrainingTraceBuilder, MegatronRankOrderAndCommunicators) {
  const JobTrace t = build(smallSpec(2, 2, 2, 1, 4));
  ASSERT_EQ(t.ranks, 8u);
  ASSERT_EQ(t.programs.size(), 2u);
  const Communicator& tp = t.communicators.at(t.communicatorIndex("tp"));
  const Communicator& dp = t.communicators.at(t.communicatorIndex("dp"));
  const Communicator& pp = t.communicators.at(t.communicatorIndex("pp"));
  EXPECT_EQ(t.communicatorIndex("nope"), -1);
  // rank 5 = tp_idx 1 + 2 * (dp_idx 0 + 2 * pp_idx 1)
  EXPECT_EQ(tp.groups[tp.groupOfRank[5]], (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(dp.groups[dp.groupOfRank[5]], (std::vector<uint32_t>{5, 7}));
  EXPECT_EQ(pp.groups[pp.groupOfRank[5]], (std::vector<uint32_t>{1, 5}));
  EXPECT_EQ(pp.indexInGroup[5], 1u);
  EXPECT_EQ(tp.indexInGroup[5], 1u);
  EXPECT_EQ(dp.indexInGroup[5], 0u);
  for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(t.programOfRank[r], r / 4);
  EXPECT_TRUE(t.placement.empty());
  EXPECT_EQ(t.microbatches, 2);
  EXPECT_EQ(t.pipelineStages, 2);
  EXPECT_NE(t.generator.find("tp2 pp2 dp2"), std::string::npos);
}

struct BytesCase {
  int tp, pp, dp, micro, global;
  bool sp, recompute, stage, distOpt, interleaved;
  Bytes bucket;
};

class TrainingBytes : public ::testing::TestWithParam<BytesCase> {};

TEST_P(TrainingBytes, PerGpuBytesMatchClosedForm) {
  const BytesCase c = GetParam();
  const int layers = 24;
  TrainingSpec spec = smallSpec(c.tp, c.pp, c.dp, c.micro, c.global, layers);
  spec.parallelism.sequenceParallel = c.sp;
  spec.parallelism.recompute = c.recompute ? "full" : "none";
  spec.parallelism.distributedOptimizer = c.distOpt;
  spec.tpGranularity = c.stage ? "stage" : "layer";
  spec.dpBucketBytes = c.bucket;
  const int v = c.interleaved ? 2 : 1;
  if (c.interleaved) {
    spec.parallelism.schedule = "interleaved";
    spec.parallelism.virtualStages = v;
  }
  const JobTrace t = build(spec);

  // Closed forms, written from the model's definition.
  const int64_t h = 512, s = 256, dtype = 2;
  const int64_t m = c.global / (c.micro * c.dp);
  const int64_t act = c.micro * s * h * dtype;  // one TP collective
  const int64_t layersPerStage = layers / c.pp;
  const int64_t tpCollectivesPerLayer = 4 + (c.recompute ? 2 : 0);
  const int64_t tpBytes = c.tp > 1 ? m * layersPerStage * tpCollectivesPerLayer * act : 0;
  const int64_t ppMsg = act / c.tp;
  const int64_t stageParams = layersPerStage * (12 * h * h + 4 * h);
  const int64_t gradBytes = c.dp > 1 ? stageParams / c.tp * dtype : 0;
  ASSERT_EQ(t.microbatches, m);

  for (int stage = 0; stage < c.pp; ++stage) {
    const Program& prog = t.programs[stage];
    auto bytes = bytesByLabel(prog);
    SCOPED_TRACE("stage " + std::to_string(stage));
    if (c.sp) {
      // Megatron re-gathers each column-parallel GEMM's sharded input (qkv's, fc1's) for its
      // weight gradient (Korthikanti et al. 2022, section 4.2.2): two more all-gathers of one
      // activation per layer and backward, merged into the stage's gather at stage granularity.
      const int64_t regather = c.tp > 1 ? m * layersPerStage * 2 * act : 0;
      EXPECT_EQ(bytes["tp-reducescatter"], tpBytes);
      EXPECT_EQ(bytes["tp-allgather"], tpBytes + (c.stage ? regather : 0));
      EXPECT_EQ(bytes["tp-regather"], c.stage ? 0 : regather);
      EXPECT_EQ(bytes["tp-allreduce"], 0);
    } else {
      EXPECT_EQ(bytes["tp-allreduce"], tpBytes);
      EXPECT_EQ(bytes["tp-reducescatter"] + bytes["tp-allgather"], 0);
    }
    // Each of the v chunks sends forward unless it is the last virtual stage, backward
    // unless it is the first.
    const int64_t fwdSends = v * m - (stage == c.pp - 1 ? m : 0);
    const int64_t bwdSends = v * m - (stage == 0 ? m : 0);
    EXPECT_EQ(bytes["pp-send"], (fwdSends + bwdSends) * ppMsg);
    EXPECT_EQ(bytes["pp-recv"], (fwdSends + bwdSends) * ppMsg);
    if (c.distOpt) {
      EXPECT_EQ(bytes["dp-reducescatter"], gradBytes);
      EXPECT_EQ(bytes["dp-allgather"], gradBytes);
      EXPECT_EQ(bytes["dp-allreduce"], 0);
    } else {
      EXPECT_EQ(bytes["dp-allreduce"], gradBytes);
    }
    const int bucket = c.bucket > 0 ? static_cast<int>(c.bucket) : 80'000'000;
    const auto counts = countByLabel(prog);
    const std::string dpLabel = c.distOpt ? "dp-reducescatter" : "dp-allreduce";
    const int expectedBuckets = c.dp > 1 ? static_cast<int>((gradBytes + bucket - 1) / bucket) : 0;
    EXPECT_EQ(counts.count(dpLabel) ? counts.at(dpLabel) : 0, expectedBuckets);
    EXPECT_EQ(counts.at("optimizer"), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, TrainingBytes,
    ::testing::Values(BytesCase{2, 4, 2, 1, 16, false, false, false, false, false, 1'000'000},
                      BytesCase{4, 2, 4, 2, 32, true, false, false, false, false, 0},
                      BytesCase{2, 4, 2, 1, 16, false, true, false, true, false, 3'000'000},
                      BytesCase{2, 3, 2, 1, 12, true, true, true, false, false, 2'000'000},
                      BytesCase{1, 1, 8, 1, 16, false, false, false, true, false, 4'000'000},
                      BytesCase{8, 1, 1, 1, 4, false, true, false, false, false, 0},
                      BytesCase{2, 4, 2, 1, 16, false, false, false, false, true, 1'000'000},
                      BytesCase{2, 3, 2, 2, 24, true, true, true, true, true, 500'000}));

TEST(TrainingTraceBuilder, OneFOneBOrderForFourStagesEightMicrobatches) {
  const JobTrace t = build(smallSpec(1, 4, 1, 1, 8, 4));
  ASSERT_EQ(t.programs.size(), 4u);
  for (int s = 0; s < 4; ++s) {
    const Program& prog = t.programs[s];
    const int w = 4 - s - 1;
    std::string expected(w, 'F');
    for (int i = 0; i < 8 - w; ++i) expected += "FB";
    expected += std::string(w, 'B');
    EXPECT_EQ(passes(prog), expected) << "stage " << s;
    // Warm-up forwards, then the steady phase starts with a forward before its backward.
    EXPECT_EQ(warmupForwards(passes(prog)), w + 1);

    const TraceOp& first = prog.ops.front();
    if (s == 0) {
      EXPECT_EQ(first.type, OpType::Compute);
      EXPECT_EQ(prog.labels[first.label], "fwd");
      EXPECT_TRUE(first.deps.empty());
    } else {
      EXPECT_EQ(first.type, OpType::Recv);
      EXPECT_EQ(prog.streams[first.stream], "pp-recv-fwd");
      EXPECT_EQ(first.peerOffset, -1);
      EXPECT_EQ(prog.ops[1].deps, (std::vector<uint32_t>{0}));  // the first forward waits for it
    }
    const TraceOp& last = prog.ops.back();
    EXPECT_EQ(prog.labels[last.label], "optimizer");
    EXPECT_EQ(prog.streams[last.stream], "compute");
    // Every send depends on the op just before it, the end of its pass, and runs on its
    // direction's stream.
    for (size_t i = 0; i < prog.ops.size(); ++i) {
      const TraceOp& op = prog.ops[i];
      if (op.type != OpType::Send) continue;
      EXPECT_EQ(op.deps, (std::vector<uint32_t>{static_cast<uint32_t>(i - 1)}));
      EXPECT_EQ(prog.streams[op.stream], op.peerOffset > 0 ? "pp-send-fwd" : "pp-send-bwd");
    }
    const auto counts = countByLabel(prog);
    EXPECT_EQ(counts.count("pp-send") ? counts.at("pp-send") : 0, 8 * ((s < 3) + (s > 0)));
  }
}

TEST(TrainingTraceBuilder, FewerMicrobatchesThanStagesWarmsUpAll) {
  const JobTrace t = build(smallSpec(1, 4, 1, 1, 2, 4));
  EXPECT_EQ(passes(t.programs[0]), "FFBB");
  EXPECT_EQ(passes(t.programs[3]), "FBFB");
}

TEST(TrainingTraceBuilder, InterleavedOrder) {
  TrainingSpec spec = smallSpec(1, 4, 1, 1, 8, 8);
  spec.parallelism.schedule = "interleaved";
  spec.parallelism.virtualStages = 2;
  const JobTrace t = build(spec);
  for (int s = 0; s < 4; ++s) {
    const std::string p = passes(t.programs[s]);
    EXPECT_EQ(static_cast<int>(std::count(p.begin(), p.end(), 'F')), 16);
    EXPECT_EQ(static_cast<int>(std::count(p.begin(), p.end(), 'B')), 16);
    // (p - s - 1) * 2 + (v - 1) * p warm-up forwards, then the steady phase's first forward.
    EXPECT_EQ(warmupForwards(p), (4 - s - 1) * 2 + 4 + 1) << "stage " << s;
  }
  // Stage 0 receives forward activations for chunk 1 from the last stage (offset -1 wraps).
  const auto counts0 = countByLabel(t.programs[0]);
  // Forward receives for chunk 1 only (chunk 0 is the first virtual stage); backward for both.
  EXPECT_EQ(counts0.at("pp-recv"), 8 + 16);
  // Last stage: forward sends for chunk 0 only (8), backward sends for both chunks (16).
  const auto counts3 = countByLabel(t.programs[3]);
  EXPECT_EQ(counts3.at("pp-send"), 8 + 16);
}

TEST(TrainingTraceBuilder, DataParallelBucketsOverlapBackward) {
  TrainingSpec spec = smallSpec(1, 2, 4, 1, 16, 8);
  const int64_t h = 512;
  const int64_t layerBytes = (12 * h * h + 4 * h) * 2;
  spec.dpBucketBytes = layerBytes;  // one bucket per layer
  const JobTrace t = build(spec);
  for (const Program& prog : t.programs) {
    std::vector<uint32_t> deps;
    uint32_t lastBwd = 0;
    for (size_t i = 0; i < prog.ops.size(); ++i) {
      const TraceOp& op = prog.ops[i];
      if (op.type == OpType::Compute && prog.labels[op.label] == "bwd") lastBwd = static_cast<uint32_t>(i);
      if (op.type == OpType::Collective && prog.labels[op.label] == "dp-allreduce") {
        EXPECT_EQ(prog.streams[op.stream], "dp");
        ASSERT_EQ(op.deps.size(), 1u);
        EXPECT_EQ(prog.labels[prog.ops[op.deps[0]].label], "bwd");
        deps.push_back(op.deps[0]);
      }
    }
    ASSERT_EQ(deps.size(), 4u);  // 4 layers per stage
    for (size_t i = 1; i < deps.size(); ++i) EXPECT_LT(deps[i - 1], deps[i]);
    EXPECT_LT(deps.front(), lastBwd);  // the first bucket overlaps the rest of the backward
    EXPECT_EQ(deps.back(), lastBwd);
    const TraceOp& opt = prog.ops.back();
    EXPECT_EQ(prog.labels[opt.label], "optimizer");
    EXPECT_EQ(opt.deps.size(), 4u);
  }
}

TEST(TrainingTraceBuilder, VocabPutsEmbeddingFirstAndLogitsLast) {
  TrainingSpec spec = smallSpec(2, 2, 2, 1, 4, 4);
  spec.model.vocab = 1000;
  const JobTrace t = build(spec);
  const auto first = countByLabel(t.programs[0]);
  const auto last = countByLabel(t.programs[1]);
  EXPECT_EQ(first.at("embedding"), 2 * 2);  // forward and backward of 2 micro-batches
  EXPECT_EQ(first.count("logits"), 0u);
  EXPECT_EQ(last.at("logits"), 2 * 2);
  EXPECT_EQ(last.count("embedding"), 0u);
  const int64_t h = 512, layerParams = 12 * h * h + 4 * h;
  EXPECT_EQ(bytesByLabel(t.programs[0])["dp-allreduce"], (2 * layerParams + 1000 * h) / 2 * 2);
  EXPECT_EQ(bytesByLabel(t.programs[1])["dp-allreduce"], (2 * layerParams + 1000 * h) / 2 * 2);
  // TP: 4 all-reduces per layer and micro-batch, plus the vocab-parallel embedding's forward
  // all-reduce on the first stage and the output layer's backward all-reduce on the last.
  const int64_t act = 256 * h * 2, m = 2;
  EXPECT_EQ(bytesByLabel(t.programs[0])["tp-allreduce"], m * (2 * 4 + 1) * act);
  EXPECT_EQ(bytesByLabel(t.programs[1])["tp-allreduce"], m * (2 * 4 + 1) * act);

  // Sequence parallel: the embedding's reduce-scatter (all-gather in backward), the all-gather
  // before the output layer (reduce-scatter in backward).
  spec.parallelism.sequenceParallel = true;
  const JobTrace sp = build(spec);
  for (const Program& prog : sp.programs) {
    auto bytes = bytesByLabel(prog);
    EXPECT_EQ(bytes["tp-reducescatter"], m * (2 * 4 + 1) * act);
    EXPECT_EQ(bytes["tp-allgather"], m * (2 * 4 + 1) * act);
    EXPECT_EQ(bytes["tp-allreduce"], 0);
  }
}

TEST(TrainingTraceBuilder, AnalyticMicrobatchTimes) {
  TrainingSpec spec = smallSpec(2, 2, 1, 1, 4, 8);
  spec.parallelism.recompute = "full";
  const JobTrace t = build(spec);
  const TransformerModel model(spec.model, 2, 2, false);
  const ComputeModel cm(spec.gpu);
  const Time fwd = cm.computeTime(model.attentionForward(1)) + cm.computeTime(model.mlpForward(1));
  const Time bwd = cm.computeTime(TransformerModel::backwardOf(model.attentionForward(1))) +
                   cm.computeTime(TransformerModel::backwardOf(model.mlpForward(1)));
  EXPECT_EQ(t.microbatchForward, fwd * 4);
  EXPECT_EQ(t.microbatchBackward, (bwd + fwd) * 4);
  // The trace's compute ops add up to the same per micro-batch.
  Time sum;
  for (const TraceOp& op : t.programs[0].ops) {
    const std::string& l = t.programs[0].labels[op.label];
    if (op.type == OpType::Compute && (l == "fwd" || l == "bwd" || l == "recompute")) sum += op.duration;
  }
  EXPECT_EQ(sum, (t.microbatchForward + t.microbatchBackward) * 4);
}

TEST(TrainingTraceBuilder, RejectsBadSpecs) {
  EXPECT_EQ(inputErrorKey([] { build(smallSpec(1, 2, 2, 1, 5)); }), "parallelism.global_batch");
  // Fewer layers than virtual stages: a stage without layers.
  EXPECT_EQ(inputErrorKey([] { build(smallSpec(1, 4, 1, 1, 4, 3)); }), "model.layers");
  EXPECT_EQ(inputErrorKey([] {
              TrainingSpec s = smallSpec(1, 4, 1, 1, 4, 7);
              s.parallelism.schedule = "interleaved";
              s.parallelism.virtualStages = 2;
              build(s);
            }),
            "model.layers");
  EXPECT_EQ(inputErrorKey([] { build(smallSpec(3, 1, 1, 1, 4)); }), "parallelism.tp");
  EXPECT_EQ(inputErrorKey([] { build(smallSpec(1, 1, 4, 1, 2)); }), "parallelism.global_batch");
  EXPECT_EQ(inputErrorKey([] {
              TrainingSpec s = smallSpec(1, 4, 1, 1, 6, 8);
              s.parallelism.schedule = "interleaved";
              s.parallelism.virtualStages = 2;
              build(s);
            }),
            "parallelism.global_batch");
  EXPECT_EQ(inputErrorKey([] {
              TrainingSpec s = smallSpec(1, 2, 1, 1, 4);
              s.parallelism.recompute = "selective";
              build(s);
            }),
            "parallelism.recompute");
}

// Issue 21: sizes no job has overflowed the step's arithmetic (4 x hidden as an int) or the
// picosecond clock (a rank's compute summed past 106 days: a JCT of 0 ps, exit 0). Each is an
// input error at the key: a dimension past its bound, a kernel or a rank's sum past the clock.
TEST(TrainingTraceBuilder, SizesBeyondAnyJobAreInputErrors) {
  EXPECT_EQ(inputErrorKey([] {
              TrainingSpec s = smallSpec(1, 1, 2, 1, 2);
              s.model.hidden = 1 << 30;
              build(s);
            }),
            "model.hidden");
  EXPECT_EQ(inputErrorKey([] {
              TrainingSpec s = smallSpec(1, 1, 2, 1, 2);
              s.model.layers = 2'000'000'000;
              build(s);
            }),
            "model.layers");
  // Within every bound, but one rank's compute exceeds the clock's 9.2e6 s: 6 x 6.6e12 parameters
  // (12 h^2 L) x 6.4e7 tokens is 2.5e21 FLOPs per iteration, attention's s^2 term 6e21 more, at
  // about 1e15 FLOP/s some 9e6 s; three iterations 2.7e7 s.
  EXPECT_EQ(inputErrorKey([] {
              TrainingSpec s = smallSpec(1, 1, 2, 64, 128);
              s.model.layers = 128;
              s.model.hidden = 65536;
              s.model.heads = 64;
              s.model.seqLen = 1'000'000;
              s.iterations = 3;
              build(s);
            }),
            "model");
}

TEST(TrainingTraceBuilder, UnevenLayerSplitRule) {
  EXPECT_EQ(layersOfVirtualStages(8, 4), (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(layersOfVirtualStages(10, 4), (std::vector<int>{2, 3, 3, 2}));
  EXPECT_EQ(layersOfVirtualStages(11, 8), (std::vector<int>{1, 2, 2, 2, 1, 1, 1, 1}));
  // r = V - 1: the middle stages are full, the one left over goes to the first.
  EXPECT_EQ(layersOfVirtualStages(15, 8), (std::vector<int>{2, 2, 2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(layersOfVirtualStages(3, 2), (std::vector<int>{2, 1}));
  EXPECT_EQ(layersOfVirtualStages(4, 4), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(layersOfVirtualStages(5, 1), (std::vector<int>{5}));
  for (int v = 1; v <= 20; ++v) {
    for (int layers = v; layers <= 3 * v + 1; ++layers) {
      const std::vector<int> split = layersOfVirtualStages(layers, v);
      ASSERT_EQ(static_cast<int>(split.size()), v);
      int sum = 0;
      for (const int n : split) {
        EXPECT_TRUE(n == layers / v || n == layers / v + 1);
        sum += n;
      }
      EXPECT_EQ(sum, layers);
      EXPECT_EQ(split.back(), layers / v);
    }
  }
}

TEST(TrainingTraceBuilder, Llama405BOverSixteenStages) {
  TrainingSpec spec;
  spec.model = *modelPreset("llama3-405b");
  spec.parallelism.tp = 8;
  spec.parallelism.pp = 16;
  spec.parallelism.dp = 2;
  spec.parallelism.microBatch = 1;
  spec.parallelism.globalBatch = 8;
  spec.parallelism.sequenceParallel = true;
  spec.tpGranularity = "stage";
  testsupport::pinClosedFormStep(spec);
  std::vector<int> expected(16, 8);
  expected.front() = expected.back() = 7;  // Llama 3 paper: one layer fewer on the first and last
  EXPECT_EQ(layersOfVirtualStages(126, 16), expected);

  const JobTrace t = build(spec);
  ASSERT_EQ(t.programs.size(), 16u);
  const TransformerModel model(spec.model, 2, 8, true);
  const ComputeModel cm(spec.gpu);
  const int64_t m = 4;
  const Bytes act = model.tpCollectiveBytes(1);
  int64_t paramsSum = 0;
  for (int s = 0; s < 16; ++s) {
    SCOPED_TRACE("stage " + std::to_string(s));
    const Program& prog = t.programs[static_cast<size_t>(s)];
    const int64_t n = expected[static_cast<size_t>(s)];
    const int64_t params = n * model.paramsPerLayer() + (s == 0 ? model.embeddingParams() : 0) +
                           (s == 15 ? model.outputLayerParams() : 0);
    paramsSum += params;
    auto bytes = bytesByLabel(prog);
    // Per-GPU DP bytes follow the stage's parameter count.
    EXPECT_EQ(bytes["dp-allreduce"], model.gradientBytesPerRank(params));
    // Per micro-batch, merged: 2 n activations gathered in forward, 2 n in backward and the 2 n
    // re-gathers of the column-parallel GEMMs' inputs.
    const int64_t vocabGathers = (s == 0 || s == 15) ? 1 : 0;
    EXPECT_EQ(bytes["tp-allgather"], m * (6 * n + vocabGathers) * act);
    for (const TraceOp& op : prog.ops) {
      if (op.type == OpType::Compute && prog.labels[op.label] == "fwd") {
        EXPECT_EQ(op.duration, cm.computeTime(model.layerForward(1) * n));
      }
    }
  }
  EXPECT_EQ(paramsSum, model.totalParams());
  // The slowest stages hold 8 layers.
  EXPECT_EQ(t.microbatchForward, cm.computeTime(model.layerForward(1) * 8));
  EXPECT_EQ(t.microbatchBackward, cm.computeTime(TransformerModel::backwardOf(model.layerForward(1)) * 8));
}

TEST(TrainingTraceBuilder, UnevenStagesPerGpuBytes) {
  // 10 layers over 4 stages: 2, 3, 3, 2.
  TrainingSpec spec = smallSpec(2, 4, 2, 1, 8, 10);
  spec.dpBucketBytes = 1'000'000;
  const JobTrace t = build(spec);
  const int64_t h = 512, act = 256 * h * 2, m = 4, layerParams = 12 * h * h + 4 * h;
  const std::vector<int64_t> layers = {2, 3, 3, 2};
  for (int s = 0; s < 4; ++s) {
    SCOPED_TRACE("stage " + std::to_string(s));
    const Program& prog = t.programs[static_cast<size_t>(s)];
    const int64_t n = layers[static_cast<size_t>(s)];
    auto bytes = bytesByLabel(prog);
    EXPECT_EQ(bytes["tp-allreduce"], m * n * 4 * act);
    const int64_t grad = n * layerParams / 2 * 2;
    EXPECT_EQ(bytes["dp-allreduce"], grad);
    const auto counts = countByLabel(prog);
    EXPECT_EQ(counts.at("dp-allreduce"), (grad + 999'999) / 1'000'000);
    EXPECT_EQ(counts.at("fwd"), static_cast<int>(2 * n * m));
    EXPECT_EQ(counts.at("bwd"), static_cast<int>(2 * n * m));
  }
  const TransformerModel model(spec.model, 2, 2, false);
  const ComputeModel cm(spec.gpu);
  const Time fwd = cm.computeTime(model.attentionForward(1)) + cm.computeTime(model.mlpForward(1));
  EXPECT_EQ(t.microbatchForward, fwd * 3);
}

TEST(TrainingTraceBuilder, InterleavedWithRemainder) {
  // 11 layers over pp 4 * v 2 = 8 virtual stages: 1, 2, 2, 2 | 1, 1, 1, 1. Stage s holds
  // virtual stages s and 4 + s.
  TrainingSpec spec = smallSpec(1, 4, 2, 1, 16, 11);
  spec.parallelism.schedule = "interleaved";
  spec.parallelism.virtualStages = 2;
  spec.dpBucketBytes = 100'000'000;  // one bucket per stage
  const JobTrace t = build(spec);
  const int64_t h = 512, m = 8, layerParams = 12 * h * h + 4 * h;
  const std::vector<std::vector<int>> chunks = {{1, 1}, {2, 1}, {2, 1}, {2, 1}};
  for (int s = 0; s < 4; ++s) {
    SCOPED_TRACE("stage " + std::to_string(s));
    const Program& prog = t.programs[static_cast<size_t>(s)];
    const int64_t n = chunks[static_cast<size_t>(s)][0] + chunks[static_cast<size_t>(s)][1];
    const auto counts = countByLabel(prog);
    EXPECT_EQ(counts.at("fwd"), static_cast<int>(2 * n * m));
    EXPECT_EQ(counts.at("bwd"), static_cast<int>(2 * n * m));
    EXPECT_EQ(bytesByLabel(prog)["dp-allreduce"], n * layerParams * 2);
    // The pipeline messages do not depend on the split.
    const int64_t sends = 2 * m * 2 - (s == 0 ? m : 0) - (s == 3 ? m : 0);
    EXPECT_EQ(counts.at("pp-send"), static_cast<int>(sends));
    // The single DP bucket waits for the last backward op of the stage.
    uint32_t lastBwd = 0;
    for (size_t i = 0; i < prog.ops.size(); ++i) {
      if (prog.labels[prog.ops[i].label] == "bwd") lastBwd = static_cast<uint32_t>(i);
    }
    for (const TraceOp& op : prog.ops) {
      if (prog.labels[op.label] == "dp-allreduce") {
        EXPECT_EQ(op.deps, (std::vector<uint32_t>{lastBwd}));
      }
    }
  }
  // The slowest stages hold 3 layers.
  const TransformerModel model(spec.model, 2, 1, false);
  const ComputeModel cm(spec.gpu);
  const Time fwd = cm.computeTime(model.attentionForward(1)) + cm.computeTime(model.mlpForward(1));
  EXPECT_EQ(t.microbatchForward, fwd * 3);
}

namespace {

/// A valid two-rank trace: one program sending to and receiving from the peer.
JobTrace tinyTrace() {
  JobTrace t;
  t.ranks = 2;
  t.communicators.push_back({"pair", {{0, 1}}, {}, {}});
  Program p;
  const uint8_t s = p.stream("compute");
  TraceOp c;
  c.stream = s;
  c.duration = Time::ns(5);
  c.label = p.label("fwd");
  p.ops.push_back(c);
  TraceOp send;
  send.type = OpType::Send;
  send.stream = p.stream("send");
  send.peerOffset = 1;
  send.bytes = 100;
  send.label = p.label("pp-send");
  send.deps = {0};
  p.ops.push_back(send);
  t.programs.push_back(p);
  t.programOfRank = {0, 0};
  return t;
}

}  // namespace

TEST(JobTrace, InterningAndFinalize) {
  Program p;
  EXPECT_EQ(p.label("a"), 0u);
  EXPECT_EQ(p.label("b"), 1u);
  EXPECT_EQ(p.label("a"), 0u);
  EXPECT_EQ(p.stream("x"), 0);
  EXPECT_EQ(p.stream("x"), 0);
  JobTrace t = tinyTrace();
  EXPECT_NO_THROW(t.finalize("t.json"));
  EXPECT_EQ(t.communicators[0].indexInGroup, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(t.communicators[0].groupOfRank, (std::vector<uint32_t>{0, 0}));
}

TEST(JobTrace, FinalizeRejectsMalformedTraces) {
  auto keyOf = [](const std::function<void(JobTrace&)>& breakIt) {
    JobTrace t = tinyTrace();
    breakIt(t);
    return inputErrorKey([&] { t.finalize("t.json"); });
  };
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programs[0].ops[0].deps = {0}; }), "programs[0].ops[0].deps");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programs[0].ops[1].deps = {5}; }), "programs[0].ops[1].deps");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programs[0].ops[1].stream = 7; }), "programs[0].ops[1].stream");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programs[0].ops[1].label = 9; }), "programs[0].ops[1].label");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programs[0].ops[1].comm = 3; }), "programs[0].ops[1].comm");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programs[0].ops[1].peerOffset = 0; }), "programs[0].ops[1].offset");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programs[0].ops[1].peerOffset = 2; }), "programs[0].ops[1].offset");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programOfRank = {0}; }), "program_of_rank");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.programOfRank = {0, 1}; }), "program_of_rank[1]");
  EXPECT_EQ(keyOf([](JobTrace& t) {
              t.communicators[0].groups = {{0, 1}, {1}};
            }),
            "communicators[0].groups[1][0]");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.communicators[0].groups = {{0}}; }), "communicators[0].groups");
  EXPECT_EQ(keyOf([](JobTrace& t) {
              t.communicators[0].groups = {{0, 2}};
            }),
            "communicators[0].groups[0][1]");
  EXPECT_EQ(keyOf([](JobTrace& t) { t.iterations = 0; }), "iterations");
}
