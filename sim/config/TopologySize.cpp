#include "sim/config/TopologySize.h"

#include <algorithm>
#include <limits>

namespace fabricsim {
namespace {

int64_t mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

int64_t add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

/// One plane: `top` is its top tier's switch count (spines or cores), which rails may share.
struct Plane {
  TopologySize size;
  int64_t top = 0;
};

Plane leafSpine(const LeafSpineShape& s, int64_t nics) {
  Plane p;
  p.size.hosts = mul(s.leaves, s.hostsPerLeaf);
  p.size.switches = add(s.leaves, s.spines);
  p.size.leaves = s.leaves;
  p.size.links = add(mul(p.size.hosts, nics), mul(mul(s.leaves, s.spines), s.linksPerSpine));
  p.size.switchTiers = 2;
  p.top = s.spines;
  return p;
}

Plane fatTree(const FatTreeShape& s, int64_t nics) {
  Plane p;
  const int64_t half = s.radix / 2;
  const int64_t edges = mul(s.pods, half);
  p.top = mul(half, half);
  p.size.hosts = mul(edges, s.hostsPerEdge);
  p.size.switches = add(mul(2, edges), p.top);
  p.size.leaves = edges;
  p.size.links = add(mul(p.size.hosts, nics), mul(2, mul(edges, half)));
  p.size.switchTiers = 3;
  return p;
}

}  // namespace

TopologySize topologySize(const TopologySpec& spec) {
  TopologySize z;
  switch (spec.kind) {
    case TopologyKind::LeafSpine:
      z = leafSpine(spec.leafSpine, spec.hosts.nicsPerHost).size;
      break;
    case TopologyKind::FatTree:
      z = fatTree(spec.fatTree, spec.hosts.nicsPerHost).size;
      break;
    case TopologyKind::RailOptimized: {
      const int64_t rails = std::max(1, spec.rail.rails);
      const Plane p = spec.rail.railKind == TopologyKind::LeafSpine ? leafSpine(spec.rail.leafSpine, 1)
                                                                    : fatTree(spec.rail.fatTree, 1);
      z = p.size;  // hosts: every rail reaches the same hosts
      z.links = mul(p.size.links, rails);
      z.leaves = mul(p.size.leaves, rails);
      // With shared spines the rails' lower tiers sit under one top tier.
      z.switches = spec.rail.sharedSpines ? add(mul(p.size.switches - p.top, rails), p.top)
                                          : mul(p.size.switches, rails);
      break;
    }
  }
  z.gpus = mul(z.hosts, spec.hosts.gpusPerHost);
  return z;
}

}  // namespace fabricsim
