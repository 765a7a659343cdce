// SwitchSectionReader: the `switch:` section of a topology file (buffer, ECN, PFC, credits).
//
// Models: the section's keys through the topology schema (types, units, ranges), and the rules
// that relate them: reserve, kmax, xoff, xon_delta, headroom and credit_buffer within the buffer;
// kmin <= kmax; xon <= xoff; static thresholds required when PFC is on without dynamic_alpha;
// ECN's kmin/kmax/pmax required when marking is on; class lists of 0-6 (7 carries control).
// Leaves out: the MMU itself (sim/packet/SharedBuffer) and the PFC headroom budget.
// Units: Bytes, Time in ps.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/config/TopologySpec.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

/// Reads root["switch"] (if present) into spec.sw, after spec.links (the MTU bounds the credit
/// buffer); records every problem in `r`.
void readSwitch(YamlReader& r, const YAML::Node& root, TopologySpec& spec);

}  // namespace fabricsim
