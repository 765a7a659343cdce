#include "sim/config/SweepLoader.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <set>

#include "sim/config/TopologyLoader.h"
#include "sim/config/YamlReader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

using Node = YAML::Node;

/// `value` relative to the directory of `file`, made absolute and normalised.
std::string resolvePath(const std::string& file, const std::string& value) {
  std::filesystem::path v(value);
  if (!v.is_absolute()) v = std::filesystem::path(file).parent_path() / v;
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(v, ec);
  return (ec ? v : abs).lexically_normal().string();
}

/// Reads a path at `n` (a scalar), resolves it and checks that the file exists.
bool readPath(YamlReader& r, const Node& n, const std::string& path, const char* what, std::string& out) {
  std::string s;
  if (!r.asString(n, path, s)) return false;
  if (s.empty()) {
    r.error(n, path, std::string("expected the path of a ") + what + " file, found an empty string");
    return false;
  }
  const std::string resolved = resolvePath(r.file(), s);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(resolved, ec)) {
    r.error(n, path,
            std::string("expected an existing ") + what + " file (relative to the sweep file), found '" + s +
                "' (" + resolved + " does not exist)");
    return false;
  }
  out = resolved;
  return true;
}

/// A list of paths, or one path.
bool readPaths(YamlReader& r, const Node& n, const std::string& path, const char* what,
               std::vector<std::string>& out) {
  std::vector<std::string> list;
  bool ok = true;
  if (n.IsScalar()) {
    std::string p;
    if (!readPath(r, n, path, what, p)) return false;
    list.push_back(p);
  } else if (n.IsSequence()) {
    if (n.size() == 0) {
      r.error(n, path, std::string("expected at least one ") + what + " path, found an empty list");
      return false;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      std::string p;
      if (readPath(r, n[i], YamlReader::index(path, i), what, p))
        list.push_back(p);
      else
        ok = false;
    }
  } else {
    r.error(n, path,
            std::string("expected a ") + what + " path or a list of paths, found " + YamlReader::describe(n));
    return false;
  }
  if (ok) out = list;
  return ok;
}

/// A list of "key.path=value" assignments, or one.
void readAssignments(YamlReader& r, const Node& n, const std::string& path, std::vector<std::string>& out) {
  auto one = [&](const Node& v, const std::string& p) {
    std::string s;
    if (!r.asString(v, p, s)) return;
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      r.error(v, p, "expected an assignment key.path=value, found '" + s + "'");
      return;
    }
    out.push_back(s);
  };
  if (n.IsScalar()) {
    one(n, path);
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) one(n[i], YamlReader::index(path, i));
  } else {
    r.error(n, path, "expected a list of key.path=value assignments, found " + YamlReader::describe(n));
  }
}

bool readSeed(YamlReader& r, const Node& n, const std::string& path, std::optional<uint64_t>& out) {
  int64_t v = 0;
  if (!r.asInt(n, path, v, 0, INT64_MAX)) return false;
  out = static_cast<uint64_t>(v);
  return true;
}

bool readName(YamlReader& r, const Node& n, const std::string& path, std::optional<std::string>& out) {
  std::string s;
  if (!r.asString(n, path, s)) return false;
  if (s.empty()) {
    r.error(n, path, "expected a non-empty name, found an empty string");
    return false;
  }
  out = s;
  return true;
}

/// The keys shared by the sweep's top level and map values (everything but name/axes/value).
void readOverrideKeys(YamlReader& r, const Node& map, const std::string& path, SweepOverrides& o) {
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>("");
    const Node v = kv.second;
    const std::string p = YamlReader::join(path, key);
    if (key == "topology") {
      std::string t;
      if (readPath(r, v, p, "topology", t)) o.topology = t;
    } else if (key == "workloads" || key == "workload") {
      if (YamlReader::has(map, "workloads") && YamlReader::has(map, "workload") && key == "workload") {
        r.error(v, p, "expected either 'workload' or 'workloads', found both");
        continue;
      }
      std::vector<std::string> w;
      if (readPaths(r, v, p, "workload", w)) o.workloads = w;
    } else if (key == "set") {
      readAssignments(r, v, p, o.sets);
    } else if (key == "workload_set") {
      readAssignments(r, v, p, o.workloadSets);
    } else if (key == "cc" || key == "congestion_control") {
      readName(r, v, p, o.cc);
    } else if (key == "routing") {
      readName(r, v, p, o.routing);
    } else if (key == "backend") {
      readName(r, v, p, o.backend);
    } else if (key == "seed") {
      readSeed(r, v, p, o.seed);
    }
  }
}

/// The name every spelling of an axis shares, for the duplicate check.
std::string canonicalAxis(const std::string& name) {
  return name == "cc" ? "congestion_control" : name;
}

/// Turns the scalar value `v` of axis `axis` into the overrides it stands for.
bool scalarValue(YamlReader& r, const Node& v, const std::string& path, const std::string& axis,
                 SweepAxisValue& out) {
  std::string s;
  if (!r.asString(v, path, s)) return false;
  out.label = s;
  SweepOverrides& o = out.overrides;
  if (axis == "congestion_control" || axis == "cc") return readName(r, v, path, o.cc);
  if (axis == "routing") return readName(r, v, path, o.routing);
  if (axis == "backend") return readName(r, v, path, o.backend);
  if (axis == "seed") return readSeed(r, v, path, o.seed);
  if (axis == "topology") {
    std::string t;
    if (!readPath(r, v, path, "topology", t)) return false;
    o.topology = t;
    out.label = std::filesystem::path(s).stem().string();
    return true;
  }
  if (axis == "workload") {
    std::vector<std::string> w;
    if (!readPaths(r, v, path, "workload", w)) return false;
    o.workloads = w;
    out.label = std::filesystem::path(s).stem().string();
    return true;
  }
  if (axis.rfind("workload.", 0) == 0) {
    o.workloadSets.push_back(axis.substr(9) + "=" + s);
    return true;
  }
  o.sets.push_back(axis + "=" + s);
  return true;
}

