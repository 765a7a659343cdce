// IbSubnetManager: the InfiniBand subnet manager's routing: LIDs, the switches' linear forwarding
// tables from a routing engine, and their recomputation after the topology changes.
//
// Models: at start the SM assigns LIDs (IbLidMap: 2^LMC per NIC port) and computes every switch's
// LFT with one engine: ftree (OpenSM's fat-tree engine), dmodk (D-mod-K) or updn (up/down, for
// fabrics that are not fat-trees); auto picks ftree on a layered Clos and updn otherwise. When a
// link or switch goes down or comes back, the switches next to it trap to the SM, which runs a
// heavy sweep and uploads new tables: here the new tables, computed on the links that are up
// then, are installed in every switch at once, `reroute_delay` after the first change (changes
// during that time join the same sweep). Until then switches keep forwarding on the old tables,
// so packets sent into a dead link are lost there; after it, a destination no route reaches is
// black-holed. With adaptive routing on, the SM also gives each switch, per destination leaf, the
// ports on legal paths of fewest hops (its adaptive-routing groups), written into the EcmpFib's
// groups; switches choose among them per packet.
// Leaves out: SM discovery and LID assignment time, SM failover, partial (incremental) LFT
// updates, SL-to-VL mapping, multicast, SHIELD/fast link fault recovery in switches (a switch
// here never changes its own table), routes to switch LIDs (no management traffic is simulated).
// Units: Time (ps); memory in bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/IbLft.h"
#include "sim/routing/IbLidMap.h"
#include "sim/routing/IbUpDownPaths.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class IbSubnetManager final : public EventHandler {
 public:
  /// Assigns LIDs and computes the initial tables. `arGroups`: where adaptive-routing groups go
  /// (required when spec.routing.ibSm.adaptive). Throws InputError (pointing at routing.ib_sm)
  /// when a subnet needs more than 0xBFFF LIDs, a switch has more than 254 ports, or the engine
  /// cannot route the fabric.
  IbSubnetManager(Simulator& sim, const Topology& topo, const TopologySpec& spec, EcmpFib* arGroups);

  const IbLidMap& lids() const { return lids_; }
  const IbLft& lft() const { return lft_; }
  /// The engine in use (auto resolved).
  const std::string& engine() const { return engine_; }
  bool adaptive() const { return adaptive_; }
  Time rerouteDelay() const { return delay_; }

  /// `links` went down (up = false) or came back: a sweep follows after the reroute delay.
  void linksChanged(std::span<const LinkId> links, bool up);
  /// Called after each sweep has installed new tables (the flow backend re-routes its flows).
  void setSweepListener(std::function<void()> listener) { onSweep_ = std::move(listener); }
  void onEvent(uint32_t tag) override;

  /// Heavy sweeps that installed new tables after a change.
  uint64_t sweeps() const { return sweeps_; }
  /// When the last sweep installed its tables (Time::zero() if none yet).
  Time lastSweep() const { return lastSweep_; }
  /// Wall-clock seconds spent computing tables (all sweeps).
  double computeSeconds() const { return computeSeconds_; }
  size_t memoryBytes() const { return lft_.memoryBytes(); }
  /// Recomputes every table on the links that are up now (what a sweep installs).
  void computeTables();

 private:
  Simulator& sim_;
  const Topology& topo_;
  const TopologySpec& spec_;
  EcmpFib* arGroups_;
  IbLidMap lids_;
  IbUpDownPaths paths_;
  IbLft lft_;
  std::string engine_;
  bool adaptive_;
  Time delay_;
  bool pending_ = false;
  uint64_t sweeps_ = 0;
  Time lastSweep_;
  double computeSeconds_ = 0;
  std::function<void()> onSweep_;
};

}  // namespace fabricsim
