#include "sim/config/TrainingJobReader.h"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/config/GpuPresets.h"
#include "sim/config/ModelPresets.h"
#include "sim/config/TpOverlapReader.h"

namespace fabricsim {
namespace {

using YAML::Node;

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " | ") + n;
  return out;
}

/// The `gpu:` preset (h100-sxm when `gpu` is absent); its other keys come after calibration.
}  // namespace

void readGpuPreset(YamlReader& r, const Node& root, GpuSpec& gpu) {
  gpu = *gpuPreset("h100-sxm");
  if (!YamlReader::has(root, "gpu")) return;
  const Node n = root["gpu"];
  const std::string names = joinNames(gpuPresetNames());
  if (n.IsScalar()) {
    if (auto g = gpuPreset(n.Scalar()))
      gpu = *g;
    else
      r.error(n, "gpu",
              "expected a GPU preset (" + names +
                  ") or a map {preset, peak, hbm_bandwidth, efficiency}, found '" + n.Scalar() + "'");
  } else if (n.IsMap()) {
    r.checkKeys(n, "gpu");
    GpuSpec base;  // a custom GPU starts from GpuSpec's defaults
    std::string preset;
    if (r.read(n, "gpu", "preset", preset)) {
      if (auto g = gpuPreset(preset))
        base = *g;
      else
        r.error(n["preset"], "gpu.preset", "expected one of " + names + ", found '" + preset + "'");
    }
    gpu = base;
  } else {
    r.error(n, "gpu",
            "expected a GPU preset (" + names +
                ") or a map {preset, peak, hbm_bandwidth, efficiency}, found " + YamlReader::describe(n));
  }
}

