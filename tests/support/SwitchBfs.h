// SwitchBfs: hop distances over switch-to-switch links computed with Boost's own
// breadth_first_search on a filtered graph, independently of EcmpFib and of BGP, so routing
// tests can check forwarding tables against it.
#pragma once

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/topology/Topology.h"

namespace fabricsim::testsupport {

inline constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

/// Vertex predicate of the switch-only view: hosts never transit traffic.
struct SwitchesOnly {
  const Topology::Graph* g = nullptr;
  bool operator()(Topology::Graph::vertex_descriptor v) const { return (*g)[v].kind == NodeKind::Switch; }
};

/// Hop distances from switch `from` to every switch (kUnreached for other planes and hosts).
inline std::vector<uint32_t> switchDistances(const Topology& topo, NodeId from) {
  const Topology::Graph& g = topo.graph();
  using Filtered = boost::filtered_graph<Topology::Graph, boost::keep_all, SwitchesOnly>;
  Filtered fg(g, boost::keep_all(), SwitchesOnly{&g});
  std::vector<uint32_t> dist(boost::num_vertices(g), kUnreached);
  dist[from] = 0;
  auto indexMap = boost::get(boost::vertex_index, g);
  std::vector<boost::default_color_type> colors(boost::num_vertices(g));
  boost::breadth_first_search(
      fg, static_cast<Topology::Graph::vertex_descriptor>(from),
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge())))
          .color_map(boost::make_iterator_property_map(colors.begin(), indexMap)));
  return dist;
}

}  // namespace fabricsim::testsupport
