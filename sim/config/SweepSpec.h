// SweepSpec: the value-type description of a parameter sweep read from a sweep YAML file, and
// the points it expands to.
//
// Models: the sweep file of DESIGN.md section 5 after validation: a base `fabricsim run`
// (topology, workloads, backend, seed, --set and --workload-set lists) and axes, each a list of
// values. A value is a label plus the run options it changes (SweepOverrides). A SweepPoint is
// one element of the cartesian product of the axes: its labels and the fully resolved run
// options. No behaviour: SweepLoader reads files into it, SweepRunner expands and runs it.
// Leaves out: whether an override's value is valid for the topology or workload (the `run` of
// each point checks that, so one bad value fails only its points).
// Units: none; paths are absolute and normalised, seeds are plain integers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim {

/// The `fabricsim run` options one axis value (or the sweep's base) sets. Absent optionals and
/// empty lists leave the option as it was; `sets` and `workloadSets` are appended in order.
struct SweepOverrides {
  std::optional<std::string> topology;                ///< topology path
  std::optional<std::vector<std::string>> workloads;  ///< workload paths (replace the list)
  std::vector<std::string> sets;                      ///< --set key.path=value
  std::vector<std::string> workloadSets;              ///< --workload-set key.path=value
  std::optional<std::string> cc;                      ///< --cc
  std::optional<std::string> routing;                 ///< --routing
  std::optional<std::string> backend;                 ///< --backend
  std::optional<uint64_t> seed;                       ///< --seed
};

/// One value of an axis: the label shown in summary.csv and what it overrides.
struct SweepAxisValue {
  std::string label;
  SweepOverrides overrides;
  int line = 0;  ///< 1-based line in the sweep file (0 = unknown)
};

/// One axis: its name (a reserved name, `workload.<key>` or a topology key path) and values.
struct SweepAxis {
  std::string name;
  std::vector<SweepAxisValue> values;
  int line = 0;
};

struct SweepSpec {
  std::string file;     ///< the sweep file as given
  std::string name;     ///< `name:`, default the file's stem
  SweepOverrides base;  ///< topology is always set after loading
  std::vector<SweepAxis> axes;

  /// Most points a sweep may have: each is a whole simulation run (100,000 runs of a second
  /// each are a day on 1 core).
  static constexpr size_t kMaxPoints = 100'000;
  /// Number of points: the product of the axes' value counts (1 with no axes), saturating at
  /// kMaxPoints + 1 (64 axes of two values wrapped the product to 0).
  size_t pointCount() const {
    size_t n = 1;
    for (const auto& a : axes) {
      if (a.values.empty()) return 0;
      n = n > (kMaxPoints + 1) / a.values.size() ? kMaxPoints + 1 : n * a.values.size();
    }
    return std::min(n, kMaxPoints + 1);
  }
};

/// One point of the sweep with every option resolved.
struct SweepPoint {
  size_t index = 0;
  std::string id;                                           ///< "p0003"
  std::vector<std::pair<std::string, std::string>> labels;  ///< (axis name, value label), axis order
  std::string topology;
  std::vector<std::string> workloads;  ///< empty: the topology's own workload
  std::vector<std::string> sets;
  std::vector<std::string> workloadSets;
  std::optional<std::string> cc;
  std::optional<std::string> routing;
  std::optional<std::string> backend;
  std::optional<uint64_t> seed;
};

}  // namespace fabricsim
