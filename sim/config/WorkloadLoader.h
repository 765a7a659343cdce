// WorkloadLoader: reads a workload YAML file into a WorkloadSpec.
//
// Models: the `kind: pattern` schema (DESIGN.md section 5): pattern (permutation | incast |
// all-to-all), message_size, start, repetitions, gap, incast {senders, receiver},
// traffic_class, gpus {first, count}, qps_per_pair and name, with units, ranges and unknown
// keys checked and every problem reported in one InputError (file, line, column, key path).
// Leaves out: the other kinds (collective, training, trace), which are refused with a clear
// message, and checks against a particular topology (e.g. receiver < GPU count), which the
// workload builder makes once it knows the fabric.
// Units: Bytes, Time (ps).
#pragma once

#include <string>

#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

/// Reads and validates the workload file at `path`. Throws InputError on any problem.
WorkloadSpec loadWorkloadFile(const std::string& path);

/// Same, from text; `fileNameForMessages` names it in diagnostics and gives the default name.
WorkloadSpec parseWorkloadYaml(const std::string& yamlText, const std::string& fileNameForMessages);

const char* toString(PatternKind k);

}  // namespace fabricsim
