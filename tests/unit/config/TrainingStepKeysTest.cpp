// WorkloadLoader: the training keys of Megatron's step (context and expert parallelism, experts,
// gradient dtype, overlap switches, tied embeddings, causal attention, element-wise kernels, the
// GPU's fp8 peak, memory efficiency and communication share) read into the spec, and their bad
// values and combinations refused with the file, line and key.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/workload/TrainingTraceBuilder.h"

namespace fabricsim {
namespace {

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml) {
  try {
    parseWorkloadYaml(yaml, "w.yaml", {});
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

TEST(TrainingStepKeys, ReadIntoTheSpec) {
  const WorkloadSpec w = parseWorkloadYaml(R"(kind: training
model: {preset: gpt3-175b, causal: true, tied_embeddings: true}
gpu: {preset: h100-sxm, peak_fp8: 1900TFLOPS, comm_sm_share: 0.25, in_step_rate: 0.8,
      efficiency: {gemm: 0.75, fp8_gemm: 0.6, attention: 0.4, memory: 0.5}}
parallelism: {tp: 4, pp: 8, dp: 4, global_batch: 256, sequence_parallel: true, distributed_optimizer: true,
              overlap_grad_reduce: false, overlap_param_gather: true, tp_comm_overlap: true,
              defer_embedding_wgrad_compute: true, wgrad_deferral_limit: 22}
grad_reduce_dtype: fp32
elementwise: true
sp_regather: false
)",
                                           "w.yaml", {});
  const TrainingSpec& t = w.training;
  EXPECT_TRUE(t.model.causal);
  EXPECT_TRUE(t.model.tiedEmbeddings);
  EXPECT_DOUBLE_EQ(t.gpu.peakFp8Flops, 1900e12);
  EXPECT_DOUBLE_EQ(t.gpu.commSmShare, 0.25);
  EXPECT_DOUBLE_EQ(t.gpu.inStepRate, 0.8);
  EXPECT_DOUBLE_EQ(t.gpu.fp8GemmEfficiency, 0.6);
  EXPECT_DOUBLE_EQ(t.gpu.memoryEfficiency, 0.5);
  EXPECT_FALSE(t.parallelism.overlapGradReduce);
  EXPECT_TRUE(t.parallelism.overlapParamGather);
  EXPECT_TRUE(t.parallelism.tpCommOverlap);
  EXPECT_TRUE(t.parallelism.deferEmbeddingWgrad);
  EXPECT_EQ(t.parallelism.wgradDeferralLimit, 22);
  EXPECT_EQ(t.gradReduceBytes, 4);
  EXPECT_TRUE(t.elementwise);
  EXPECT_FALSE(t.spRegather);
  // Defaults are Megatron-LM's (arguments.py): causal GPT attention, the output layer tied to
  // the embedding (untie_embeddings_and_output_weights off; the Llama 3 preset unties, as its
  // release does), --overlap-grad-reduce off, bf16 gradients reduced in fp32 (--bf16 sets
  // accumulate_allreduce_grads_in_fp32), fp16 ones in fp16; element-wise kernels modelled.
  const WorkloadSpec d = parseWorkloadYaml("kind: training\nmodel: gpt3-175b\n", "w.yaml", {});
  EXPECT_TRUE(d.training.model.causal && d.training.model.tiedEmbeddings && d.training.elementwise &&
              d.training.spRegather);
  EXPECT_FALSE(d.training.parallelism.overlapGradReduce);
  EXPECT_FALSE(d.training.parallelism.deferEmbeddingWgrad);
  EXPECT_EQ(d.training.parallelism.wgradDeferralLimit, 0);
  EXPECT_FALSE(d.training.parallelism.overlapParamGather || d.training.parallelism.tpCommOverlap ||
               d.training.parallelism.sequenceParallel || d.training.parallelism.distributedOptimizer);
  EXPECT_EQ(d.training.gradientReduceBytes(), 4);
  EXPECT_EQ(d.training.gradientReduceDtype(), "fp32");
  EXPECT_FALSE(
      parseWorkloadYaml("kind: training\nmodel: llama3-70b\n", "w.yaml", {}).training.model.tiedEmbeddings);
  EXPECT_EQ(parseWorkloadYaml("kind: training\nmodel: gpt3-175b\ndtype: fp16\n", "w.yaml", {})
                .training.gradientReduceBytes(),
            2);
  EXPECT_DOUBLE_EQ(d.training.gpu.commSmShare, 0.0);
}

TEST(TrainingStepKeys, TpCommOverlapCfgReplacesOnlyTheFieldsGiven) {
  const WorkloadSpec w = parseWorkloadYaml(R"(kind: training
model: gpt3-175b
gpu: {sms: 114}
parallelism:
  tp: 4
  sequence_parallel: true
  tp_comm_overlap: true
  tp_comm_overlap_cfg:
    proj_fprop: {method: pipeline, num_sm: 24, set_sm_margin: true, num_splits: 2}
    qkv_wgrad: {num_sm: 4, set_sm_margin: false}
)",
                                           "w.yaml", {});
  const TrainingSpec& t = w.training;
  EXPECT_EQ(t.gpu.sms, 114);
  const TpOverlapConfig& c = t.parallelism.tpCommOverlapCfg;
  EXPECT_EQ(c.projFprop.method, "pipeline");
  EXPECT_EQ(c.projFprop.numSm, 24);
  EXPECT_TRUE(c.projFprop.smMargin);
  EXPECT_EQ(c.projFprop.numSplits, 2);
  EXPECT_EQ(c.fc2Fprop.numSplits, 4);    // TE's default
  EXPECT_EQ(c.qkvWgrad.method, "bulk");  // TE's default method for the slot, kept
  EXPECT_EQ(c.qkvWgrad.numSm, 4);
  EXPECT_FALSE(c.qkvWgrad.smMargin);
  // Slots not given keep Transformer Engine's defaults (base.py initialize_ub): ring exchange
  // on 1 SM without the margin; pipeline / bulk on 16 SMs with it.
  EXPECT_EQ(c.qkvFprop.method, "ring_exchange");
  EXPECT_EQ(c.qkvFprop.numSm, 1);
  EXPECT_FALSE(c.qkvFprop.smMargin);
  EXPECT_EQ(c.fc2Fprop.method, "pipeline");
  EXPECT_EQ(c.fc2Fprop.numSm, 16);
  EXPECT_TRUE(c.fc2Fprop.smMargin);
  EXPECT_EQ(c.fc1Dgrad.method, "bulk");
  EXPECT_EQ(parseWorkloadYaml("kind: training\nmodel: gpt3-175b\n", "w.yaml", {}).training.gpu.sms, 132);

  auto first = [](const std::string& yaml) {
    const auto d = diagnosticsOf(yaml);
    return d.empty() ? std::string() : d[0].key + "@" + std::to_string(d[0].line);
  };
  const std::string head =
      "kind: training\nmodel: gpt3-175b\nparallelism:\n  tp: 4\n  sequence_parallel: true\n";
  EXPECT_EQ(first(head + "  tp_comm_overlap: true\n  tp_comm_overlap_cfg:\n    fc3_fprop: {num_sm: 2}\n"),
            "parallelism.tp_comm_overlap_cfg.fc3_fprop@8");
  EXPECT_EQ(first(head + "  tp_comm_overlap: true\n  tp_comm_overlap_cfg:\n    fc1_wgrad: {num_sm: 40}\n"),
            "parallelism.tp_comm_overlap_cfg.fc1_wgrad.num_sm@8");
  EXPECT_EQ(
      first(head + "  tp_comm_overlap: true\n  tp_comm_overlap_cfg:\n    proj_fprop: {num_splits: 0}\n"),
      "parallelism.tp_comm_overlap_cfg.proj_fprop.num_splits@8");
  EXPECT_EQ(first(head + "  tp_comm_overlap: true\n  tp_comm_overlap_cfg:\n    fc1_wgrad: {method: ring}\n"),
            "parallelism.tp_comm_overlap_cfg.fc1_wgrad.method@8");
  EXPECT_EQ(first(head + "  tp_comm_overlap: true\n  tp_comm_overlap_cfg:\n    fc1_wgrad: {cga_size: 2}\n"),
            "parallelism.tp_comm_overlap_cfg.fc1_wgrad.cga_size@8");
  EXPECT_EQ(first(head + "  tp_comm_overlap_cfg:\n    fc1_wgrad: {num_sm: 2}\n"),
            "parallelism.tp_comm_overlap_cfg@7");  // the map it holds
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\ngpu: {sms: 1}\n"), "gpu.sms@3");
  // Expert tensor parallelism: 1 or tp, and only with experts.
  EXPECT_EQ(first("kind: training\nmodel: mixtral-8x7b\nparallelism:\n  tp: 4\n  sequence_parallel: true\n"
                  "  etp: 2\n"),
            "parallelism.etp@6");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\nparallelism:\n  etp: 1\n"), "parallelism.etp@4");
  EXPECT_EQ(
      parseWorkloadYaml("kind: training\nmodel: mixtral-8x7b\nparallelism: {tp: 2, sequence_parallel: true, "
                        "etp: 1}\n",
                        "w.yaml", {})
          .training.parallelism.etp,
      1);
}

TEST(TrainingStepKeys, BadValuesAndCombinationsNameTheirLine) {
  auto first = [](const std::string& yaml) {
    const auto d = diagnosticsOf(yaml);
    return d.empty() ? std::string() : d[0].key + "@" + std::to_string(d[0].line);
  };
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\ngrad_reduce_dtype: fp64\n"), "grad_reduce_dtype@3");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\ngpu: {comm_sm_share: 1.5}\n"), "gpu.comm_sm_share@3");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\ngpu:\n  in_step_rate: 0\n"), "gpu.in_step_rate@4");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\ngpu: {efficiency: {memory: 0}}\n"),
            "gpu.efficiency.memory@3");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\nparallelism:\n  tp: 1\n  tp_comm_overlap: true\n"),
            "parallelism.tp_comm_overlap@5");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\nparallelism:\n  dp: 2\n  overlap_param_gather: true\n"),
            "parallelism.overlap_param_gather@5");
  EXPECT_EQ(
      first(
          "kind: training\nmodel: gpt3-175b\nparallelism:\n  dp: 2\n  defer_embedding_wgrad_compute: true\n"),
      "parallelism.defer_embedding_wgrad_compute@5");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\nparallelism:\n  pp: 2\n  wgrad_deferral_limit: 4\n"),
            "parallelism.wgrad_deferral_limit@5");
  EXPECT_EQ(
      first("kind: training\nmodel: gpt3-175b\nparallelism:\n  pp: 2\n  defer_embedding_wgrad_compute: true\n"
            "  wgrad_deferral_limit: -1\n"),
      "parallelism.wgrad_deferral_limit@6");
  EXPECT_EQ(first("kind: training\nmodel: {preset: gpt3-175b, causal: maybe}\n"), "model.causal@2");
  // Experts: ep must divide them, tp > 1 needs sequence parallelism, top_k at most experts.
  const auto ep = diagnosticsOf("kind: training\nmodel: mixtral-8x7b\nparallelism:\n  ep: 3\n");
  ASSERT_FALSE(ep.empty());
  EXPECT_EQ(ep[0].key + "@" + std::to_string(ep[0].line), "parallelism.ep@4");
  EXPECT_NE(ep[0].message.find("ep (3) must divide model.experts (8)"), std::string::npos) << ep[0].message;
  EXPECT_EQ(first("kind: training\nmodel: mixtral-8x7b\nparallelism: {tp: 2}\n"),
            "parallelism.sequence_parallel@3");
  EXPECT_EQ(first("kind: training\nmodel: {preset: mixtral-8x7b, top_k: 9}\n"), "model.top_k@2");
  EXPECT_EQ(first("kind: training\nmodel: gpt3-175b\nparallelism: {ep: 2}\n"), "parallelism.ep@3");
  // cp must divide the sequence (2048 for gpt3-175b); the message names both numbers.
  const auto cp = diagnosticsOf("kind: training\nmodel: gpt3-175b\nparallelism:\n  tp: 2\n  cp: 3\n");
  ASSERT_FALSE(cp.empty());
  EXPECT_EQ(cp[0].key + "@" + std::to_string(cp[0].line), "parallelism.cp@5");
  EXPECT_NE(cp[0].message.find("cp (3) must divide model.seq_len (2048)"), std::string::npos)
      << cp[0].message;
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// The published recipes of validation/training load (their calibration included) and expand
// into traces of the sizes their comments give: GPT-3 175B 128 GPUs, Llama 3.1 70B 64, 405B 1024.
TEST(TrainingStepKeys, ValidationRecipesLoadAndBuild) {
  const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/validation/training/";
  for (const auto& [file, ranks] : std::vector<std::pair<std::string, uint32_t>>{
           {"gpt3-175b.yaml", 128}, {"llama3.1-70b.yaml", 64}, {"llama3.1-405b.yaml", 1024}}) {
    const WorkloadSpec w = loadWorkloadFile(dir + file);
    EXPECT_GT(w.training.gpu.commSmShare, 0.0) << file << ": the calibration's gpu block applies";
    // The recipes read fit_in_step_rate.py's calibration: its rate lies inside the search
    // interval (0.5, 1), not on a bound (a fit that hit one would mean the model lacks a term).
    EXPECT_GT(w.training.gpu.inStepRate, 0.5) << file;
    EXPECT_LT(w.training.gpu.inStepRate, 1.0) << file;
    EXPECT_EQ(buildTrainingTrace(w.training, w.tuning, w.name).ranks, ranks) << file;
  }
}

}  // namespace
}  // namespace fabricsim
