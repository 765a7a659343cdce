#include "sim/topology/FatTreeBuilder.h"

#include "sim/core/Error.h"
#include "sim/topology/TopologyBuilder.h"

namespace fabricsim {

std::unique_ptr<Topology> FatTreeBuilder::build(const TopologySpec& spec) {
  auto topo = std::make_unique<Topology>(spec.hosts.gpusPerHost, spec.hosts.nicsPerHost);
  addHosts(*topo, hostCountOf(spec));
  addPlane(*topo, spec, spec.fatTree, "", -1, spec.hosts.nicsPerHost, nullptr);
  topo->finalize();
  return topo;
}

std::vector<NodeId> FatTreeBuilder::addCores(Topology& topo, const FatTreeShape& shape, const std::string& prefix,
                                             int32_t plane) {
  const int half = shape.radix / 2;
  std::vector<NodeId> cores;
  cores.reserve(static_cast<size_t>(half) * half);
  for (int j = 0; j < half * half; ++j) cores.push_back(topo.addSwitch(switchName(prefix, "core", j), 3, plane));
  return cores;
}

void FatTreeBuilder::addPlane(Topology& topo, const TopologySpec& spec, const FatTreeShape& shape,
                              const std::string& prefix, int32_t plane, int nicsPerHost,
                              const std::vector<NodeId>* sharedCores) {
  SIM_CHECK(shape.radix >= 2 && shape.radix % 2 == 0, "fat-tree radix must be even");
  SIM_CHECK(shape.pods >= 1 && shape.pods <= shape.radix && shape.hostsPerEdge >= 1, "bad fat-tree sizes");
  const int half = shape.radix / 2;
  const size_t hosts = static_cast<size_t>(shape.pods) * half * shape.hostsPerEdge;
  SIM_CHECK(hosts == topo.hostCount(), "fat-tree plane does not match the host count");

  const size_t perTier = static_cast<size_t>(shape.pods) * half;
  std::vector<NodeId> edges;  // index pod * half + i
  std::vector<NodeId> aggs;
  edges.reserve(perTier);
  aggs.reserve(perTier);
  for (int p = 0; p < shape.pods; ++p)
    for (int i = 0; i < half; ++i) edges.push_back(topo.addSwitch(switchName(prefix, "edge", p, i), 1, plane, p));
  for (int p = 0; p < shape.pods; ++p)
    for (int i = 0; i < half; ++i) aggs.push_back(topo.addSwitch(switchName(prefix, "agg", p, i), 2, plane, p));
  std::vector<NodeId> ownCores;
  if (!sharedCores) ownCores = addCores(topo, shape, prefix, plane);
  const std::vector<NodeId>& cores = sharedCores ? *sharedCores : ownCores;
  SIM_CHECK(cores.size() == static_cast<size_t>(half) * half, "fat-tree core count");

  const Time latency = spec.links.latency;
  const BitRate hostRate = spec.tierSpeed(0);
  const BitRate edgeAggRate = spec.tierSpeed(1);
  const BitRate aggCoreRate = spec.tierSpeed(2);
  for (size_t h = 0; h < hosts; ++h) {
    const NodeId edge = edges[h / static_cast<size_t>(shape.hostsPerEdge)];
    for (int r = 0; r < nicsPerHost; ++r) topo.addLink(static_cast<NodeId>(h), edge, hostRate, latency, 0);
  }
  for (int p = 0; p < shape.pods; ++p)
    for (int i = 0; i < half; ++i)
      for (int j = 0; j < half; ++j)
        topo.addLink(edges[static_cast<size_t>(p) * half + i], aggs[static_cast<size_t>(p) * half + j], edgeAggRate,
                     latency, 1);
  for (int p = 0; p < shape.pods; ++p)
    for (int i = 0; i < half; ++i)
      for (int m = 0; m < half; ++m)
        topo.addLink(aggs[static_cast<size_t>(p) * half + i], cores[static_cast<size_t>(i) * half + m], aggCoreRate,
                     latency, 2);
}

}  // namespace fabricsim
