// SetOverride: command-line `--set key.path=value` overrides of a YAML document.
//
// Models: an assignment of a YAML value (parsed as YAML, so lists and maps work:
// `--set 'failures=[{at: 1ms, action: down, switch: spine-0}]'`) to a dotted key path of the
// document's top-level map, creating intermediate maps as needed. Applied to the parsed
// document before validation, so bad overridden values get the same checks as the file's.
// Leaves out: list indices in key paths (a list is replaced as a whole).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace fabricsim {

struct SetAssignment {
  std::vector<std::string> path;  ///< key path split at dots, e.g. {"switch", "pfc", "enabled"}
  std::string keyPath;            ///< the dotted path as written
  std::string value;              ///< the YAML text after '='
};

/// Splits "a.b.c=value". Throws InputError (key "--set") on a malformed assignment.
SetAssignment parseSetAssignment(const std::string& assignment);

/// Applies one "key.path=value" assignment to `root` (a map, or null, which becomes a map).
/// Throws InputError (key "--set") if the assignment is malformed, its value is not valid
/// YAML, or the path runs through a value that is not a map.
void applySetOverride(YAML::Node& root, const std::string& assignment);

}  // namespace fabricsim
