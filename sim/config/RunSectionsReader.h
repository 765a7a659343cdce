// RunSectionsReader: the `failures:`, `watchdog:` and `episodes:` sections of a topology file
// (what happens to the fabric during a run, the checks that end a run which can no longer
// finish, and how the hybrid backend simulates its congestion episodes).
//
// Models: failures: a list of {at, action, link | switch | host}: links and switches go `down`
// or `up`; a host's NICs start (`pfc-storm`) or stop (`pfc-storm-end`) sending PFC PAUSE frames
// without a break, as a NIC whose receive path hangs does. watchdog: {interval, no_progress,
// pfc_deadlock}. episodes: {seeds, replicas, tolerance, max_rounds} (EpisodeSpec). Node names are resolved
// later, when the topology exists (FailureInjector). Leaves out: the behaviour (sim/runtime/FailureInjector,
// sim/packet/PacketWatchdog). Units: Time in ps.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/config/TopologySpec.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

/// Reads root["failures"] (if present) into spec.failures; records every problem in `r`.
void readFailures(YamlReader& r, const YAML::Node& root, TopologySpec& spec);
/// Reads root["watchdog"] (if present) into spec.watchdog; records every problem in `r`.
void readWatchdog(YamlReader& r, const YAML::Node& root, TopologySpec& spec);
/// Reads root["episodes"] (if present) into spec.episodes; records every problem in `r`.
void readEpisodes(YamlReader& r, const YAML::Node& root, TopologySpec& spec);

}  // namespace fabricsim
