// TopologyLoader: reads a topology YAML file (DESIGN.md section 5) into a TopologySpec.
//
// Models: the topology file's schema: every key, its type, unit, range and default, the
// cross-key rules (NICs per host divide GPUs per host, rail-optimized hosts have one NIC per
// rail, ECN kmin <= kmax, PFC xon <= xoff, an even fat-tree radix, ...), `--set` overrides
// applied before validation, and the default workload path resolved relative to the file.
// Every problem in the file is collected and thrown as one InputError naming file, line,
// column and key path.
// Leaves out: checking that failure node names exist (the topology builder's consumer does
// that once the graph is built) and building the graph (sim/topology).
// Units: as in TopologySpec (BitRate bit/s, Time ps, Bytes).
#pragma once

#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"

namespace fabricsim {

/// Reads and validates the topology file at `path`, after applying each "key.path=value"
/// of `setOverrides` in order. Throws InputError on any problem (unreadable file, YAML syntax,
/// schema).
TopologySpec loadTopologyFile(const std::string& path, const std::vector<std::string>& setOverrides = {});

/// Same as loadTopologyFile, from text; `fileNameForMessages` names it in diagnostics, gives the
/// default `name` (its stem) and the directory the `workload` path is relative to.
TopologySpec parseTopologyYaml(const std::string& yamlText, const std::string& fileNameForMessages,
                               const std::vector<std::string>& setOverrides = {});

/// Reads a whole file into a string; throws InputError naming the file if it cannot be read.
std::string readInputFile(const std::string& path);

}  // namespace fabricsim
