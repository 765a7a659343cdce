// IbSmSectionReader: InfiniBand subnet-manager routing in a topology file: `routing.algorithm:
// ib-sm` and its `routing.ib_sm` map, and which routing goes with which link technology.
//
// Models: the keys (engine auto | ftree | dmodk | updn, lmc 0..7, adaptive, reroute_delay), read
// whatever the algorithm (so a sweep over algorithms can share one file) and applied with ib-sm;
// the technology rules: on InfiniBand, ib-sm is the default, and Ethernet routing (a five-tuple
// algorithm, or BGP) is refused, since InfiniBand switches forward by destination LID; on RoCE,
// ib-sm is refused; adaptive routing needs a receiver that tolerates reordering (nic.reorder).
// Leaves out: whether the engine can route the built fabric (IbSubnetManager checks that).
// Units: Time in ps.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/config/TopologySpec.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

/// Reads root["routing"]["ib_sm"] into spec.routing.ibSm and applies the technology rules, after
/// the routing, links and nic sections were read; records every problem in `r`.
void readIbSmSection(YamlReader& r, const YAML::Node& root, TopologySpec& spec);

}  // namespace fabricsim
