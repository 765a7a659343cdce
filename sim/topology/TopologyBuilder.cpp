#include "sim/topology/TopologyBuilder.h"

#include "sim/core/Error.h"
#include "sim/topology/FatTreeBuilder.h"
#include "sim/topology/LeafSpineBuilder.h"
#include "sim/topology/RailOptimizedBuilder.h"

namespace fabricsim {

std::unique_ptr<Topology> buildTopology(const TopologySpec& spec) {
  switch (spec.kind) {
    case TopologyKind::LeafSpine:
      return LeafSpineBuilder::build(spec);
    case TopologyKind::FatTree:
      return FatTreeBuilder::build(spec);
    case TopologyKind::RailOptimized:
      return RailOptimizedBuilder::build(spec);
  }
  SIM_CHECK(false, "unknown topology kind");
  return nullptr;
}

void addHosts(Topology& topo, size_t count) {
  for (size_t h = 0; h < count; ++h) topo.addHost("host-" + std::to_string(h));
}

size_t hostCountOf(const TopologySpec& spec) {
  const auto leafSpine = [](const LeafSpineShape& s) { return static_cast<size_t>(s.leaves) * s.hostsPerLeaf; };
  const auto fatTree = [](const FatTreeShape& s) {
    return static_cast<size_t>(s.pods) * static_cast<size_t>(s.radix / 2) * s.hostsPerEdge;
  };
  switch (spec.kind) {
    case TopologyKind::LeafSpine:
      return leafSpine(spec.leafSpine);
    case TopologyKind::FatTree:
      return fatTree(spec.fatTree);
    case TopologyKind::RailOptimized:
      return spec.rail.railKind == TopologyKind::LeafSpine ? leafSpine(spec.rail.leafSpine)
                                                           : fatTree(spec.rail.fatTree);
  }
  return 0;
}

std::string switchName(const std::string& prefix, const char* role, int a, int b) {
  std::string s;
  s.reserve(prefix.size() + 24);
  s += prefix;
  s += role;
  s += '-';
  s += std::to_string(a);
  if (b >= 0) {
    s += '-';
    s += std::to_string(b);
  }
  return s;
}

}  // namespace fabricsim
