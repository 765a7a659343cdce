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
  r.checkKeys(root, "");
  r.read(root, "", "name", spec.name);
  PatternSpec& p = spec.pattern;
  std::string pattern = "permutation";
  if (r.read(root, "", "pattern", pattern)) {
    p.pattern = pattern == "incast"       ? PatternKind::Incast
                : pattern == "all-to-all" ? PatternKind::AllToAll
                                          : PatternKind::Permutation;
  }
  r.read(root, "", "message_size", p.messageSize);
  if (r.read(root, "", "start", p.start)) spec.start = p.start;
  r.read(root, "", "repetitions", p.repetitions);
  r.read(root, "", "gap", p.gap);
  r.read(root, "", "traffic_class", p.trafficClass);
  r.read(root, "", "qps_per_pair", p.qpsPerPair);
  if (YamlReader::has(root, "incast")) {
    const Node in = root["incast"];
    if (p.pattern != PatternKind::Incast) {
      r.error(in, "incast",
              "'incast' settings apply only to 'pattern: incast', found pattern '" + pattern + "'");
    } else if (r.expectMap(in, "incast")) {
      r.checkKeys(in, "incast");
      r.read(in, "incast", "senders", p.incastSenders);
      int receiver = 0;
      if (r.read(in, "incast", "receiver", receiver)) p.incastReceiver = static_cast<uint32_t>(receiver);
    }
  }
  if (YamlReader::has(root, "gpus")) {
    const Node g = root["gpus"];
    if (r.expectMap(g, "gpus")) {
      r.checkKeys(g, "gpus");
      int first = 0;
      int count = 0;
      if (r.read(g, "gpus", "first", first)) p.firstGpu = static_cast<uint32_t>(first);
      if (r.read(g, "gpus", "count", count)) p.gpus = static_cast<uint32_t>(count);
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
    if (r.read(root, "", "placement", policy)) pl.policy = *parsePlacementPolicy(policy);
  } else if (n.IsMap()) {
    r.checkKeys(n, "placement");
    std::string policy;
    if (r.read(n, "placement", "policy", policy)) pl.policy = *parsePlacementPolicy(policy);
    int first = 0;
    if (r.read(n, "placement", "first_gpu", first)) {
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
      r.checkKeys(s, "sizes");
      const bool minOk = r.read(s, "sizes", "min", c.minBytes) || !YamlReader::has(s, "min");
      const bool maxOk = r.read(s, "sizes", "max", c.maxBytes) || !YamlReader::has(s, "max");
      if (minOk && maxOk && c.minBytes > c.maxBytes) {
        r.error(nodeOr(s, "max"), "sizes.max",
                "expected max >= min (" + std::to_string(c.minBytes) + " bytes), found " +
                    std::to_string(c.maxBytes) + " bytes");
      }
      r.read(s, "sizes", "factor", c.factor);
      if (YamlReader::has(s, "factor") && YamlReader::has(s, "step")) {
        r.error(s["step"], "sizes.step",
                "'factor' and 'step' are mutually exclusive (multiply or add between sizes); give one");
      } else {
        r.read(s, "sizes", "step", c.stepBytes);
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
  if (r.read(root, "", "ranks", ranks)) c.ranks = static_cast<uint32_t>(ranks);
  if (YamlReader::has(root, "ranks") && YamlReader::has(root, "hosts")) {
    r.error(root["hosts"], "hosts", "'ranks' and 'hosts' are mutually exclusive; give one");
  } else if (r.read(root, "", "hosts", hosts)) {
    c.hosts = static_cast<uint32_t>(hosts);
  }
  if (YamlReader::has(root, "gpus_per_host") && !YamlReader::has(root, "hosts")) {
    r.error(root["gpus_per_host"], "gpus_per_host", "'gpus_per_host' applies only with 'hosts'");
  } else if (r.read(root, "", "gpus_per_host", c.gpusPerHost) && c.hosts > 0) {
    c.ranks = c.hosts * static_cast<uint32_t>(c.gpusPerHost);
  }
  r.read(root, "", "warmup", c.warmup);
  r.read(root, "", "iterations", c.iterations);
  if (r.getChoice(root, "", "data_type", c.dataType,
                  {"float", "half", "bfloat16", "double", "int8", "uint8", "int32", "uint32", "int64",
                   "uint64", "fp8_e4m3", "fp8_e5m2"}))
    c.elementBytes = elementBytesOf(c.dataType);
  int rootRank = 0;
  if (r.read(root, "", "root", rootRank)) {
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
  r.checkKeys(root, "");  // the keys of this kind (workloadSchema's conditions)
  r.read(root, "", "name", spec.name);
  r.read(root, "", "start", spec.start);
  // Precedence: preset < calibration file < this file's explicit keys.
  GpuSpec& gpu = spec.training.gpu;
  if (spec.kind == "training") readGpuPreset(r, root, gpu);
  std::string calibration;
  if (r.read(root, "", "calibration", calibration)) {
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
    if (r.read(root, "", "chakra", path)) spec.chakra.prefix = resolveRelative(r.file(), path);
    if (r.read(root, "", "comm_groups", path)) spec.chakra.commGroups = resolveRelative(r.file(), path);
    int ranks = 0;
    if (r.read(root, "", "ranks", ranks)) spec.chakra.ranks = static_cast<uint32_t>(ranks);
    r.read(root, "", "iterations", spec.chakra.iterations);
  } else {
    std::string trace;
    if (r.read(root, "", "trace", trace)) spec.trace.path = resolveRelative(r.file(), trace);
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
  r.useSchema(workloadSchema(), root);
  if (!r.require(root, "", "kind")) r.throwIfErrors();
  if (!r.read(root, "", "kind", spec.kind)) r.throwIfErrors();

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
