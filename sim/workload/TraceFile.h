// TraceFile: reads and writes a JobTrace as JSON (the format `fabricsim trace` writes and
// `kind: trace` replays; documented in docs/trace-format.md).
//
// Models: the whole JobTrace: communicators as lists of rank groups, one program per role
// with its streams, labels and ops, the program of each rank (run-length encoded), the
// placement it was generated with, and the source it was generated from (the workload YAML
// text), so a trace can be regenerated for another cluster size.
// Leaves out: anything about the fabric; times are integer picoseconds so a replay is exact.
// Units: bytes, picoseconds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/workload/JobTrace.h"

namespace fabricsim {

/// Where a trace came from: the workload YAML it was expanded from, for retargeting.
struct TraceSource {
  std::string workloadFile;
  std::string workloadYaml;
  std::vector<std::string> workloadSets;  ///< --workload-set overrides applied to it, in order
};

nlohmann::json traceToJson(const JobTrace& trace, const TraceSource& source);
/// Parses and finalizes a trace document; throws InputError naming `file` and the JSON path
/// of the first bad value.
std::shared_ptr<JobTrace> traceFromJson(const nlohmann::json& doc, const std::string& file,
                                        TraceSource* source = nullptr);
/// Reads a trace file (InputError if missing or malformed).
std::shared_ptr<JobTrace> readTraceFile(const std::string& path, TraceSource* source = nullptr);
/// True if `path` names a trace rather than a workload YAML (it ends in ".json").
bool isTraceFile(const std::string& path);

}  // namespace fabricsim
