// TopologyBuilder: turns a validated TopologySpec into a finalized Topology graph.
//
// Models: dispatch to one builder per kind (LeafSpineBuilder, FatTreeBuilder,
// RailOptimizedBuilder) and the pieces they share: hosts `host-<i>` added first (node id =
// host index), link rates from TopologySpec::tierSpeed(tier) and latency links.latency.
// Node names are the stable ones of DESIGN.md section 5.
// Leaves out: validation of the spec (the loader's job; a spec the loader would refuse is a
// bug here and fails a SIM_CHECK), failures (routing/), explicit topologies.
// Units: BitRate bit/s, Time ps.
#pragma once

#include <memory>
#include <string>

#include "sim/config/TopologySpec.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

/// Builds and finalizes the graph described by `spec`. The caller owns the result.
std::unique_ptr<Topology> buildTopology(const TopologySpec& spec);

/// Adds `count` hosts named host-0 ... host-<count-1> to an empty topology.
void addHosts(Topology& topo, size_t count);

/// Hosts a spec describes (per rail for rail-optimized: every rail spans all hosts).
size_t hostCountOf(const TopologySpec& spec);

/// "<prefix><role>-<i>" or "<prefix><role>-<a>-<b>" (b < 0: omitted), built without temporaries.
std::string switchName(const std::string& prefix, const char* role, int a, int b = -1);

}  // namespace fabricsim
