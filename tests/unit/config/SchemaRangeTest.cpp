// Every range and choice list the topology, workload and calibration schemas state is the one
// their loader enforces: for each key with a bound, a value just outside it is refused at that
// key's path, and a value just inside it draws no complaint at that path. The values are built
// here from the schema's numbers alone (bound -/+ one unit step), so a loader that checks a
// different range, or none, or a schema entry that states a range the loader does not apply,
// fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "sim/config/CalibrationLoader.h"
#include "sim/config/Schema.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const std::string kLeafSpine = "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2}\n";

/// A file in which `k` exists: the shape its condition names, InfiniBand for the InfiniBand NIC
/// timers (a RoCEv2 NIC refuses them at their path whatever their value).
std::string baseFor(const KeySpec& k) {
  std::string doc;
  if (k.when == "topology.kind: fat-tree")
    doc = "topology: {kind: fat-tree, radix: 4}\n";
  else if (k.when == "topology.kind: rail-optimized" || k.when == "topology.rail.kind: leaf-spine")
    doc =
        "topology: {kind: rail-optimized, rails: 2, rail: {kind: leaf-spine, leaves: 2, spines: 1, "
        "hosts_per_leaf: 2}}\n";
  else if (k.when == "topology.rail.kind: fat-tree")
    doc = "topology: {kind: rail-optimized, rails: 2, rail: {kind: fat-tree, radix: 4}}\n";
  else
    doc = kLeafSpine;
  if (k.path == "nic.local_ack_timeout" || k.path == "nic.retry_count")
    doc += "links: {technology: infiniband}\n";
  return doc;
}

/// A workload file in which `k` exists: the kind its condition names (a job's shared keys in
/// a collective job), with what that kind requires.
std::string workloadBaseFor(const KeySpec& k) {
  if (k.path.compare(0, 7, "incast.") == 0) return "kind: pattern\npattern: incast\n";
  if (k.when == "kind: pattern") return "kind: pattern\npattern: permutation\n";
  if (k.when == "kind: training") return "kind: training\nmodel: {preset: gpt3-175b}\n";
  if (k.when == "kind: chakra") return "kind: chakra\nchakra: traces/rank\n";
  if (k.when == "kind: trace") return "kind: trace\ntrace: t.json\n";
  if (k.path == "gpus_per_host") return "kind: collective\noperation: all_reduce\nhosts: 2\n";
  return "kind: collective\noperation: all_reduce\n";
}

