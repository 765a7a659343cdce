#include "sim/config/WorkloadLoader.h"
#include "sim/config/YamlDocuments.h"

#include <array>
#include <cctype>
#include <cmath>

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "sim/config/CalibrationLoader.h"
#include "sim/config/GpuPresets.h"
#include "sim/config/ModelPresets.h"
#include "sim/config/SetOverride.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/TpOverlapReader.h"
#include "sim/config/YamlReader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

using Node = YAML::Node;

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " | ") + n;
  return out;
}

/// `value` relative to the directory of `file` (absolute paths kept), normalised.
std::string resolveRelative(const std::string& file, const std::string& value) {
  const std::filesystem::path v(value);
  if (v.is_absolute()) return v.lexically_normal().string();
  return (std::filesystem::path(file).parent_path() / v).lexically_normal().string();
}

void readPattern(YamlReader& r, const Node& root, WorkloadSpec& spec) {
  r.checkKeys(root, "",
              {"kind", "name", "pattern", "message_size", "start", "repetitions", "gap", "incast",
               "traffic_class", "gpus", "qps_per_pair"});
  r.getString(root, "", "name", spec.name);
  PatternSpec& p = spec.pattern;
  std::string pattern = "permutation";
  if (r.getChoice(root, "", "pattern", pattern, {"permutation", "incast", "all-to-all"}, true)) {
    p.pattern = pattern == "incast"       ? PatternKind::Incast
                : pattern == "all-to-all" ? PatternKind::AllToAll
                                          : PatternKind::Permutation;
  }
  r.getBytes(root, "", "message_size", p.messageSize, false, 1);
  if (r.getTime(root, "", "start", p.start)) spec.start = p.start;
  r.getInt(root, "", "repetitions", p.repetitions, 1, 1'000'000'000);
  r.getTime(root, "", "gap", p.gap);
  r.getInt(root, "", "traffic_class", p.trafficClass, 0, 7);
  r.getInt(root, "", "qps_per_pair", p.qpsPerPair, 1, 65536);
  if (YamlReader::has(root, "incast")) {
    const Node in = root["incast"];
    if (p.pattern != PatternKind::Incast) {
      r.error(in, "incast",
              "'incast' settings apply only to 'pattern: incast', found pattern '" + pattern + "'");
    } else if (r.expectMap(in, "incast")) {
      r.checkKeys(in, "incast", {"senders", "receiver"});
      r.getInt(in, "incast", "senders", p.incastSenders, 0, INT32_MAX);
      int receiver = 0;
      if (r.getInt(in, "incast", "receiver", receiver, 0, INT32_MAX))
        p.incastReceiver = static_cast<uint32_t>(receiver);
    }
  }
  if (YamlReader::has(root, "gpus")) {
    const Node g = root["gpus"];
    if (r.expectMap(g, "gpus")) {
      r.checkKeys(g, "gpus", {"first", "count"});
      int first = 0;
      int count = 0;
      if (r.getInt(g, "gpus", "first", first, 0, INT32_MAX)) p.firstGpu = static_cast<uint32_t>(first);
      if (r.getInt(g, "gpus", "count", count, 2, INT32_MAX)) p.gpus = static_cast<uint32_t>(count);
    }
  }
}

/// The node at map[key] if present, else the map itself (where a diagnostic about a value that
/// came from a preset points).
Node nodeOr(const Node& map, const char* key) {
  return YamlReader::has(map, key) ? map[key] : map;
}

void readPlacement(YamlReader& r, const Node& root, PlacementSpec& pl) {
  if (!YamlReader::has(root, "placement")) return;
  const Node n = root["placement"];
  if (n.IsScalar()) {
    std::string policy;
    if (r.getChoice(root, "", "placement", policy, {"rail-aligned", "in-order", "random-hosts", "random"}))
      pl.policy = *parsePlacementPolicy(policy);
  } else if (n.IsMap()) {
    r.checkKeys(n, "placement", {"policy", "first_gpu"});
    std::string policy;
    if (r.getChoice(n, "placement", "policy", policy, {"rail-aligned", "in-order", "random-hosts", "random"}))
      pl.policy = *parsePlacementPolicy(policy);
    int first = 0;
    if (r.getInt(n, "placement", "first_gpu", first, 0, INT32_MAX)) {
      pl.explicitRange = true;
      pl.firstGpu = static_cast<uint32_t>(first);
    }
  } else {
    r.error(n, "placement",
            "expected rail-aligned | in-order | random-hosts | random or a map {policy, first_gpu}, found " +
                YamlReader::describe(n));
  }
}

/// The `gpu:` preset (h100-sxm when `gpu` is absent); its other keys come after calibration.
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
    r.checkKeys(n, "gpu",
                {"preset", "peak", "peak_fp8", "hbm_bandwidth", "efficiency", "comm_sm_share", "sms",
                 "in_step_rate"});
    GpuSpec base;  // a custom GPU starts from GpuSpec's defaults
    std::string preset;
    if (r.getString(n, "gpu", "preset", preset)) {
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
  r.checkKeys(
      n, "model",
      {"preset", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "seq_len", "vocab", "gated_mlp", "causal",
       "tied_embeddings", "experts", "top_k", "moe_ffn_hidden", "capacity_factor"});
  ModelSpec base;
  std::string preset;
  bool fromPreset = false;
  if (r.getString(n, "model", "preset", preset)) {
    if (auto p = modelPreset(preset)) {
      base = *p;
      fromPreset = true;
    } else {
      r.error(n["preset"], "model.preset", "expected one of " + names + ", found '" + preset + "'");
    }
  }
  const bool req = !fromPreset && !YamlReader::has(n, "preset");
  r.getInt(n, "model", "layers", base.layers, 1, INT32_MAX, req);
  r.getInt(n, "model", "hidden", base.hidden, 1, INT32_MAX, req);
  r.getInt(n, "model", "ffn_hidden", base.ffnHidden, 1, INT32_MAX);
  r.getInt(n, "model", "heads", base.heads, 1, INT32_MAX, req);
  r.getInt(n, "model", "kv_heads", base.kvHeads, 1, INT32_MAX);
  r.getInt(n, "model", "seq_len", base.seqLen, 1, INT32_MAX, req);
  r.getInt(n, "model", "vocab", base.vocab, 0, INT32_MAX);
  r.getBool(n, "model", "gated_mlp", base.gatedMlp);
  r.getBool(n, "model", "causal", base.causal);
  r.getBool(n, "model", "tied_embeddings", base.tiedEmbeddings);
  r.getInt(n, "model", "experts", base.experts, 0, 1'000'000);
  r.getInt(n, "model", "top_k", base.topK, 1, 1'000'000);
  r.getInt(n, "model", "moe_ffn_hidden", base.moeFfnHidden, 1, INT32_MAX);
  r.getDouble(n, "model", "capacity_factor", base.capacityFactor, 0, 1000);
  if (base.experts > 0 && base.topK == 0) base.topK = std::min(2, base.experts);  // Megatron's default top 2
  if (base.experts > 0 && base.topK > base.experts)
    r.error(n["top_k"], "model.top_k",
            "top_k (" + std::to_string(base.topK) + ") must be at most experts (" + std::to_string(base.experts) + ")");
  m = base;
  if (r.diagnostics().size() != before) return;
  if (m.ffnHidden == 0) m.ffnHidden = 4 * m.hidden;
  if (m.kvHeads == 0) m.kvHeads = m.heads;
  if (m.hidden % m.heads != 0) {
    r.error(nodeOr(n, "heads"), "model.heads",
            "hidden (" + std::to_string(m.hidden) + ") must be divisible by heads, found heads " +
                std::to_string(m.heads));
  } else if (m.heads % m.kvHeads != 0) {
    r.error(nodeOr(n, "kv_heads"), "model.kv_heads",
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
  r.checkKeys(n, path,
              {"tp", "pp", "dp", "cp", "ep", "etp", "micro_batch", "global_batch", "schedule",
               "virtual_stages", "sequence_parallel", "distributed_optimizer", "recompute",
               "overlap_grad_reduce", "overlap_param_gather", "defer_embedding_wgrad_compute",
               "wgrad_deferral_limit", "tp_comm_overlap", "tp_comm_overlap_cfg"});
  bool ok = r.getInt(n, path, "tp", p.tp, 1, INT32_MAX) || !YamlReader::has(n, "tp");
  ok = (r.getInt(n, path, "pp", p.pp, 1, INT32_MAX) || !YamlReader::has(n, "pp")) && ok;
  ok = (r.getInt(n, path, "dp", p.dp, 1, INT32_MAX) || !YamlReader::has(n, "dp")) && ok;
  r.getInt(n, path, "cp", p.cp, 1, INT32_MAX);
  r.getInt(n, path, "ep", p.ep, 1, INT32_MAX);
  if (r.getInt(n, path, "etp", p.etp, 1, INT32_MAX) && p.etp != 1 && p.etp != p.tp) {
    r.error(n["etp"], "parallelism.etp",
            "etp must be 1 or tp (" + std::to_string(p.tp) + "), found " + std::to_string(p.etp) +
                ": expert tensor parallelism over part of the TP group is not modelled");
  }
  ok = (r.getInt(n, path, "micro_batch", p.microBatch, 1, INT32_MAX) || !YamlReader::has(n, "micro_batch")) &&
       ok;
  const bool gbGiven = YamlReader::has(n, "global_batch");
  const bool gbOk = r.getInt(n, path, "global_batch", p.globalBatch, 1, INT32_MAX);
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
  r.getChoice(n, path, "schedule", p.schedule, {"1f1b", "interleaved"});
  if (r.getInt(n, path, "virtual_stages", p.virtualStages, 1, INT32_MAX) && p.schedule != "interleaved") {
    r.error(n["virtual_stages"], "parallelism.virtual_stages",
            "virtual_stages applies only to 'schedule: interleaved', found schedule '" + p.schedule + "'");
  }
  if (r.getBool(n, path, "sequence_parallel", p.sequenceParallel) && p.sequenceParallel && p.tp == 1) {
    r.error(n["sequence_parallel"], "parallelism.sequence_parallel",
            "sequence_parallel needs tensor parallelism (tp > 1), found tp 1");
  }
  r.getBool(n, path, "distributed_optimizer", p.distributedOptimizer);
  r.getChoice(n, path, "recompute", p.recompute, {"none", "full"});
  r.getBool(n, path, "overlap_grad_reduce", p.overlapGradReduce);
  if (r.getBool(n, path, "overlap_param_gather", p.overlapParamGather) && p.overlapParamGather &&
      !p.distributedOptimizer) {
    r.error(n["overlap_param_gather"], "parallelism.overlap_param_gather",
            "overlap_param_gather needs distributed_optimizer: true (only the distributed optimizer "
            "all-gathers parameters)");
  }
  if (r.getBool(n, path, "defer_embedding_wgrad_compute", p.deferEmbeddingWgrad) && p.deferEmbeddingWgrad &&
      p.pp == 1) {
    r.error(n["defer_embedding_wgrad_compute"], "parallelism.defer_embedding_wgrad_compute",
            "defer_embedding_wgrad_compute needs pipeline parallelism (pp > 1), found pp 1: the deferred "
            "GEMMs run in the pipeline flush (Megatron refuses it too)");
  }
  if (r.getInt(n, path, "wgrad_deferral_limit", p.wgradDeferralLimit, 0, INT32_MAX) &&
      !p.deferEmbeddingWgrad) {
    r.error(n["wgrad_deferral_limit"], "parallelism.wgrad_deferral_limit",
            "wgrad_deferral_limit applies only with defer_embedding_wgrad_compute: true");
  }
  if (r.getBool(n, path, "tp_comm_overlap", p.tpCommOverlap) && p.tpCommOverlap && p.tp == 1) {
    r.error(n["tp_comm_overlap"], "parallelism.tp_comm_overlap",
            "tp_comm_overlap needs tensor parallelism (tp > 1), found tp 1");
  }
  readTpOverlapConfig(r, n, p.tpCommOverlapCfg);
  if (YamlReader::has(n, "tp_comm_overlap_cfg") && !p.tpCommOverlap) {
    r.error(n["tp_comm_overlap_cfg"], "parallelism.tp_comm_overlap_cfg",
            "tp_comm_overlap_cfg applies only with tp_comm_overlap: true");
  }
}

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
            experts == 0 ? "ep (" + std::to_string(ep) + ") needs a model with experts (model.experts > 0)"
                         : "ep (" + std::to_string(ep) + ") must divide model.experts (" + std::to_string(experts) +
                               "): each expert-parallel rank holds experts / ep experts");
  }
  if (experts > 0 && t.parallelism.tp > 1 && !t.parallelism.sequenceParallel) {
    r.error(root["parallelism"], "parallelism.sequence_parallel",
            "a model with experts and tp > 1 needs sequence_parallel: true (Megatron's MoE layers take "
            "sequence-parallel tokens)");
  }
  r.getInt(root, "", "iterations", t.iterations, 1, 1'000'000);
  if (r.getChoice(root, "", "dtype", t.dtype, {"bf16", "fp16", "fp32", "fp8"}))
    t.dtypeBytes = t.dtype == "fp32" ? 4 : t.dtype == "fp8" ? 1 : 2;
  r.getBytes(root, "", "dp_bucket", t.dpBucketBytes, false, 1);
  if (r.getChoice(root, "", "grad_reduce_dtype", t.gradReduceDtype, {"fp32", "bf16", "fp16"}))
    t.gradReduceBytes = t.gradReduceDtype == "fp32" ? 4 : 2;
  r.getBool(root, "", "elementwise", t.elementwise);
  r.getBool(root, "", "sp_regather", t.spRegather);
  r.getBool(root, "", "communication", t.communication);
  r.getChoice(root, "", "tp_granularity", t.tpGranularity, {"layer", "stage"});
}