/// "value | topology | ...": the keys of an axis value given as a map.
std::string valueKeys() {
  std::string s;
  for (const auto& k : sweepSchema().children("axes[].values[]")) s += (s.empty() ? "" : " | ") + k;
  return s;
}

void readAxis(YamlReader& r, const Node& a, const std::string& path, std::set<std::string>& seen,
              SweepSpec& spec) {
  if (!r.expectMap(a, path)) return;
  r.checkKeys(a, path);
  SweepAxis axis;
  axis.line = YamlReader::lineOf(a);
  bool nameOk = r.read(a, path, "name", axis.name);
  if (nameOk && axis.name.empty()) {
    r.error(a["name"], YamlReader::join(path, "name"),
            "expected a non-empty axis name, found an empty string");
    nameOk = false;
  }
  if (nameOk && axis.name == "workload.") {
    r.error(a["name"], YamlReader::join(path, "name"),
            "expected a workload key after 'workload.', found none");
    nameOk = false;
  }
  if (nameOk && !seen.insert(canonicalAxis(axis.name)).second) {
    r.error(a["name"], YamlReader::join(path, "name"),
            "expected each axis once, found a second axis '" + axis.name + "'" +
                (canonicalAxis(axis.name) != axis.name || axis.name == "congestion_control"
                     ? " (cc and congestion_control are the same axis)"
                     : ""));
    nameOk = false;
  }
  if (!r.require(a, path, "values")) return;
  const std::string vp = YamlReader::join(path, "values");
  const Node values = a["values"];
  if (!values.IsSequence()) {
    r.error(values, vp, "expected a list of axis values, found " + YamlReader::describe(values));
    return;
  }
  if (values.size() == 0) {
    r.error(values, vp, "expected at least one value, found an empty list");
    return;
  }
  std::set<std::string> labels;
  for (size_t i = 0; i < values.size(); ++i) {
    const Node v = values[i];
    const std::string p = YamlReader::index(vp, i);
    SweepAxisValue value;
    value.line = YamlReader::lineOf(v);
    bool ok = false;
    if (v.IsMap()) {
      r.checkKeys(v, p);
      if (r.read(v, p, "value", value.label)) {
        ok = true;
        readOverrideKeys(r, v, p, value.overrides);
      }
    } else if (v.IsScalar()) {
      ok = nameOk && scalarValue(r, v, p, axis.name, value);
    } else if (v.IsSequence() && nameOk && axis.name == "workload") {
      ok = scalarValue(r, v, p, axis.name, value);
      if (ok) {
        value.label.clear();
        for (const auto& w : *value.overrides.workloads)
          value.label += (value.label.empty() ? "" : "+") + std::filesystem::path(w).stem().string();
      }
    } else {
      r.error(v, p,
              "expected a scalar value or a map {" + valueKeys() + "}, found " + YamlReader::describe(v));
    }
    if (!ok) continue;
    if (!labels.insert(value.label).second) {
      r.error(v, p,
              "expected distinct values on axis '" + axis.name + "', found '" + value.label + "' twice");
      continue;
    }
    axis.values.push_back(std::move(value));
  }
  spec.axes.push_back(std::move(axis));
}

}  // namespace

SweepSpec loadSweepFile(const std::string& path) {
  return parseSweepYaml(readInputFile(path), path);
}

SweepSpec parseSweepYaml(const std::string& yamlText, const std::string& file) {
  Node root;
  try {
    root = YAML::Load(yamlText);
  } catch (const YAML::Exception& e) {
    throw InputError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                     "", "invalid YAML: " + e.msg);
  }
  YamlReader r(file);
  SweepSpec spec;
  spec.file = file;
  spec.name = std::filesystem::path(file).stem().string();
  if (!root.IsMap()) {
    r.error(root, "",
            "expected a map of sweep keys (name, topology, axes, ...), found " + YamlReader::describe(root));
    r.throwIfErrors();
  }
  r.useSchema(sweepSchema(), root);
  r.checkKeys(root, "");
  r.read(root, "", "name", spec.name);
  readOverrideKeys(r, root, "", spec.base);
  if (!YamlReader::has(root, "topology"))
    r.error(root, "topology",
            "missing required key 'topology' (the base topology file, relative to the sweep file)");

  if (YamlReader::has(root, "axes")) {
    const Node axes = root["axes"];
    if (!axes.IsSequence()) {
      r.error(axes, "axes", "expected a list of axes [{name, values}], found " + YamlReader::describe(axes));
    } else {
      std::set<std::string> seen;
      for (size_t i = 0; i < axes.size(); ++i) readAxis(r, axes[i], YamlReader::index("axes", i), seen, spec);
      if (spec.pointCount() > SweepSpec::kMaxPoints)
        r.error(axes, "axes",
                "the axes give more than " + std::to_string(SweepSpec::kMaxPoints) +
                    " points (the product of their value counts; each point is a whole run): expected fewer "
                    "axes or values");
    }
  }
  r.throwIfErrors();
  return spec;
}

}  // namespace fabricsim
