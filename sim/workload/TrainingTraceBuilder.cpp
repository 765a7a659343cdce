#include "sim/workload/TrainingTraceBuilder.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/Error.h"
#include "sim/workload/ComputeModel.h"
#include "sim/workload/StageProgram.h"
#include "sim/workload/TrainingPlan.h"
#include "sim/workload/TransformerModel.h"

namespace fabricsim {

namespace {

/// Checks the parts of the spec the trace depends on; throws InputError naming `source`.
void validate(const TrainingSpec& spec, const std::string& source) {
  auto need = [&](bool ok, const std::string& key, const std::string& message) {
    if (!ok) throw InputError(source, 0, 0, key, message);
  };
  const ModelSpec& model = spec.model;
  const ParallelismSpec& par = spec.parallelism;
  const GpuSpec& gpu = spec.gpu;
  auto positive = [&](int value, const std::string& key) {
    need(value >= 1, key, "expected a positive integer, found " + std::to_string(value));
  };
  positive(model.layers, "model.layers");
  positive(model.hidden, "model.hidden");
  positive(model.heads, "model.heads");
  positive(model.seqLen, "model.seq_len");
  // Ten to a hundred times the largest published models (hidden 25,600, FFN 53,248 and 128 layers
  // at the most; contexts of 1M tokens, vocabularies of 256K): sizes past these are not a job and
  // overflow the step's integer arithmetic (4 x hidden did).
  auto atMost = [&](int64_t value, int64_t limit, const std::string& key) {
    need(value <= limit, key,
         "expected at most " + std::to_string(limit) + " (beyond any real model), found " +
             std::to_string(value));
  };
  atMost(model.hidden, int64_t{1} << 20, "model.hidden");
  atMost(model.ffnHidden, int64_t{1} << 22, "model.ffn_hidden");
  atMost(model.moeFfnHidden, int64_t{1} << 22, "model.moe_ffn_hidden");
  atMost(model.heads, int64_t{1} << 16, "model.heads");
  atMost(model.layers, int64_t{1} << 16, "model.layers");
  atMost(model.seqLen, int64_t{1} << 24, "model.seq_len");
  atMost(model.vocab, int64_t{1} << 24, "model.vocab");
  atMost(par.microBatch, int64_t{1} << 16, "parallelism.micro_batch");
  need(model.ffnHidden >= 0, "model.ffn_hidden", "expected 0 (4 * hidden) or a positive integer");
  need(model.kvHeads >= 0, "model.kv_heads", "expected 0 (= heads) or a positive integer");
  need(model.vocab >= 0, "model.vocab", "expected 0 (no embedding) or a positive integer");
  need(model.hidden % model.heads == 0, "model.hidden",
       "hidden (" + std::to_string(model.hidden) + ") must be a multiple of heads (" +
           std::to_string(model.heads) + ")");
  const int kv = model.kvHeads > 0 ? model.kvHeads : model.heads;
  need(kv <= model.heads && model.heads % kv == 0, "model.kv_heads",
       "kv_heads (" + std::to_string(kv) + ") must divide heads (" + std::to_string(model.heads) + ")");
  positive(par.tp, "parallelism.tp");
  positive(par.pp, "parallelism.pp");
  positive(par.dp, "parallelism.dp");
  positive(par.microBatch, "parallelism.micro_batch");
  positive(par.globalBatch, "parallelism.global_batch");
  positive(spec.iterations, "iterations");
  positive(spec.dtypeBytes, "dtype");
  need(spec.dpBucketBytes >= 0, "dp_bucket", "expected 0 (Megatron's default) or a positive size");
  positive(par.cp, "parallelism.cp");
  positive(par.ep, "parallelism.ep");
  need(static_cast<int64_t>(par.tp) * par.pp * par.dp * par.cp * par.ep <= UINT32_MAX, "parallelism",
       "tp * cp * ep * pp * dp is too large");
  need(model.experts >= 0 && model.moeFfnHidden >= 0 && model.capacityFactor >= 0, "model.experts",
       "expected experts, moe_ffn_hidden and capacity_factor >= 0");
  need(par.etp == 0 || par.etp == 1 || par.etp == par.tp, "parallelism.etp",
       "etp must be 1 or tp (" + std::to_string(par.tp) + "), found " + std::to_string(par.etp));
  need(par.ep == 1 || (model.experts > 0 && model.experts % par.ep == 0), "parallelism.ep",
       "ep (" + std::to_string(par.ep) + ") must divide model.experts (" + std::to_string(model.experts) + ")");
  need(model.experts == 0 || (model.topK >= 1 && model.topK <= model.experts), "model.top_k",
       "top_k (" + std::to_string(model.topK) + ") must be in [1, experts (" + std::to_string(model.experts) + ")]");
  need(model.experts == 0 || par.tp == 1 || par.sequenceParallel, "parallelism.sequence_parallel",
       "a model with experts and tp > 1 needs sequence_parallel");
  need(model.experts == 0 || spec.tpGranularity == "layer", "tp_granularity",
       "tp_granularity: stage is not available with experts (their all-to-alls are per layer)");
  need(model.seqLen % par.cp == 0, "parallelism.cp",
       "cp (" + std::to_string(par.cp) + ") must divide the sequence length (" + std::to_string(model.seqLen) +
           "): each context-parallel rank holds seq_len / cp tokens");
  need(model.heads % par.tp == 0, "parallelism.tp",
       "tp (" + std::to_string(par.tp) + ") must divide the attention heads (" + std::to_string(model.heads) +
           ")");
  const int64_t perStep = static_cast<int64_t>(par.microBatch) * par.dp;
  need(par.globalBatch % perStep == 0, "parallelism.global_batch",
       "global_batch (" + std::to_string(par.globalBatch) + ") must be a multiple of micro_batch * dp (" +
           std::to_string(perStep) + ")");
  need(par.schedule == "1f1b" || par.schedule == "interleaved", "parallelism.schedule",
       "expected 1f1b or interleaved, found '" + par.schedule + "'");
  need(par.recompute == "none" || par.recompute == "full", "parallelism.recompute",
       "expected none or full, found '" + par.recompute + "'");
  need(spec.tpGranularity == "layer" || spec.tpGranularity == "stage", "tp_granularity",
       "expected layer or stage, found '" + spec.tpGranularity + "'");
  positive(par.virtualStages, "parallelism.virtual_stages");
  const bool interleaved = par.schedule == "interleaved";
  const int v = interleaved ? par.virtualStages : 1;
  if (interleaved) {
    need(par.virtualStages > 1, "parallelism.virtual_stages",
         "the interleaved schedule needs virtual_stages > 1");
    // With two stages, both neighbours of a stage are the same rank and forward and backward
    // messages between one pair of ranks could be matched out of order.
    need(par.pp > 2, "parallelism.pp",
         "the interleaved schedule needs pp > 2, found " + std::to_string(par.pp));
    const int64_t m = par.globalBatch / perStep;
    need(m % par.pp == 0, "parallelism.global_batch",
         "the interleaved schedule needs micro-batches per pipeline (" + std::to_string(m) +
             ") to be a multiple of pp (" + std::to_string(par.pp) + ")");
  } else {
    need(par.virtualStages == 1, "parallelism.virtual_stages",
         "virtual_stages > 1 needs schedule: interleaved");
  }
  need(model.layers >= static_cast<int64_t>(par.pp) * v, "model.layers",
       "layers (" + std::to_string(model.layers) + ") must be at least pp * virtual_stages (" +
           std::to_string(static_cast<int64_t>(par.pp) * v) + "): every virtual stage needs a layer");
  need(gpu.peakFlops > 0, "gpu.peak", "expected a positive FLOP rate");
  need(gpu.hbmBytesPerSecond > 0, "gpu.hbm_bandwidth", "expected a positive bandwidth");
  need(gpu.gemmEfficiency > 0 && gpu.gemmEfficiency <= 1, "gpu.efficiency.gemm",
       "expected a value in (0, 1]");
  need(gpu.attentionEfficiency > 0 && gpu.attentionEfficiency <= 1, "gpu.efficiency.attention",
       "expected a value in (0, 1]");
  need(gpu.fp8GemmEfficiency > 0 && gpu.fp8GemmEfficiency <= 1, "gpu.efficiency.fp8_gemm",
       "expected a value in (0, 1]");
  need(gpu.memoryEfficiency > 0 && gpu.memoryEfficiency <= 1, "gpu.efficiency.memory", "expected a value in (0, 1]");
  need(gpu.inStepRate > 0 && gpu.inStepRate <= 1, "gpu.in_step_rate", "expected a value in (0, 1]");
  need(gpu.peakFp8Flops > 0, "gpu.peak_fp8", "expected a positive FLOP rate");
  need(gpu.commSmShare >= 0 && gpu.commSmShare < 1, "gpu.comm_sm_share", "expected a value in [0, 1)");
  need(!par.tpCommOverlap || par.sequenceParallel, "parallelism.tp_comm_overlap",
       "tp_comm_overlap needs sequence_parallel: true (Megatron overlaps the sequence-parallel "
       "all-gather and reduce-scatter)");
  need(!par.overlapParamGather || par.distributedOptimizer, "parallelism.overlap_param_gather",
       "overlap_param_gather needs distributed_optimizer: true");
  need(!par.deferEmbeddingWgrad || par.pp > 1, "parallelism.defer_embedding_wgrad_compute",
       "defer_embedding_wgrad_compute needs pipeline parallelism (pp > 1)");
  need(par.wgradDeferralLimit >= 0, "parallelism.wgrad_deferral_limit", "expected a count >= 0");
  need(gpu.sms >= 2, "gpu.sms", "expected at least 2 SMs");
  if (par.tpCommOverlap) {
    for (const auto& [name, slot] : par.tpCommOverlapCfg.slots())
      need(slot->numSm < gpu.sms, std::string("parallelism.tp_comm_overlap_cfg.") + name + ".num_sm",
           "num_sm (" + std::to_string(slot->numSm) + ") must be below the GPU's SMs (" +
               std::to_string(gpu.sms) + ")");
  }
}

/// Transformer Engine's overlap of one GEMM (TpOverlapSlot): with the SM margin the GEMM runs
/// on sms - numSm SMs for its whole duration, sms / (sms - numSm) times as long (no wave
/// quantisation); its communication then takes nothing more while it moves data.
double marginFactor(const TpOverlapSlot& slot, int sms) {
  return slot.smMargin ? static_cast<double>(sms) / static_cast<double>(sms - slot.numSm) : 1.0;
}

/// The compute share a slot's communication kernel takes while it moves data: numSm / sms for
/// an SM-based kernel (pipeline, bulk) without the margin; 0 for ring exchange (copy engines
/// move the chunks) and with the margin (charged to the GEMM by marginFactor).
double movingShare(const TpOverlapSlot& slot, int sms) {
  if (slot.method == "ring_exchange" || slot.smMargin) return 0.0;
  return static_cast<double>(slot.numSm) / static_cast<double>(sms);
}

/// The chunks of an output projection's overlapped reduce-scatter: tp for ring exchange (one
/// per rank), num_splits for pipeline; bulk does not chunk (0: no tail).
int reduceChunks(const TpOverlapSlot& slot, int tp) {
  if (slot.method == "ring_exchange") return tp;
  return slot.method == "pipeline" ? slot.numSplits : 0;
}

/// TP overlap: adds the GEMMs' SM margins to the blocks' durations and sets the shares of the
/// TP kernels beside them. Forward: a block's gather is its first GEMM's slot (qkv_fprop,
/// fc1_fprop), its reduce-scatter its last's (proj_fprop, fc2_fprop). Backward: the output
/// gradient's gather overlaps the output projection's data gradient (proj_dgrad, fc2_dgrad);
/// the input gradient's reduce-scatter overlaps the first GEMM's weight gradient (qkv_wgrad,
/// fc1_wgrad); the first GEMM's data gradient is qkv_dgrad / fc1_dgrad, beside its bulk
/// all-gather (sequence parallelism's re-gather of the block's input). Expert MLPs have no
/// TP overlap and keep their times.
void applyTpOverlap(const TrainingSpec& spec, const TransformerModel& model, const ComputeModel& compute,
                    TrainingPlan& plan) {
  const TpOverlapConfig& c = spec.parallelism.tpCommOverlapCfg;
  const int sms = spec.gpu.sms;
  const int b = plan.b;
  auto extra = [&](const TpOverlapSlot& slot, double flops) {
    const double gemm = static_cast<double>(compute.computeTime(Flops{flops, 0.0}).picos());
    return Time::ps(std::llround((marginFactor(slot, sms) - 1.0) * gemm));
  };
  const double qkv = model.qkvGemmFlops(b), proj = model.projGemmFlops(b);
  const double fc1 = model.fc1GemmFlops(b), fc2 = model.fc2GemmFlops(b);
  const Time attnF = extra(c.qkvFprop, qkv) + extra(c.projFprop, proj);
  const Time attnB = extra(c.projDgrad, proj) + extra(c.qkvDgrad, qkv) + extra(c.qkvWgrad, qkv);
  const Time mlpF = plan.moe ? Time::zero() : extra(c.fc1Fprop, fc1) + extra(c.fc2Fprop, fc2);
  const Time mlpB =
      plan.moe ? Time::zero() : extra(c.fc2Dgrad, fc2) + extra(c.fc1Dgrad, fc1) + extra(c.fc1Wgrad, fc1);
  plan.attnFwd += attnF;
  plan.attnBwd += attnB;
  plan.mlpFwd += mlpF;
  plan.mlpBwd += mlpB;
  for (size_t j = 0; j < plan.layersOfVirtual.size(); ++j) {
    plan.chunkFwd[j] += (attnF + mlpF) * plan.layersOfVirtual[j];
    plan.chunkBwd[j] += (attnB + mlpB) * plan.layersOfVirtual[j];
  }
  const int tp = spec.parallelism.tp;
  plan.attnFwdShares = {movingShare(c.qkvFprop, sms), movingShare(c.projFprop, sms)};
  plan.attnFwdShares.reduceSplits = reduceChunks(c.projFprop, tp);
  plan.mlpFwdShares = {movingShare(c.fc1Fprop, sms), movingShare(c.fc2Fprop, sms)};
  plan.mlpFwdShares.reduceSplits = plan.moe ? 0 : reduceChunks(c.fc2Fprop, tp);
  plan.attnBwdShares = {movingShare(c.projDgrad, sms), movingShare(c.qkvWgrad, sms), true,
                        movingShare(c.qkvDgrad, sms)};
  plan.mlpBwdShares = {movingShare(c.fc2Dgrad, sms), movingShare(c.fc1Wgrad, sms), true,
                       movingShare(c.fc1Dgrad, sms)};
}

std::string describe(const TrainingSpec& spec, int m) {
  const ParallelismSpec& par = spec.parallelism;
  std::string model = spec.model.preset;
  if (model.empty()) {
    model = "custom-" + std::to_string(spec.model.layers) + "l-" + std::to_string(spec.model.hidden) + "h";
  }
  std::string out = "training " + model + " tp" + std::to_string(par.tp) + " pp" + std::to_string(par.pp) +
 (par.cp > 1 ? " cp" + std::to_string(par.cp) : std::string()) +
                    (par.ep > 1 ? " ep" + std::to_string(par.ep) : std::string()) + " dp" + std::to_string(par.dp) + " mb" + std::to_string(par.microBatch) + " gb" +
                    std::to_string(par.globalBatch) + " m" + std::to_string(m) + " " + par.schedule;
  if (par.schedule == "interleaved") out += " v" + std::to_string(par.virtualStages);
  if (par.sequenceParallel) out += " sp";
  if (par.distributedOptimizer) out += " distopt";
  if (par.recompute == "full") out += " recompute";
  if (spec.tpGranularity == "stage") out += " tp-per-stage";
  if (par.tpCommOverlap) out += " tp-overlap";
  if (!par.overlapGradReduce) out += " no-grad-overlap";
  if (par.overlapParamGather) out += " param-overlap";
  if (par.deferEmbeddingWgrad)
    out += " defer-wgrad" +
           (par.wgradDeferralLimit > 0 ? std::to_string(par.wgradDeferralLimit) : std::string());
  if (spec.model.tiedEmbeddings) out += " tied";
  if (spec.model.causal) out += " causal";
  if (spec.elementwise) out += " elementwise";
  if (par.sequenceParallel && !spec.spRegather) out += " no-sp-regather";
  if (spec.gradientReduceBytes() != spec.dtypeBytes) out += " grads-" + spec.gradientReduceDtype();
  if (spec.dtype == "fp8") out += " fp8";
  return out;
}

}  // namespace

std::vector<int> layersOfVirtualStages(int layers, int virtualStages) {
  SIM_CHECK(virtualStages >= 1 && layers >= virtualStages, "every virtual stage needs a layer");
  const int base = layers / virtualStages;
  int extra = layers % virtualStages;
  std::vector<int> out(static_cast<size_t>(virtualStages), base);
  // Preference order for the extra layers: 1, 2, ..., V - 2, then 0. The last virtual stage
  // never gets one (extra <= V - 1).
  for (int j = 1; j < virtualStages - 1 && extra > 0; ++j, --extra) ++out[static_cast<size_t>(j)];
  if (extra > 0) ++out[0];
  return out;
}

namespace {
JobTrace buildValidated(const TrainingSpec& spec, const std::string& name);
}  // namespace

JobTrace buildTrainingTrace(const TrainingSpec& spec, const CollectiveTuning& tuning,
                            const std::string& name) {
  (void)tuning;  // collectives use Auto: the run's tuning decides
  validate(spec, name);
  try {
    JobTrace trace = buildValidated(spec, name);
    // The simulated clock spans 106 days (picoseconds in 64 bits): a rank whose compute alone
    // outlasts that would wrap it (the sums overflowed: a job of 0 ps).
    for (const Program& p : trace.programs) {
      double seconds = 0;
      for (const TraceOp& op : p.ops)
        if (op.type == OpType::Compute) seconds += op.duration.seconds();
      seconds *= trace.iterations;
      if (!(seconds < 9.0e6))
        throw InputError(
            name, 0, 0, "model",
            "a rank's compute adds up to " + std::to_string(seconds) +
                " s over the iterations, beyond the 106 days the simulated clock spans: expected "
                "model and batch sizes of a real job");
    }
    return trace;
  } catch (const InputError& e) {
    // A kernel beyond the compute model's range (ComputeModel::fromSeconds) names no workload.
    std::vector<Diagnostic> d = e.diagnostics();
    for (Diagnostic& x : d)
      if (x.file.empty()) x.file = name;
    throw InputError(std::move(d));
  }
}

namespace {
JobTrace buildValidated(const TrainingSpec& spec, const std::string& name) {
  const ParallelismSpec& par = spec.parallelism;
  const TransformerModel model(spec.model, spec.dtypeBytes, par.tp, par.sequenceParallel, par.cp);
  const ComputeModel compute(spec.gpu, spec.dtype == "fp8");

  TrainingPlan plan;
  plan.tp = par.tp;
  plan.cp = par.cp;
  plan.ep = par.ep;
  plan.moe = model.moe();
  // Expert tensor parallelism (etp = tp, Megatron's default): a rank holds 1/tp of each of its
  // experts and computes on the TP group's gathered tokens (the same FLOPs as whole experts on
  // its own tokens).
  plan.etp = model.moe() && par.tp > 1 && par.etp != 1 ? par.tp : 1;
  plan.expertParamsPerLayerRank = model.expertParamsPerLayer() / par.ep / plan.etp;
  plan.dispatchBytes = model.dispatchBytes(par.microBatch);
  plan.ringBytes = par.cp > 1 ? model.ringKvBytes(par.microBatch) : 0;
  plan.pp = par.pp;
  plan.dp = par.dp;
  plan.interleaved = par.schedule == "interleaved";
  plan.v = plan.interleaved ? par.virtualStages : 1;
  plan.b = par.microBatch;
  plan.m = par.globalBatch / (par.microBatch * par.dp);
  plan.layersOfVirtual = layersOfVirtualStages(model.layers(), plan.pp * plan.v);
  plan.sp = par.sequenceParallel && par.tp > 1;
  plan.recompute = par.recompute == "full";
  plan.stageGranularity = spec.tpGranularity == "stage";
  plan.distOpt = par.distributedOptimizer;
  plan.vocab = model.vocab() > 0;
  plan.tpBytes = model.tpCollectiveBytes(plan.b);
  plan.ppBytes = model.pipelineMessageBytes(plan.b);
  plan.tied = spec.model.tiedEmbeddings;
  plan.tpOverlap = par.tpCommOverlap && par.tp > 1;
  plan.overlapGrad = par.overlapGradReduce;
  plan.overlapParam = par.overlapParamGather && par.distributedOptimizer;
  plan.gradBytes = spec.gradientReduceBytes();
  plan.paramBytes = spec.dtypeBytes;
  // Megatron's bucket counts parameters; a dp_bucket in bytes is of the reduced gradients.
  plan.bucketElements =
      std::max<int64_t>(1, spec.dpBucketBytes > 0 ? spec.dpBucketBytes / plan.gradBytes
                                                  : TransformerModel::defaultBucketBytes(plan.dp, 1));
  plan.paramsPerLayer = model.paramsPerLayer();
  plan.embeddingParams = model.embeddingParams();
  plan.outputParams = model.outputLayerParams();
  const int b = plan.b;
  // Memory-bound kernels of each block (0 when not modelled), forward and backward; fp8
  // training adds Transformer Engine's casts and transposes (dense blocks).
  const bool fp8Casts = spec.elementwise && spec.dtype == "fp8";
  const double attnMem = spec.elementwise ? model.attentionElementwiseBytes(b) : 0.0;
  const double mlpMem = spec.elementwise ? model.mlpElementwiseBytes(b) : 0.0;
  const TransformerModel::PassBytes attnCast =
      fp8Casts ? model.attentionFp8CastBytes(b) : TransformerModel::PassBytes{};
  const TransformerModel::PassBytes mlpCast =
      fp8Casts && !model.moe() ? model.mlpFp8CastBytes(b) : TransformerModel::PassBytes{};
  const double attnMemFwd = attnMem + attnCast.forward, mlpMemFwd = mlpMem + mlpCast.forward;
  const double attnMemBwd = TransformerModel::backwardElementwiseBytes(attnMem) + attnCast.backward;
  const double mlpMemBwd = TransformerModel::backwardElementwiseBytes(mlpMem) + mlpCast.backward;
  plan.attnFwd = compute.computeTime(model.attentionForward(b), attnMemFwd);
  plan.mlpFwd = compute.computeTime(model.mlpForward(b), mlpMemFwd);
  plan.attnBwd = compute.computeTime(TransformerModel::backwardOf(model.attentionForward(b)), attnMemBwd);
  plan.mlpBwd = compute.computeTime(TransformerModel::backwardOf(model.mlpForward(b)), mlpMemBwd);
  for (const int n : plan.layersOfVirtual) {
    plan.chunkFwd.push_back(compute.computeTime(model.layerForward(b) * n, (attnMemFwd + mlpMemFwd) * n));
    plan.chunkBwd.push_back(compute.computeTime(TransformerModel::backwardOf(model.layerForward(b)) * n,
                                                (attnMemBwd + mlpMemBwd) * n));
  }
  if (plan.moe) {
    const double moeMem = spec.elementwise ? model.moeElementwiseBytes(b) : 0.0;
    plan.routerFwd = compute.computeTime(model.routerForward(b));
    plan.routerBwd = compute.computeTime(TransformerModel::backwardOf(model.routerForward(b)));
    plan.expertFwd = compute.computeTime(model.expertForward(b), moeMem);
    plan.expertBwd = compute.computeTime(TransformerModel::backwardOf(model.expertForward(b)),
                                         TransformerModel::backwardElementwiseBytes(moeMem));
    plan.mlpFwd = plan.routerFwd + plan.expertFwd;  // for the analytic per-micro-batch figures
    plan.mlpBwd = plan.routerBwd + plan.expertBwd;
  }
  // The output layer is Megatron's own ColumnParallelLinear, not a Transformer Engine module:
  // it stays bf16 in fp8 training.
  const ComputeModel bf16Compute(spec.gpu, false);
  plan.logitsFwd = bf16Compute.computeTime(model.logitsForward(b));
  plan.logitsBwd = bf16Compute.computeTime(TransformerModel::backwardOf(model.logitsForward(b)));
  // Megatron's deferred output-layer wgrad: the weight-gradient GEMM has the forward's FLOPs
  // (2 T h V / tp); the first min(limit, m) backwards leave it for the flush (limit 0: all).
  if (par.deferEmbeddingWgrad && plan.vocab && plan.pp > 1) {
    plan.logitsWgrad = plan.logitsFwd;
    plan.deferredWgrads = par.wgradDeferralLimit > 0 ? std::min(par.wgradDeferralLimit, plan.m) : plan.m;
  }
  // Lookup (vocab-parallel: every TP rank writes the full b*s*h output) and, in backward, the
  // scatter-add of the gradient rows: read + write of one activation.
  plan.embedding = compute.memoryTime(2.0 * static_cast<double>(model.activationBytes(b)));
  if (plan.tpOverlap) applyTpOverlap(spec, model, compute, plan);
  // Sequence parallelism's backward re-gather (both paths) and, without TP overlap, the column
  // GEMM's gradient times the asynchronous gather and reduce-scatter run beside.
  plan.attnBwdShares.regather = plan.mlpBwdShares.regather = plan.sp && spec.spRegather;
  if (plan.sp && spec.spRegather && !plan.tpOverlap) {
    plan.attnBwdShares.columnGrad = compute.computeTime(Flops{model.qkvGemmFlops(b), 0.0});
    plan.mlpBwdShares.columnGrad = compute.computeTime(Flops{model.fc1GemmFlops(b), 0.0});
  }
  plan.model = &model;
  plan.compute = &compute;

  JobTrace trace;
  trace.name = name;
  trace.iterations = spec.iterations;
  const uint32_t tp = static_cast<uint32_t>(par.tp), dp = static_cast<uint32_t>(par.dp),
                 pp = static_cast<uint32_t>(par.pp), cp = static_cast<uint32_t>(par.cp),
                 ep = static_cast<uint32_t>(par.ep);
  trace.ranks = tp * cp * ep * dp * pp;
  // Megatron's order tp-cp-ep-dp-pp: rank = tp_idx + tp (cp_idx + cp (ep_idx + ep (dp_idx + dp pp_idx))).
  auto rankOf = [&](uint32_t t, uint32_t c, uint32_t e, uint32_t d, uint32_t p) {
    return t + tp * (c + cp * (e + ep * (d + dp * p)));
  };
  Communicator tpComm{"tp", {}, {}, {}}, ppComm{"pp", {}, {}, {}}, dpComm{"dp", {}, {}, {}};
  Communicator cpComm{"cp", {}, {}, {}}, epComm{"ep", {}, {}, {}}, edpComm{"edp", {}, {}, {}};
  for (uint32_t p = 0; p < pp; ++p) {
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t e = 0; e < ep; ++e)
        for (uint32_t c = 0; c < cp; ++c) {
          std::vector<uint32_t> group;
          for (uint32_t t = 0; t < tp; ++t) group.push_back(rankOf(t, c, e, d, p));
          tpComm.groups.push_back(std::move(group));
        }
    // Dense gradients are reduced over the data-, expert- and context-parallel ranks together
    // (Megatron's data-parallel group with context parallelism); the experts' over dp x cp.
    for (uint32_t t = 0; t < tp; ++t) {
      std::vector<uint32_t> group;
      for (uint32_t d = 0; d < dp; ++d)
        for (uint32_t e = 0; e < ep; ++e)
          for (uint32_t c = 0; c < cp; ++c) group.push_back(rankOf(t, c, e, d, p));
      dpComm.groups.push_back(std::move(group));
      for (uint32_t e = 0; e < ep; ++e) {
        std::vector<uint32_t> expertGroup;
        for (uint32_t d = 0; d < dp; ++d)
          for (uint32_t c = 0; c < cp; ++c) expertGroup.push_back(rankOf(t, c, e, d, p));
        edpComm.groups.push_back(std::move(expertGroup));
      }
    }
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t e = 0; e < ep; ++e)
        for (uint32_t t = 0; t < tp; ++t) {
          std::vector<uint32_t> group;
          for (uint32_t c = 0; c < cp; ++c) group.push_back(rankOf(t, c, e, d, p));
          cpComm.groups.push_back(std::move(group));
        }
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t c = 0; c < cp; ++c)
        for (uint32_t t = 0; t < tp; ++t) {
          std::vector<uint32_t> group;
          for (uint32_t e = 0; e < ep; ++e) group.push_back(rankOf(t, c, e, d, p));
          epComm.groups.push_back(std::move(group));
        }
  }
  for (uint32_t d = 0; d < dp; ++d)
    for (uint32_t e = 0; e < ep; ++e)
      for (uint32_t c = 0; c < cp; ++c)
        for (uint32_t t = 0; t < tp; ++t) {
          std::vector<uint32_t> group;
          for (uint32_t p = 0; p < pp; ++p) group.push_back(rankOf(t, c, e, d, p));
          ppComm.groups.push_back(std::move(group));
        }
  trace.communicators = {std::move(tpComm), std::move(ppComm), std::move(dpComm)};
  plan.tpComm = 0;
  plan.ppComm = 1;
  plan.dpComm = 2;
  if (plan.tied && pp > 1 && plan.vocab) {
    // Megatron's embedding group: the first and the last stage's ranks of one (tp, cp, ep, dp)
    // index; the other stages' ranks are alone in theirs (every rank is in one group) and never
    // use it.
    Communicator embd{"embd", {}, {}, {}};
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t e = 0; e < ep; ++e)
        for (uint32_t c = 0; c < cp; ++c)
          for (uint32_t t = 0; t < tp; ++t) {
            embd.groups.push_back({rankOf(t, c, e, d, 0), rankOf(t, c, e, d, pp - 1)});
            for (uint32_t p = 1; p + 1 < pp; ++p) embd.groups.push_back({rankOf(t, c, e, d, p)});
          }
    plan.embdComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(embd));
  }
  if (cp > 1) {
    plan.cpComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(cpComm));
  }
  if (plan.moe) {
    plan.epComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(epComm));
    plan.edpComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(edpComm));
  }
  trace.commSmShare = spec.gpu.commSmShare;

  trace.programOfRank.resize(trace.ranks);
  for (uint32_t r = 0; r < trace.ranks; ++r) trace.programOfRank[r] = r / (tp * cp * ep * dp);
  for (int s = 0; s < par.pp; ++s) trace.programs.push_back(buildStageProgram(plan, s));

  // The layers' compute of one micro-batch on the slowest stage (every stage's with uniform
  // stages).
  for (int s = 0; s < par.pp; ++s) {
    Time fwd, bwd;
    for (int c = 0; c < plan.v; ++c) {
      const size_t j = static_cast<size_t>(c * plan.pp + s);
      if (plan.stageGranularity) {
        fwd += plan.chunkFwd[j];
        bwd += plan.chunkBwd[j] + (plan.recompute ? plan.chunkFwd[j] : Time::zero());
      } else {
        const int n = plan.layersOfVirtual[j];
        fwd += (plan.attnFwd + plan.mlpFwd) * n;
        bwd +=
            (plan.attnBwd + plan.mlpBwd + (plan.recompute ? plan.attnFwd + plan.mlpFwd : Time::zero())) * n;
      }
    }
    if (s == 0 || fwd + bwd > trace.microbatchForward + trace.microbatchBackward) {
      trace.microbatchForward = fwd;
      trace.microbatchBackward = bwd;
    }
  }
  trace.microbatches = plan.m;
  trace.pipelineStages = par.pp;
  trace.virtualStages = plan.v;
  trace.generator = describe(spec, plan.m);
  trace.finalize(name);
  return trace;
}

}  // namespace

}  // namespace fabricsim
