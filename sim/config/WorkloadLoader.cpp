#include "sim/config/WorkloadLoader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "sim/config/TopologyLoader.h"
#include "sim/config/YamlReader.h"
#include "sim/core/Error.h"

namespace fabricsim {

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

WorkloadSpec loadWorkloadFile(const std::string& path) { return parseWorkloadYaml(readInputFile(path), path); }

WorkloadSpec parseWorkloadYaml(const std::string& yamlText, const std::string& file) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(yamlText);
  } catch (const YAML::Exception& e) {
    throw InputError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1, "",
                     "invalid YAML: " + e.msg);
  }
  YamlReader r(file);
  WorkloadSpec spec;
  spec.file = file;
  spec.name = std::filesystem::path(file).stem().string();
  if (docs.empty() || !docs[0].IsMap()) {
    r.error(docs.empty() ? YAML::Node() : docs[0], "",
            "expected a map of workload keys (kind, pattern, message_size, ...), found " +
                (docs.empty() ? std::string("an empty document") : YamlReader::describe(docs[0])));
    r.throwIfErrors();
  }
  if (docs.size() > 1) {
    r.error(docs[1], "", "expected one workload per file, found " + std::to_string(docs.size()) +
                             " YAML documents (pass several files with --workload instead)");
  }
  const YAML::Node root = docs[0];
  if (!r.require(root, "", "kind")) r.throwIfErrors();
  const YAML::Node kind = root["kind"];
  if (!kind.IsScalar() || kind.Scalar() != "pattern") {
    const std::string found = YamlReader::describe(kind);
    const bool known = kind.IsScalar() && (kind.Scalar() == "collective" || kind.Scalar() == "training" ||
                                           kind.Scalar() == "trace");
    r.error(kind, "kind",
            known ? "kind '" + kind.Scalar() + "' is not supported yet; supported: pattern"
                  : "expected one of pattern (collective, training and trace are planned), found " + found);
    r.throwIfErrors();
  }
  spec.kind = "pattern";
  r.checkKeys(root, "", {"kind", "name", "pattern", "message_size", "start", "repetitions", "gap", "incast",
                         "traffic_class", "gpus", "qps_per_pair"});
  r.getString(root, "", "name", spec.name);
  PatternSpec& p = spec.pattern;
  std::string pattern = "permutation";
  if (r.getChoice(root, "", "pattern", pattern, {"permutation", "incast", "all-to-all"}, true)) {
    p.pattern = pattern == "incast" ? PatternKind::Incast
                : pattern == "all-to-all" ? PatternKind::AllToAll
                                          : PatternKind::Permutation;
  }
  r.getBytes(root, "", "message_size", p.messageSize, false, 1);
  r.getTime(root, "", "start", p.start);
  r.getInt(root, "", "repetitions", p.repetitions, 1, 1'000'000'000);
  r.getTime(root, "", "gap", p.gap);
  r.getInt(root, "", "traffic_class", p.trafficClass, 0, 7);
  r.getInt(root, "", "qps_per_pair", p.qpsPerPair, 1, 65536);
  if (YamlReader::has(root, "incast")) {
    const YAML::Node in = root["incast"];
    if (p.pattern != PatternKind::Incast) {
      r.error(in, "incast", "'incast' settings apply only to 'pattern: incast', found pattern '" + pattern + "'");
    } else if (r.expectMap(in, "incast")) {
      r.checkKeys(in, "incast", {"senders", "receiver"});
      r.getInt(in, "incast", "senders", p.incastSenders, 0, INT32_MAX);
      int receiver = 0;
      if (r.getInt(in, "incast", "receiver", receiver, 0, INT32_MAX)) p.incastReceiver = static_cast<uint32_t>(receiver);
    }
  }
  if (YamlReader::has(root, "gpus")) {
    const YAML::Node g = root["gpus"];
    if (r.expectMap(g, "gpus")) {
      r.checkKeys(g, "gpus", {"first", "count"});
      int first = 0;
      int count = 0;
      if (r.getInt(g, "gpus", "first", first, 0, INT32_MAX)) p.firstGpu = static_cast<uint32_t>(first);
      if (r.getInt(g, "gpus", "count", count, 2, INT32_MAX)) p.gpus = static_cast<uint32_t>(count);
    }
  }
  r.throwIfErrors();
  return spec;
}

}  // namespace fabricsim