int elementBytesOf(const std::string& type) {
  if (type == "double" || type == "int64" || type == "uint64") return 8;
  if (type == "float" || type == "int32" || type == "uint32") return 4;
  if (type == "half" || type == "bfloat16") return 2;
  return 1;  // int8, uint8, fp8_e4m3, fp8_e5m2
}

void readCollective(YamlReader& r, const Node& root, WorkloadSpec& spec) {
  CollectiveSweepSpec& c = spec.collective;
  std::string op;
  if (r.getChoice(root, "", "operation", op,
                  {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"}, true))
    c.op = *parseCollectiveOp(op);
  std::string algorithm;
  if (r.getChoice(root, "", "algorithm", algorithm,
                  {"auto", "ring", "tree", "hierarchical", "nvls", "nvls_tree", "pat"})) {
    const Node cs = YamlReader::has(root, "collectives") ? root["collectives"] : Node();
    const Node other = YamlReader::has(cs, "algorithm") ? cs["algorithm"] : Node();
    if (other.IsDefined() && other.IsScalar() && other.Scalar() != algorithm) {
      r.error(root["algorithm"], "algorithm",
              "'algorithm: " + algorithm + "' contradicts 'collectives.algorithm: " + other.Scalar() +
                  "'; give the algorithm once");
    } else {
      spec.tuning.algorithm = *parseCollectiveAlgorithm(algorithm);
    }
  }
  if (YamlReader::has(root, "sizes")) {
    const Node s = root["sizes"];
    if (r.expectMap(s, "sizes")) {
      r.checkKeys(s, "sizes", {"min", "max", "factor", "step"});
      const bool minOk = r.getBytes(s, "sizes", "min", c.minBytes, false, 1) || !YamlReader::has(s, "min");
      const bool maxOk = r.getBytes(s, "sizes", "max", c.maxBytes, false, 1) || !YamlReader::has(s, "max");
      if (minOk && maxOk && c.minBytes > c.maxBytes) {
        r.error(nodeOr(s, "max"), "sizes.max",
                "expected max >= min (" + std::to_string(c.minBytes) + " bytes), found " +
                    std::to_string(c.maxBytes) + " bytes");
      }
      getDoubleAbove(r, s, "sizes", "factor", c.factor, 1, 1e300);
      if (YamlReader::has(s, "factor") && YamlReader::has(s, "step")) {
        r.error(s["step"], "sizes.step",
                "'factor' and 'step' are mutually exclusive (multiply or add between sizes); give one");
      } else {
        r.getBytes(s, "sizes", "step", c.stepBytes, false, 1);
      }
      // Each size is simulated (warm-up and timed calls): a factor barely above 1 or a step far
      // below the range would ask for millions of them. Counted as the sweep steps (a step of
      // at least one byte), up to the limit.
      constexpr uint64_t kMaxSizes = 10'000;
      uint64_t count = 0;
      for (double at = static_cast<double>(c.minBytes);
           at <= static_cast<double>(c.maxBytes) && count <= kMaxSizes; ++count) {
        const double next =
            c.stepBytes > 0 ? at + static_cast<double>(c.stepBytes) : std::round(at * c.factor);
        at = std::max(next, at + 1);
      }
      if (count > kMaxSizes) {
        const char* key = YamlReader::has(s, "step") ? "step" : "factor";
        r.error(nodeOr(s, key), std::string("sizes.") + key,
                "the range " + std::to_string(c.minBytes) + ".." + std::to_string(c.maxBytes) +
                    " bytes would hold more than " + std::to_string(kMaxSizes) +
                    " sizes; expected a larger " + key + " (nccl-tests' -f 2 gives one size per doubling)");
      }
    }
  }
  int ranks = 0;
  int hosts = 0;
  if (r.getInt(root, "", "ranks", ranks, 2, INT32_MAX)) c.ranks = static_cast<uint32_t>(ranks);
  if (YamlReader::has(root, "ranks") && YamlReader::has(root, "hosts")) {
    r.error(root["hosts"], "hosts", "'ranks' and 'hosts' are mutually exclusive; give one");
  } else if (r.getInt(root, "", "hosts", hosts, 1, INT32_MAX)) {
    c.hosts = static_cast<uint32_t>(hosts);
  }
  if (YamlReader::has(root, "gpus_per_host") && !YamlReader::has(root, "hosts")) {
    r.error(root["gpus_per_host"], "gpus_per_host", "'gpus_per_host' applies only with 'hosts'");
  } else if (r.getInt(root, "", "gpus_per_host", c.gpusPerHost, 1, 1024) && c.hosts > 0) {
    c.ranks = c.hosts * static_cast<uint32_t>(c.gpusPerHost);
  }
  r.getInt(root, "", "warmup", c.warmup, 0, 1'000'000);
  r.getInt(root, "", "iterations", c.iterations, 1, 1'000'000);
  if (r.getChoice(root, "", "data_type", c.dataType,
                  {"float", "half", "bfloat16", "double", "int8", "uint8", "int32", "uint32", "int64",
                   "uint64", "fp8_e4m3", "fp8_e5m2"}))
    c.elementBytes = elementBytesOf(c.dataType);
  int rootRank = 0;
  if (r.getInt(root, "", "root", rootRank, 0, INT32_MAX)) {
    if (c.ranks > 0 && static_cast<uint32_t>(rootRank) >= c.ranks) {
      r.error(root["root"], "root",
              "expected a rank below the job's " + std::to_string(c.ranks) + " ranks, found " +
                  std::to_string(rootRank));
    } else {
      c.root = static_cast<uint32_t>(rootRank);
    }
  }
}

/// Keys, GPU preset, calibration, collectives and placement of collective / training / trace jobs,
/// then the kind's own keys. Problems in the calibration file go to `calibrationDiags`.
void readJob(YamlReader& r, const Node& root, WorkloadSpec& spec, std::vector<Diagnostic>& calibrationDiags) {
  if (spec.kind == "collective") {
    r.checkKeys(root, "",
                {"kind", "name", "start", "collectives", "placement", "calibration", "operation", "algorithm",
                 "sizes", "ranks", "hosts", "gpus_per_host", "warmup", "iterations", "data_type", "root"});
  } else if (spec.kind == "training") {
    r.checkKeys(root, "",
                {"kind", "name", "start", "collectives", "placement", "calibration", "model", "gpu",
                 "parallelism", "iterations", "dtype", "dp_bucket", "communication", "tp_granularity",
                 "grad_reduce_dtype", "elementwise", "sp_regather"});
  } else if (spec.kind == "chakra") {
    r.checkKeys(root, "",
                {"kind", "name", "start", "collectives", "placement", "calibration", "chakra", "comm_groups",
                 "ranks", "iterations"});
  } else {
    r.checkKeys(root, "", {"kind", "name", "start", "collectives", "placement", "calibration", "trace"});
  }
  r.getString(root, "", "name", spec.name);
  r.getTime(root, "", "start", spec.start);
  // Precedence: preset < calibration file < this file's explicit keys.
  GpuSpec& gpu = spec.training.gpu;
  if (spec.kind == "training") readGpuPreset(r, root, gpu);
  std::string calibration;
  if (r.getString(root, "", "calibration", calibration)) {
    spec.calibrationPath = resolveRelative(r.file(), calibration);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(spec.calibrationPath, ec)) {
      r.error(root["calibration"], "calibration",
              "cannot read calibration file '" + spec.calibrationPath +
                  "' (paths are relative to the workload file's directory)");
    } else {
      try {
        applyCalibrationFile(spec.calibrationPath, gpu, spec.tuning);
      } catch (const InputError& e) {
        calibrationDiags.insert(calibrationDiags.end(), e.diagnostics().begin(), e.diagnostics().end());
      }
    }
  }
  if (spec.kind == "training" && YamlReader::has(root, "gpu") && root["gpu"].IsMap())
    readGpuFigures(r, root["gpu"], "gpu", gpu);
  if (YamlReader::has(root, "collectives"))
    readCollectiveTuning(r, root["collectives"], "collectives", spec.tuning);
  spec.tuningExplicit = YamlReader::has(root, "collectives") || YamlReader::has(root, "calibration");
  readPlacement(r, root, spec.placement);

  if (spec.kind == "collective") {
    readCollective(r, root, spec);
  } else if (spec.kind == "training") {
    readTraining(r, root, spec.training);
  } else if (spec.kind == "chakra") {
    std::string path;
    if (r.getString(root, "", "chakra", path, true)) spec.chakra.prefix = resolveRelative(r.file(), path);
    if (r.getString(root, "", "comm_groups", path)) spec.chakra.commGroups = resolveRelative(r.file(), path);
    int ranks = 0;
    if (r.getInt(root, "", "ranks", ranks, 1, 1 << 24)) spec.chakra.ranks = static_cast<uint32_t>(ranks);
    r.getInt(root, "", "iterations", spec.chakra.iterations, 1, 1 << 20);
  } else {
    std::string trace;
    if (r.getString(root, "", "trace", trace, true)) spec.trace.path = resolveRelative(r.file(), trace);
  }
}

}  // namespace

const char* toString(PatternKind k) {
  switch (k) {
    case PatternKind::Permutation:
      return "permutation";
    case PatternKind::Incast:
      return "incast";
    case PatternKind::AllToAll:
      return "all-to-all";
  }
  return "unknown";
}

const char* toString(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return "all_reduce";
    case CollectiveOp::AllGather:
      return "all_gather";
    case CollectiveOp::ReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::AllToAll:
      return "alltoall";
    case CollectiveOp::Broadcast:
      return "broadcast";
    case CollectiveOp::SendRecv:
      return "sendrecv";
  }
  return "unknown";
}

