// SweepLoader: reads a sweep YAML file into a SweepSpec.
//
// Models: the sweep schema of docs/sweep.md:
//   name, topology (required), workloads (a list, or `workload:` one path), backend, seed,
//   set (base --set list), workload_set (base --workload-set list), axes: [{name, values}].
// Axis names: congestion_control | cc -> --cc, routing -> --routing, backend -> --backend,
// seed -> --seed, topology -> the topology path, workload -> the workload path(s),
// `workload.<key>` -> --workload-set <key>=value, any other dotted name -> --set name=value.
// A value is a scalar, or a map {value (the label, required), topology, workload | workloads,
// set, workload_set, cc | congestion_control, routing, backend, seed}: the label plus several
// overrides at once (its label alone is not applied). Paths are relative to the sweep file and
// must name existing files. Unknown keys, empty or missing values, duplicate axis names and
// malformed assignments are errors; every problem is reported in one InputError naming file,
// line, column and key path.
// Leaves out: checking override values against the topology or workload schema (each point's
// `run` does that, so a bad value fails only the points that use it).
#pragma once

#include <string>

#include "sim/config/SweepSpec.h"

namespace fabricsim {

/// Reads and validates the sweep file at `path`. Throws InputError on any problem.
SweepSpec loadSweepFile(const std::string& path);

/// Same, from text; `file` names it in diagnostics and is what relative paths are relative to.
SweepSpec parseSweepYaml(const std::string& yamlText, const std::string& file);

}  // namespace fabricsim