namespace {

void readModel(YamlReader& r, const Node& root, ModelSpec& m) {
  if (!r.require(root, "", "model")) return;
  const Node n = root["model"];
  const std::string names = joinNames(modelPresetNames());
  const size_t before = r.diagnostics().size();
  if (n.IsScalar()) {
    if (auto p = modelPreset(n.Scalar()))
      m = *p;
    else
      r.error(n, "model",
              "expected a model preset (" + names +
                  ") or a map {preset, layers, hidden, ffn_hidden, heads, kv_heads, seq_len, vocab, "
                  "gated_mlp}, found '" +
                  n.Scalar() + "'");
    return;
  }
  if (!n.IsMap()) {
    r.error(
        n, "model",
        "expected a model preset (" + names + ") or a map of model keys, found " + YamlReader::describe(n));
    return;
  }
  r.checkKeys(n, "model");
  ModelSpec base;
  std::string preset;
  bool fromPreset = false;
  if (r.read(n, "model", "preset", preset)) {
    if (auto p = modelPreset(preset)) {
      base = *p;
      fromPreset = true;
    } else {
      r.error(n["preset"], "model.preset", "expected one of " + names + ", found '" + preset + "'");
    }
  }
  const auto need =
      !fromPreset && !YamlReader::has(n, "preset") ? YamlReader::Need::Required : YamlReader::Need::Optional;
  r.read(n, "model", "layers", base.layers, need);
  r.read(n, "model", "hidden", base.hidden, need);
  r.read(n, "model", "ffn_hidden", base.ffnHidden);
  r.read(n, "model", "heads", base.heads, need);
  r.read(n, "model", "kv_heads", base.kvHeads);
  r.read(n, "model", "seq_len", base.seqLen, need);
  r.read(n, "model", "vocab", base.vocab);
  r.read(n, "model", "gated_mlp", base.gatedMlp);
  r.read(n, "model", "causal", base.causal);
  r.read(n, "model", "tied_embeddings", base.tiedEmbeddings);
  r.read(n, "model", "experts", base.experts);
  r.read(n, "model", "top_k", base.topK);
  r.read(n, "model", "moe_ffn_hidden", base.moeFfnHidden);
  r.read(n, "model", "capacity_factor", base.capacityFactor);
  if (base.experts > 0 && base.topK == 0) base.topK = std::min(2, base.experts);  // Megatron's default top 2
  if (base.experts > 0 && base.topK > base.experts)
    r.error(n["top_k"], "model.top_k",
            "top_k (" + std::to_string(base.topK) + ") must be at most experts (" +
                std::to_string(base.experts) + ")");
  m = base;
  if (r.diagnostics().size() != before) return;
  if (m.ffnHidden == 0) m.ffnHidden = 4 * m.hidden;
  if (m.kvHeads == 0) m.kvHeads = m.heads;
  if (m.hidden % m.heads != 0) {
    r.error(YamlReader::valueOr(n, "heads"), "model.heads",
            "hidden (" + std::to_string(m.hidden) + ") must be divisible by heads, found heads " +
                std::to_string(m.heads));
  } else if (m.heads % m.kvHeads != 0) {
    r.error(YamlReader::valueOr(n, "kv_heads"), "model.kv_heads",
            "heads (" + std::to_string(m.heads) + ") must be divisible by kv_heads, found kv_heads " +
                std::to_string(m.kvHeads));
  }
}

void readParallelism(YamlReader& r, const Node& root, ParallelismSpec& p) {
  if (!YamlReader::has(root, "parallelism")) return;
  const Node n = root["parallelism"];
  const std::string path = "parallelism";
  if (!r.expectMap(n, path)) return;
  if (!n.Mark().is_null()) p.line = n.Mark().line + 1;
  r.checkKeys(n, path);
  bool ok = r.read(n, path, "tp", p.tp) || !YamlReader::has(n, "tp");
  ok = (r.read(n, path, "pp", p.pp) || !YamlReader::has(n, "pp")) && ok;
  ok = (r.read(n, path, "dp", p.dp) || !YamlReader::has(n, "dp")) && ok;
  r.read(n, path, "cp", p.cp);
  r.read(n, path, "ep", p.ep);
  if (r.read(n, path, "etp", p.etp) && p.etp != 1 && p.etp != p.tp) {
    r.error(n["etp"], "parallelism.etp",
            "etp must be 1 or tp (" + std::to_string(p.tp) + "), found " + std::to_string(p.etp) +
                ": expert tensor parallelism over part of the TP group is not modelled");
  }
  ok = (r.read(n, path, "micro_batch", p.microBatch) || !YamlReader::has(n, "micro_batch")) && ok;
  const bool gbGiven = YamlReader::has(n, "global_batch");
  const bool gbOk = r.read(n, path, "global_batch", p.globalBatch);
  if (!gbGiven && ok) p.globalBatch = p.microBatch * p.dp;  // one micro-batch per pipeline
  if (gbOk && ok) {
    const int64_t unit = static_cast<int64_t>(p.microBatch) * p.dp;
    if (p.globalBatch % unit != 0) {
      r.error(n["global_batch"], "parallelism.global_batch",
              "global_batch must be a multiple of micro_batch * dp = " + std::to_string(p.microBatch) +
                  " * " + std::to_string(p.dp) + " = " + std::to_string(unit) + ", found " +
                  std::to_string(p.globalBatch));
    }
  }
  r.read(n, path, "schedule", p.schedule);
  if (r.read(n, path, "virtual_stages", p.virtualStages) && p.schedule != "interleaved") {
    r.error(n["virtual_stages"], "parallelism.virtual_stages",
            "virtual_stages applies only to 'schedule: interleaved', found schedule '" + p.schedule + "'");
  }
  if (r.read(n, path, "sequence_parallel", p.sequenceParallel) && p.sequenceParallel && p.tp == 1) {
    r.error(n["sequence_parallel"], "parallelism.sequence_parallel",
            "sequence_parallel needs tensor parallelism (tp > 1), found tp 1");
  }
  r.read(n, path, "distributed_optimizer", p.distributedOptimizer);
  r.read(n, path, "recompute", p.recompute);
  r.read(n, path, "overlap_grad_reduce", p.overlapGradReduce);
  if (r.read(n, path, "overlap_param_gather", p.overlapParamGather) && p.overlapParamGather &&
      !p.distributedOptimizer) {
    r.error(n["overlap_param_gather"], "parallelism.overlap_param_gather",
            "overlap_param_gather needs distributed_optimizer: true (only the distributed optimizer "
            "all-gathers parameters)");
  }
  if (r.read(n, path, "defer_embedding_wgrad_compute", p.deferEmbeddingWgrad) && p.deferEmbeddingWgrad &&
      p.pp == 1) {
    r.error(n["defer_embedding_wgrad_compute"], "parallelism.defer_embedding_wgrad_compute",
            "defer_embedding_wgrad_compute needs pipeline parallelism (pp > 1), found pp 1: the deferred "
            "GEMMs run in the pipeline flush (Megatron refuses it too)");
  }
  if (r.read(n, path, "wgrad_deferral_limit", p.wgradDeferralLimit) && !p.deferEmbeddingWgrad) {
    r.error(n["wgrad_deferral_limit"], "parallelism.wgrad_deferral_limit",
            "wgrad_deferral_limit applies only with defer_embedding_wgrad_compute: true");
  }
  if (r.read(n, path, "tp_comm_overlap", p.tpCommOverlap) && p.tpCommOverlap && p.tp == 1) {
    r.error(n["tp_comm_overlap"], "parallelism.tp_comm_overlap",
            "tp_comm_overlap needs tensor parallelism (tp > 1), found tp 1");
  }
  readTpOverlapConfig(r, n, p.tpCommOverlapCfg);
  if (YamlReader::has(n, "tp_comm_overlap_cfg") && !p.tpCommOverlap) {
    r.error(n["tp_comm_overlap_cfg"], "parallelism.tp_comm_overlap_cfg",
            "tp_comm_overlap_cfg applies only with tp_comm_overlap: true");
  }
}

}  // namespace