const char* toString(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Auto:
      return "auto";
    case CollectiveAlgorithm::Ring:
      return "ring";
    case CollectiveAlgorithm::Tree:
      return "tree";
    case CollectiveAlgorithm::Hierarchical:
      return "hierarchical";
    case CollectiveAlgorithm::Direct:
      return "direct";
    case CollectiveAlgorithm::Nvls:
      return "nvls";
    case CollectiveAlgorithm::NvlsTree:
      return "nvls_tree";
    case CollectiveAlgorithm::Pat:
      return "pat";
  }
  return "unknown";
}

const char* toString(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::Auto:
      return "auto";
    case CollectiveProtocol::LL:
      return "ll";
    case CollectiveProtocol::LL128:
      return "ll128";
    case CollectiveProtocol::Simple:
      return "simple";
  }
  return "unknown";
}

std::optional<CollectiveProtocol> parseCollectiveProtocol(std::string_view s) {
  for (auto p : {CollectiveProtocol::Auto, CollectiveProtocol::LL, CollectiveProtocol::LL128,
                 CollectiveProtocol::Simple})
    if (s == toString(p)) return p;
  return std::nullopt;
}

namespace {

/// NCCL's algorithm names (ncclAlgoStr, lower case), in its order: the bits of algorithmsAllowed.
constexpr std::array<const char*, 7> kNcclAlgoNames = {"tree",  "ring",     "collnetdirect", "collnetchain",
                                                       "nvls",  "nvlstree", "pat"};
constexpr std::array<const char*, 7> kNcclAlgoSpelling = {"Tree", "Ring",     "CollNetDirect", "CollNetChain",
                                                          "NVLS", "NVLSTree", "PAT"};
/// NCCL's protocol names, in its order: the bits of protocolsAllowed.
constexpr std::array<const char*, 3> kNcclProtoNames = {"ll", "ll128", "simple"};

/// An NCCL_ALGO / NCCL_PROTO style list ("A,B" or "^A,B"; names in any case, underscores
/// ignored) as bits in the order of `names`; nullopt for an unknown name or a list allowing none.
template <size_t N>
std::optional<uint8_t> parseNcclList(std::string_view s, const std::array<const char*, N>& names) {
  static_assert(N <= 8);
  const bool exclude = !s.empty() && s.front() == '^';
  if (exclude) s.remove_prefix(1);
  uint8_t listed = 0;
  while (true) {
    const size_t comma = s.find(',');
    std::string name(s.substr(0, comma));
    std::erase(name, '_');
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t i = 0;
    while (i < N && name != names[i]) ++i;
    if (i == N) return std::nullopt;
    listed |= static_cast<uint8_t>(1u << i);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  const auto all = static_cast<uint8_t>((1u << N) - 1);
  const uint8_t allowed = exclude ? static_cast<uint8_t>(~listed & all) : listed;
  if (allowed == 0) return std::nullopt;
  return allowed;
}

}  // namespace

std::optional<uint8_t> parseNcclProtoList(std::string_view s) { return parseNcclList(s, kNcclProtoNames); }

std::optional<uint8_t> parseNcclAlgoList(std::string_view s) { return parseNcclList(s, kNcclAlgoNames); }

std::optional<std::pair<CollectiveAlgorithm, uint8_t>> parseAlgorithmSetting(std::string_view s) {
  if (const auto one = parseCollectiveAlgorithm(s)) return std::pair{*one, uint8_t{0x7f}};
  if (const auto list = parseNcclAlgoList(s)) return std::pair{CollectiveAlgorithm::Auto, *list};
  return std::nullopt;
}

std::optional<std::pair<CollectiveProtocol, uint8_t>> parseProtocolSetting(std::string_view s) {
  if (const auto one = parseCollectiveProtocol(s)) return std::pair{*one, uint8_t{0b111}};
  if (const auto list = parseNcclProtoList(s)) return std::pair{CollectiveProtocol::Auto, *list};
  return std::nullopt;
}

std::string ncclAlgoList(uint8_t allowed) {
  std::string out;
  for (size_t i = 0; i < kNcclAlgoSpelling.size(); ++i)
    if (allowed & (1u << i)) {
      if (!out.empty()) out += ',';
      out += kNcclAlgoSpelling[i];
    }
  return out;
}

std::string ncclProtoList(uint8_t allowed) {
  std::string out;
  for (const auto& [bit, name] : {std::pair{1, "LL"}, {2, "LL128"}, {4, "Simple"}})
    if (allowed & bit) {
      if (!out.empty()) out += ',';
      out += name;
    }
  return out;
}

const char* toString(PlacementPolicy p) {
  switch (p) {
    case PlacementPolicy::RailAligned:
      return "rail-aligned";
    case PlacementPolicy::RandomHosts:
      return "random-hosts";
    case PlacementPolicy::Random:
      return "random";
    case PlacementPolicy::InOrder:
      return "in-order";
  }
  return "unknown";
}

std::optional<CollectiveOp> parseCollectiveOp(std::string_view s) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                  CollectiveOp::AllToAll, CollectiveOp::Broadcast, CollectiveOp::SendRecv})
    if (s == toString(op)) return op;
  return std::nullopt;
}

