#include "sim/config/WorkloadLoader.h"
#include "sim/config/YamlDocuments.h"

#include <array>
#include <cctype>
#include <cmath>

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "sim/config/CalibrationLoader.h"
#include "sim/config/SetOverride.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/TrainingJobReader.h"
#include "sim/config/YamlReader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

using Node = YAML::Node;

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

int elementBytesOf(const std::string& type) {
  if (type == "double" || type == "int64" || type == "uint64") return 8;
  if (type == "float" || type == "int32" || type == "uint32") return 4;
  if (type == "half" || type == "bfloat16") return 2;
  return 1;  // int8, uint8, fp8_e4m3, fp8_e5m2
}

void readCollective(YamlReader& r, const Node& root, WorkloadSpec& spec) {
  CollectiveSweepSpec& c = spec.collective;
  std::string op;
  if (r.read(root, "", "operation", op)) c.op = *parseCollectiveOp(op);
  std::string algorithm;
  if (r.read(root, "", "algorithm", algorithm)) {
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
        r.error(YamlReader::valueOr(s, "max"), "sizes.max",
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
        r.error(YamlReader::valueOr(s, key), std::string("sizes.") + key,
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
  if (r.read(root, "", "data_type", c.dataType)) c.elementBytes = elementBytesOf(c.dataType);
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
