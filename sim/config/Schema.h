// Schema: every key of a fabricsim input file in one place: its type, unit, default, allowed
// range or choices and what it means, so that the loaders check values against it, `fabricsim
// schema [KEY]` prints it and docs/reference.md is generated from it.
//
// Models: a file's keys as dotted paths ("switch.ecn.kmin"); a list's elements as "[]"
// ("failures[].at"); keys that exist only for some values of a sibling `kind` carry that
// condition ("topology.radix" when topology.kind is fat-tree; "kind: collective | training" for
// several values); one path may have an entry per condition (a workload's `iterations`).
// Ranges are intervals on the value in the key's unit (sizes in bytes, times in seconds, rates
// in bit/s): each bound closed unless marked open (minOpen: "> 0"); a bound left NaN is absent.
// Leaves out: cross-key rules (kmin <= kmax, NICs dividing GPUs...), which stay in the loaders
// because they relate keys, and the YAML syntax.
// Units: as stated per key; `unit` is a display string ("bytes", "s", "bit/s", "" for counts).
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim {

enum class KeyType { Int, Double, Bool, String, Choice, Time, Bytes, Rate, Map, List };

const char* toString(KeyType t);

struct KeySpec {
  std::string path;         ///< "switch.ecn.kmin"; list elements as "failures[].at"
  KeyType type = KeyType::String;
  std::string unit;         ///< display unit of the range ("bytes", "s", "bit/s"); "" for none
  std::string defaultText;  ///< as a user would write it; "" when required or computed
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> choices;  ///< KeyType::Choice
  std::string when;                  ///< condition under which the key exists ("topology.kind: fat-tree")
  std::string description;
  bool required = false;
  bool minOpen = false;  ///< the value must be above min, not at it ("> 0")
  bool maxOpen = false;  ///< the value must be below max
  bool bare = false;     ///< Bytes: a bare integer (no unit) is accepted as bytes

  bool hasMin() const { return !std::isnan(min); }
  bool hasMax() const { return !std::isnan(max); }
};

class Schema {
 public:
  Schema(std::string fileKind, std::vector<KeySpec> keys);

  const std::string& fileKind() const { return fileKind_; }
  const std::vector<KeySpec>& keys() const { return keys_; }
  /// The key at `path` ("switch.ecn.kmin"; list indices may be given: "failures[3].at"), or null;
  /// the first entry of a path that has one per condition.
  const KeySpec* find(std::string_view path) const;
  /// The entry of `path` whose condition is one of `conditions` (or that has none), or null.
  const KeySpec* find(std::string_view path, const std::vector<std::string>& conditions) const;
  /// The names of the keys directly under `path` ("" for the file's top level) whose condition
  /// holds: `when` matches one of `conditions` ("topology.kind: fat-tree"), or is empty.
  std::vector<std::string> children(std::string_view path, const std::vector<std::string>& conditions = {}) const;

  /// "failures[3].at" -> "failures[].at".
  static std::string normalise(std::string_view path);
  /// The allowed range in words: "1 to 1024", "> 0 bit/s", "(0, 1)"; "" when unbounded.
  static std::string rangeText(const KeySpec& k);
  /// Markdown: one table of every key (path, type and unit, default, range, meaning).
  std::string markdown() const;
  /// Plain text for `fabricsim schema KEY`: the key and every key below it.
  std::string describe(std::string_view path) const;

 private:
  std::string fileKind_;
  std::vector<KeySpec> keys_;
};

/// The schema of topology files (sim/config/TopologySchema.cpp).
const Schema& topologySchema();
/// The schema of sweep files (sim/config/SweepSchema.cpp).
const Schema& sweepSchema();
/// The schema of workload files (sim/config/WorkloadSchema.cpp).
const Schema& workloadSchema();
/// The schema of calibration files (sim/config/CalibrationSchema.cpp).
const Schema& calibrationSchema();

}  // namespace fabricsim