/// "a.b.c" = v as a YAML document (calibration files take no --set).
std::string nested(const std::string& path, const std::string& value) {
  std::string doc, indent;
  for (size_t at = 0;;) {
    const size_t dot = path.find('.', at);
    doc += indent + path.substr(at, dot == std::string::npos ? std::string::npos : dot - at) + ":";
    if (dot == std::string::npos) break;
    doc += "\n";
    indent += "  ";
    at = dot + 1;
  }
  return doc + " " + value + "\n";
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// `x` (in the key's unit) written as the key's type expects it.
std::string valueText(const KeySpec& k, double x) {
  switch (k.type) {
    case KeyType::Time:
      return num(std::llround(x * 1e12)) + "ps";
    case KeyType::Bytes:
      return num(std::llround(x)) + "B";
    case KeyType::Rate:
      return num(std::llround(x)) + "bps";
    default:
      return num(x);
  }
}

/// One step of the key's unit: an integer, a picosecond, a byte, a bit/s; a relative 1e-6 for numbers.
double step(const KeySpec& k, double at) {
  switch (k.type) {
    case KeyType::Int:
    case KeyType::Bytes:
    case KeyType::Rate:
      return 1;
    case KeyType::Time:
      return 1e-12;
    default:
      return 1e-6 * std::max(1.0, std::fabs(at));
  }
}

enum class FileKind { Topology, Workload, Calibration };

const Schema& schemaOf(FileKind f) {
  return f == FileKind::Topology   ? topologySchema()
         : f == FileKind::Workload ? workloadSchema()
                                   : calibrationSchema();
}

/// The diagnostics a file whose key `k` holds `value` draws at `k`'s path.
std::vector<std::string> complaintsAt(FileKind kind, const KeySpec& k, const std::string& value) {
  std::vector<Diagnostic> diags;
  try {
    if (kind == FileKind::Calibration) {
      GpuSpec gpu;
      CollectiveTuning tuning;
      applyCalibrationYaml(nested(k.path, value), "range.yaml", gpu, tuning);
    } else if (kind == FileKind::Workload) {
      parseWorkloadYaml(workloadBaseFor(k), "range.yaml", {k.path + "=" + value});
    } else {
      std::string doc = baseFor(k);
      std::vector<std::string> sets;
      const std::string list = "failures[].";
      if (k.path.compare(0, list.size(), list) == 0) {
        // A list element cannot be given by --set: one flap whose key under test is replaced.
        std::map<std::string, std::string> f{
            {"at", "1us"}, {"action", "flap"}, {"link", "[leaf-0, spine-0]"}, {"down_for", "1us"}};
        f[k.path.substr(list.size())] = value;
        doc += "failures:\n  - {";
        bool first = true;
        for (const auto& [key, v] : f) {
          doc += (first ? "" : ", ") + key + ": " + v;
          first = false;
        }
        doc += "}\n";
      } else {
        sets.push_back(k.path + "=" + value);
      }
      parseTopologyYaml(doc, "range.yaml", sets);
    }
  } catch (const InputError& e) {
    diags = e.diagnostics();
  }
  std::vector<std::string> out;
  for (const auto& d : diags)
    if (Schema::normalise(d.key) == k.path) out.push_back(d.format());
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "\n  " + x;
  return s;
}

bool numeric(const KeySpec& k) {
  return k.type == KeyType::Int || k.type == KeyType::Double || k.type == KeyType::Time ||
         k.type == KeyType::Bytes || k.type == KeyType::Rate;
}

// Values inside a range that a rule relating keys refuses at the same path in the base file,
// with the value that meets both: the rule is the loader's, the range the schema's.
const std::map<std::string, std::string> kInsideValue{
    {"nic.max_rto", "1s"},                     // at least nic.retransmit_timeout (1 ms by default)
    {"topology.pods", "4"},                    // at most the radix (4 in the base file)
    {"topology.rail.pods", "4"},               // the same, per rail
    {"hosts.nics_per_host", "1"},              // divides gpus_per_host (1 in the base file)
    {"episodes.replicas", "8"},                // at most episodes.seeds (8 by default)
    {"switch.pfc.xoff", "1B"},                 // positive when it is the threshold in use (no dynamic_alpha)
    {"parallelism.etp", ""},                   // 1 or tp, and only with experts: no value fits the base job
    {"parallelism.virtual_stages", ""},        // only with schedule: interleaved
    {"parallelism.wgrad_deferral_limit", ""},  // only with defer_embedding_wgrad_compute
    {"parallelism.tp", "1"},                   // the model's heads and the GPUs bound it
    {"parallelism.cp", "1"},                   // divides seq_len
    {"parallelism.ep", "1"},                   // only with experts
    {"model.top_k", ""},                       // at most experts (gpt3-175b has none)
    {"model.heads", "96"},                     // divides hidden (12288)
    {"model.kv_heads", "96"},                  // divides heads (96)
    {"model.hidden", "12288"},                 // divisible by heads (96)
    {"sizes.max", "1MiB"},                     // at least sizes.min (1 MiB by default)
    {"sizes.factor", "2"},                     // at most 10,000 sizes from 1 MiB to 1 GiB
    {"sizes.step", "1MiB"},                    // the same
};

const std::vector<FileKind> kKinds{FileKind::Topology, FileKind::Workload, FileKind::Calibration};

TEST(SchemaRanges, AValueJustOutsideEveryRangeIsRefusedAtItsKey) {
  for (FileKind f : kKinds) {
    int checked = 0;
    for (const KeySpec& k : schemaOf(f).keys()) {
      if (!numeric(k)) continue;
      if (k.hasMin()) {
        const double below = k.minOpen ? k.min : k.min - step(k, k.min);
        EXPECT_FALSE(complaintsAt(f, k, valueText(k, below)).empty())
            << schemaOf(f).fileKind() << " " << k.path << " = " << valueText(k, below)
            << " (allowed: " << Schema::rangeText(k) << ") was accepted";
        ++checked;
      }
      if (k.hasMax()) {
        const double above = k.maxOpen ? k.max : k.max + step(k, k.max);
        EXPECT_FALSE(complaintsAt(f, k, valueText(k, above)).empty())
            << schemaOf(f).fileKind() << " " << k.path << " = " << valueText(k, above)
            << " (allowed: " << Schema::rangeText(k) << ") was accepted";
        ++checked;
      }
    }
    // Each of these files has over twenty bounded keys; far fewer means the loop skipped them.
    EXPECT_GT(checked, 20) << schemaOf(f).fileKind();
  }
}

TEST(SchemaRanges, AValueJustInsideEveryRangeIsAccepted) {
  for (FileKind f : kKinds) {
    for (const KeySpec& k : schemaOf(f).keys()) {
      if (!numeric(k) || (!k.hasMin() && !k.hasMax())) continue;
      std::vector<std::string> values;
      if (const auto it = kInsideValue.find(k.path); it != kInsideValue.end()) {
        if (!it->second.empty()) values.push_back(it->second);
      } else {
        if (k.hasMin()) values.push_back(valueText(k, k.minOpen ? k.min + step(k, k.min) : k.min));
        if (k.hasMax()) values.push_back(valueText(k, k.maxOpen ? k.max - step(k, k.max) : k.max));
      }
      for (const auto& v : values) {
        const auto c = complaintsAt(f, k, v);
        EXPECT_TRUE(c.empty()) << schemaOf(f).fileKind() << " " << k.path << " = " << v
                               << " (allowed: " << Schema::rangeText(k) << ") was refused:" << joined(c);
      }
    }
  }
}

TEST(SchemaRanges, AValueOutsideEveryChoiceListIsRefusedAtItsKey) {
  for (FileKind f : kKinds) {
    for (const KeySpec& k : schemaOf(f).keys()) {
      if (k.type != KeyType::Choice || k.path == "topology.kind" || k.path == "topology.rail.kind" ||
          k.path == "kind")
        continue;
      const auto c = complaintsAt(f, k, "no-such-choice");
      ASSERT_FALSE(c.empty()) << k.path;
      for (const auto& choice : k.choices)
        EXPECT_NE(c.front().find(choice), std::string::npos)
            << k.path << ": the refusal should list " << choice << ":" << joined(c);
    }
  }
}

}  // namespace
}  // namespace fabricsim
