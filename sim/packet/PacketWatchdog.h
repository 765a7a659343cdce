// PacketWatchdog: the run-time checks that end a packet-level run which can no longer finish,
// with a diagnostic, instead of letting it spin or drain silently.
//
// Models, every `watchdog.interval` of simulated time while transfers are outstanding:
// - no progress: packets sit in the fabric and no data byte has reached any NIC for
//   `watchdog.no_progress`: the run stops, naming the ports that hold the most bytes and why
//   they do not send (class paused since when, or short of credits);
// - PFC deadlock (`watchdog.pfc_deadlock`): the switch ports that hold packets of a class their
//   peer switch has paused without a break since the previous check form the edges of a graph;
//   a cycle in it (findPauseCycle) is a cyclic buffer dependency: the run stops, naming the
//   cycle. Checked only after an interval in which PAUSE frames were sent.
// The watchdog's own timer is not kept alive when it is the only event left, so a run that
// drains still ends (and a connection left without a timer is reported as stalled).
// Leaves out: recovery (a real fabric needs an operator or a PFC storm watchdog, see
// EgressPort); deadlocks through NICs (NICs do not send PFC here unless storming).
// Units: Time (ps), bytes.
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"

namespace fabricsim {

class PacketFabric;

class PacketWatchdog final : public EventHandler {
 public:
  PacketWatchdog(Simulator& sim, PacketFabric& fabric, const WatchdogSpec& spec);
  /// A transfer entered the fabric: start checking if not already.
  void activity();
  void onEvent(uint32_t tag) override;

 private:
  bool enabled() const { return spec_.noProgress > Time::zero() || spec_.pfcDeadlock; }
  /// The deadlock cycle as text, or "" if there is none.
  std::string findDeadlock(Time pausedBefore) const;
  std::string stuckPorts() const;

  Simulator& sim_;
  PacketFabric& fabric_;
  WatchdogSpec spec_;
  TimerId timer_ = kNoTimer;
  uint64_t lastDelivered_ = 0;
  Time lastProgress_;
  Time lastCheck_;
  uint64_t lastPauses_ = 0;
};

}  // namespace fabricsim
