// FailureInjector: the `failures:` list of a topology file played out during a run.
//
// Models: at each event's time (relative to when the workloads start) the named link (every
// parallel link between the two nodes) or switch (every link of it) goes down or up in the data
// plane at once (both directions of each link; packets on a dead link are lost and counted),
// and the control plane is told, which then reacts on its own timers (BGP: detection delay,
// update processing, MRAI; the InfiniBand subnet manager: its reroute delay). A host's NICs can
// start and stop a PFC storm (PAUSE frames without a break toward their leaf, as a NIC whose
// receive path hangs sends). A flap is a link or switch going down and up `count` times (down
// for `down_for`, then up for `up_for`), played out as that many down and up events. On
// Ethernet tables the switches at the ends of a changed switch-to-switch link also apply it
// locally after routing.failover_delay (LocalFailover), before and whatever the control plane does.
// Host links (`link: [host-3, leaf-0]`: every link of the host to that switch, one per NIC) and
// NICs (`nic: host-3/1`) go down and up too: a NIC down is its host link down (both directions:
// nothing it sends or is sent arrives). A link failed both on its own and through its NIC comes
// back when both are over; so does a link whose switch failed: overlapping failures hold a
// link down independently. The backends' connections then fail over to another NIC of the host
// (nic.failover) or retry until they fail; routing is not told of host links.
// Leaves out: partial (unidirectional) failures, flap damping, a NIC's PCIe or firmware state.
// Units: Time (ps).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/BgpControlPlane.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/routing/LocalFailover.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class FailureInjector final : public EventHandler {
 public:
  /// Resolves every event's node names; throws InputError (file, line, key) for unknown names,
  /// hosts, or nodes that share no link.
  /// `packet`: the packet backend when the run has one (PFC storms need it; nullptr otherwise);
  /// `sm`: the InfiniBand subnet manager, when it routes; `fib`: the Ethernet tables the
  /// switches forward with (nullptr when the subnet manager routes), which fail over locally
  /// when spec.routing.localFailover.
  FailureInjector(Simulator& sim, const Topology& topo, Fabric& fabric, PacketFabric* packet,
                  BgpControlPlane* bgp, IbSubnetManager* sm, EcmpFib* fib, const TopologySpec& spec);

  /// Schedules every event at origin + its time.
  void start(Time origin);
  void onEvent(uint32_t index) override;

  struct Event {
    FailureSpec spec;           ///< a flap becomes down and up events (action down | up)
    std::vector<LinkId> links;  ///< link failures: the links between the two nodes
    NodeId node = kInvalid;     ///< switch failures, or the host of a PFC storm
    uint32_t nic = kInvalid;    ///< NIC failures: the global NIC index
    bool hostLinks = false;     ///< links between a host and a switch (a host link or NIC event)
    Time at;                    ///< absolute time, set by start()
    /// Filled when it happens: its LocalFailover record (kInvalid: none), and the range of
    /// BgpControlPlane::failureStats() entries it caused ([bgpFirst, bgpEnd)).
    uint32_t failoverRecord = kInvalid;
    uint32_t bgpFirst = 0, bgpEnd = 0;
  };
  const std::vector<Event>& events() const { return events_; }
  /// The local fast failover, when the switches have it (nullptr otherwise).
  const LocalFailover* localFailover() const { return failover_.get(); }

 private:
  Simulator& sim_;
  const Topology& topo_;
  Fabric& fabric_;
  PacketFabric* packet_;
  BgpControlPlane* bgp_;
  IbSubnetManager* sm_;
  std::unique_ptr<LocalFailover> failover_;
  /// Applies event `e` to the causes that keep each of its links down (its own link event, its
  /// NIC's, a failed switch at either end: overlapping failures are independent) and returns
  /// the links whose state changed: a link is up only while no cause holds it down.
  std::vector<LinkId> applyCauses(const Event& e, bool up);

  static constexpr uint8_t kLinkDown = 1, kNicDown = 2, kSwitchADown = 4, kSwitchBDown = 8;
  std::vector<Event> events_;
  std::vector<uint8_t> linkDown_;  ///< per link: the causes (bits) holding it down
};

}  // namespace fabricsim
