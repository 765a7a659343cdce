// SchemaKeys: the small builders the schema files (TopologySchema.cpp, WorkloadSchema.cpp,
// CalibrationSchema.cpp, SweepSchema.cpp) write their KeySpecs with, and the key groups that
// more than one kind of file shares: a GPU's figures and NCCL's collective tuning, which both
// workload files and calibration files hold.
// Units: as in Schema.h (bytes, seconds, bit/s).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "sim/config/Schema.h"

namespace fabricsim::schemakeys {

inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

inline KeySpec key(std::string path, KeyType type, std::string def, std::string description,
                   double min = kNone, double max = kNone, std::string unit = "", std::string when = "") {
  KeySpec k;
  k.path = std::move(path);
  k.type = type;
  k.defaultText = std::move(def);
  k.description = std::move(description);
  k.min = min;
  k.max = max;
  k.unit = std::move(unit);
  k.when = std::move(when);
  return k;
}

inline KeySpec choice(std::string path, std::vector<std::string> choices, std::string def,
                      std::string description, std::string when = "") {
  KeySpec k = key(std::move(path), KeyType::Choice, std::move(def), std::move(description));
  k.choices = std::move(choices);
  k.when = std::move(when);
  return k;
}

inline KeySpec required(KeySpec k) {
  k.required = true;
  return k;
}

/// The value must be above min (a positive duration, rate or factor).
inline KeySpec above(KeySpec k) {
  k.minOpen = true;
  return k;
}

/// Both bounds open.
inline KeySpec open(KeySpec k) {
  k.minOpen = k.maxOpen = true;
  return k;
}

/// A size that may be written as a bare integer of bytes.
inline KeySpec bare(KeySpec k) {
  k.bare = true;
  return k;
}

/// The same condition on every key of a group.
inline std::vector<KeySpec> when(std::vector<KeySpec> keys, const std::string& condition) {
  for (auto& k : keys) k.when = condition;
  return keys;
}

/// A GPU's compute and memory figures under `at` ("gpu"): workload and calibration files.
std::vector<KeySpec> gpuFigureKeys(const std::string& at);
/// NCCL's collective tuning under `at` ("collectives"): workload and calibration files.
std::vector<KeySpec> collectiveTuningKeys(const std::string& at);

}  // namespace fabricsim::schemakeys
