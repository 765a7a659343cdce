// DotExport: the topology graph in Graphviz DOT format.
//
// Models: one undirected graph, hosts as boxes and switches as ellipses, nodes of the same
// tier on the same rank (hosts at the bottom, the top tier at the top), one edge per link
// (parallel links appear as parallel edges), labelled with the link rate in the tooltip.
// Leaves out: layout hints beyond ranks; very large fabrics give very large files.
#pragma once

#include <ostream>
#include <string>

#include "sim/topology/Topology.h"

namespace fabricsim {

/// Writes `topo` as a DOT graph named `name` to `out`.
void writeDot(const Topology& topo, const std::string& name, std::ostream& out);

}  // namespace fabricsim
