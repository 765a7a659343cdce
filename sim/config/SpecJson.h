// SpecJson: the fully resolved inputs (TopologySpec, WorkloadSpec) as JSON, for results.spec.
//
// Models: every field of the specs after defaults and --set overrides, so a results file says
// exactly what was simulated. Key names follow the YAML keys; quantities are plain numbers
// whose key names carry the unit: `_bps` (bit/s, integer), `_bytes` (integer), `_ps`
// (picoseconds, integer, exact). E.g. links.host_speed_bps = 400000000000,
// links.latency_ps = 1000000, switch.buffer_bytes = 33554432.
// Leaves out: anything not in the specs (the built graph's summary is TopologySummary's).
#pragma once

#include <nlohmann/json.hpp>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

nlohmann::json toJson(const TopologySpec& spec);
nlohmann::json toJson(const WorkloadSpec& spec);
/// The collectives tuning (also what a trace file records).
nlohmann::json toJson(const CollectiveTuning& tuning);

}  // namespace fabricsim