void readTraining(YamlReader& r, const Node& root, TrainingSpec& t) {
  readModel(r, root, t.model);
  readParallelism(r, root, t.parallelism);
  const int cp = t.parallelism.cp;
  if (cp > 1 && t.model.seqLen > 0 && t.model.seqLen % cp != 0) {
    const Node p = root["parallelism"];
    r.error(p.IsMap() && YamlReader::has(p, "cp") ? p["cp"] : p, "parallelism.cp",
            "cp (" + std::to_string(cp) + ") must divide model.seq_len (" + std::to_string(t.model.seqLen) +
                "): each context-parallel rank holds seq_len / cp tokens");
  }
  const int ep = t.parallelism.ep, experts = t.model.experts;
  if (t.parallelism.etp > 0 && experts == 0) {
    r.error(root["parallelism"]["etp"], "parallelism.etp",
            "etp (expert tensor parallelism) needs a model with experts (model.experts > 0)");
  }
  if (ep > 1 && (experts == 0 || experts % ep != 0)) {
    const Node p = root["parallelism"];
    r.error(p.IsMap() && YamlReader::has(p, "ep") ? p["ep"] : p, "parallelism.ep",
            experts == 0
                ? "ep (" + std::to_string(ep) + ") needs a model with experts (model.experts > 0)"
                : "ep (" + std::to_string(ep) + ") must divide model.experts (" + std::to_string(experts) +
                      "): each expert-parallel rank holds experts / ep experts");
  }
  if (experts > 0 && t.parallelism.tp > 1 && !t.parallelism.sequenceParallel) {
    r.error(root["parallelism"], "parallelism.sequence_parallel",
            "a model with experts and tp > 1 needs sequence_parallel: true (Megatron's MoE layers take "
            "sequence-parallel tokens)");
  }
  r.read(root, "", "iterations", t.iterations);
  if (r.read(root, "", "dtype", t.dtype)) t.dtypeBytes = t.dtype == "fp32" ? 4 : t.dtype == "fp8" ? 1 : 2;
  r.read(root, "", "dp_bucket", t.dpBucketBytes);
  if (r.read(root, "", "grad_reduce_dtype", t.gradReduceDtype))
    t.gradReduceBytes = t.gradReduceDtype == "fp32" ? 4 : 2;
  r.read(root, "", "elementwise", t.elementwise);
  r.read(root, "", "sp_regather", t.spRegather);
  r.read(root, "", "communication", t.communication);
  r.read(root, "", "tp_granularity", t.tpGranularity);
}

}  // namespace fabricsim