std::optional<CollectiveAlgorithm> parseCollectiveAlgorithm(std::string_view s) {
  for (auto a : {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
                 CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::Direct, CollectiveAlgorithm::Nvls,
                 CollectiveAlgorithm::NvlsTree, CollectiveAlgorithm::Pat})
    if (s == toString(a)) return a;
  return std::nullopt;
}

std::optional<PlacementPolicy> parsePlacementPolicy(std::string_view s) {
  for (auto p : {PlacementPolicy::RailAligned, PlacementPolicy::InOrder, PlacementPolicy::RandomHosts,
                 PlacementPolicy::Random})
    if (s == toString(p)) return p;
  return std::nullopt;
}

WorkloadSpec loadWorkloadFile(const std::string& path, const std::vector<std::string>& sets) {
  return parseWorkloadYaml(readInputFile(path), path, sets);
}

WorkloadSpec parseWorkloadYaml(const std::string& yamlText, const std::string& file,
                               const std::vector<std::string>& sets) {
  std::vector<Node> docs;
  try {
    docs = loadYamlDocuments(yamlText, 2);  // a second one is an error below
  } catch (const YAML::Exception& e) {
    throw InputError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                     "", "invalid YAML: " + e.msg);
  }
  YamlReader r(file);
  if (docs.empty() && !sets.empty()) docs.emplace_back();
  for (const auto& a : sets) {
    try {
      applySetOverride(docs[0], a);
    } catch (const InputError& e) {
      std::vector<Diagnostic> d = e.diagnostics();
      for (auto& x : d) x.file = file;
      throw InputError(std::move(d));
    }
    r.addOverride(parseSetAssignment(a).keyPath, a);
  }
  WorkloadSpec spec;
  spec.file = file;
  spec.name = std::filesystem::path(file).stem().string();
  if (docs.empty() || !docs[0].IsMap()) {
    r.error(docs.empty() ? Node() : docs[0], "",
            "expected a map of workload keys (kind, pattern, message_size, ...), found " +
                (docs.empty() ? std::string("an empty document") : YamlReader::describe(docs[0])));
    r.throwIfErrors();
  }
  if (docs.size() > 1) {
    r.error(docs[1], "",
            "expected one workload per file, found more than one YAML document (pass several files "
            "with --workload instead)");
  }
  const Node root = docs[0];
  if (!r.require(root, "", "kind")) r.throwIfErrors();
  if (!r.getChoice(root, "", "kind", spec.kind, {"pattern", "collective", "training", "trace", "chakra"}))
    r.throwIfErrors();

  std::vector<Diagnostic> calibrationDiags;
  if (spec.kind == "pattern")
    readPattern(r, root, spec);
  else
    readJob(r, root, spec, calibrationDiags);

  std::vector<Diagnostic> all;
  try {
    r.throwIfErrors();
  } catch (const InputError& e) {
    all = e.diagnostics();
  }
  all.insert(all.end(), calibrationDiags.begin(), calibrationDiags.end());
  if (!all.empty()) throw InputError(std::move(all));
  return spec;
}

}  // namespace fabricsim
