// TopologySummary: the headline numbers of a built fabric, as JSON and as text.
//
// Models: counts (hosts, GPUs, NICs, switches per tier with their role names, links per
// tier), link speeds per tier, MTU, buffer, technology, and three derived figures:
//  - bisection bandwidth (bit/s, one direction): for these Clos fabrics the analytic
//    min over link tiers t of C_t / 2, where C_t is the summed rate of all tier-t links
//    (tier 0 = host links). A balanced split of the hosts into two halves aligned with the
//    tree cuts half of every tier, so the narrowest tier bounds what crosses the split.
//    Rail-optimized fabrics sum their rails (and, with shared spines, the shared top tier's
//    links), since every tier's links of every rail are counted.
//  - oversubscription at each switch tier that has uplinks (leaf/edge, and agg): downlink
//    capacity / uplink capacity summed over the tier (e.g. 2.0, shown "2:1").
//  - diameter: the most links on a shortest path between two hosts, never transiting a host
//    (BFS over the Boost graph from the first and last host, which suffices for these
//    symmetric fabrics). Hosts with several NICs may use any; for rail-optimized fabrics
//    without shared spines two hosts always share a rail, so this is the within-rail diameter.
// Leaves out: failures, routing (ECMP path counts), per-switch port usage.
// Units: rates in bit/s, sizes in bytes, latency in ps.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

struct SwitchTierSummary {
  int tier = 0;          ///< 1 leaf/edge, 2 spine/agg, 3 core
  std::string role;      ///< "leaf", "spine", "edge", "agg", "core"
  size_t switches = 0;
};

struct LinkTierSummary {
  int tier = 0;              ///< 0 host links, 1 leaf-spine / edge-agg, 2 agg-core
  std::string role;          ///< "host-leaf", "leaf-spine", "host-edge", "edge-agg", "agg-core"
  size_t links = 0;
  BitRate rate;              ///< rate of one link of the tier
  double capacityBps = 0;    ///< summed rate of the tier's links, one direction, bit/s
};

struct OversubscriptionSummary {
  int tier = 0;              ///< switch tier: 1 leaf/edge, 2 agg
  std::string role;
  double downlinkBps = 0;    ///< capacity toward hosts, summed over the tier
  double uplinkBps = 0;      ///< capacity toward the next tier
  double ratio = 0;          ///< downlink / uplink; 1 = non-blocking
  std::string text;          ///< "1:1", "2:1", "1.5:1"
};

struct TopologySummary {
  std::string name;
  std::string kind;          ///< leaf-spine | fat-tree | rail-optimized
  std::string railKind;      ///< rail-optimized only: each rail's kind
  int rails = 0;             ///< rail-optimized only
  bool sharedSpines = false;
  std::string technology;
  size_t hosts = 0;
  size_t gpus = 0;
  size_t nics = 0;
  size_t switches = 0;
  size_t links = 0;
  std::vector<SwitchTierSummary> switchTiers;
  std::vector<LinkTierSummary> linkTiers;
  double bisectionBps = 0;   ///< see the header comment
  std::vector<OversubscriptionSummary> oversubscription;
  int diameter = -1;         ///< links between the two farthest hosts; -1 if some host is unreachable
  Bytes mtu = 0;
  Bytes switchBuffer = 0;
  Time linkLatency;

  /// Keys: name, kind, hosts, gpus, nics, switches {total, tiers[]}, links {total, tiers[]},
  /// bisection_bps, oversubscription[], diameter_links, mtu_bytes, switch_buffer_bytes, ...
  nlohmann::json toJson() const;
  /// A short human-readable table.
  std::string toText() const;
};

/// Computes the summary of `topo`, which was built from `spec`.
TopologySummary summarizeTopology(const TopologySpec& spec, const Topology& topo);

/// Host-to-host diameter in links (see TopologySummary), or -1 if some host is unreachable.
int hostDiameter(const Topology& topo);

}  // namespace fabricsim
