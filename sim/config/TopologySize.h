// TopologySize: how big the fabric a TopologySpec describes will be, counted from the spec alone,
// before anything is built: hosts, GPUs, switches, leaves and links.
//
// Models: the shapes TopologyBuilder wires (DESIGN.md section 5): a leaf-spine has leaves +
// spines switches; a k-ary fat-tree with P pods has P*k/2 edge and P*k/2 aggregation switches and
// (k/2)^2 cores; a rail-optimized fabric is one such plane per rail, with the top tier built once
// when the rails share it. Links count cables (each carries both directions): one per NIC plus
// every switch-to-switch cable.
// Leaves out: failures (they remove nothing from the tables) and hosts' NVLink domains.
// Units: counts. Products saturate at INT64_MAX instead of wrapping (the caller refuses such a
// fabric anyway).
#pragma once

#include <cstdint>

#include "sim/config/TopologySpec.h"

namespace fabricsim {

struct TopologySize {
  int64_t hosts = 0;
  int64_t gpus = 0;
  int64_t switches = 0;
  int64_t leaves = 0;   ///< switches hosts attach to (edge switches of a fat-tree)
  int64_t links = 0;    ///< cables: host links plus switch-to-switch links
  int switchTiers = 0;  ///< 2 (leaf-spine) or 3 (fat-tree); 0 if the shape is incomplete
};

/// The size of the fabric `spec` describes (all zero when its shape is incomplete).
TopologySize topologySize(const TopologySpec& spec);

}  // namespace fabricsim
