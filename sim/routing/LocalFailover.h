// LocalFailover: switches taking a dead port out of their ECMP groups in hardware, before and
// independently of any control plane (local fast failover).
//
// Models: when a link changes state, each switch at one of its ends learns of it after
// `delay` (carrier loss: the PHY loses signal or block lock and the ASIC's hardware link scan
// disables the port's ECMP members, microseconds; routing.failover_delay) and then marks the
// port down (or up) in its own tables (EcmpFib::setLocalPortUp): the installed groups stay as
// the control plane wrote them, what forwards is the installed group less the locally dead
// ports. A switch whose members toward a destination are all dead black-holes it until the
// control plane (BGP) or a repair changes something. The port's state at the moment of
// detection is what the switch applies, so a link that comes back within the delay is never
// taken out. Each change is a record: when the link changed, when its switches applied it, and
// how many switches' forwarding tables changed.
// Leaves out: unidirectional failures and faults the PHY cannot see (those need BFD: the
// control plane's detection), the time to reprogram tables (none: the member is disabled in
// place), link-up debounce and training (an up is applied after the same delay).
// Units: Time (ps).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/Simulator.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class LocalFailover final : public EventHandler {
 public:
  /// Keeps references to all three; `fib`'s switches are the ones that fail over.
  LocalFailover(Simulator& sim, const Topology& topo, EcmpFib& fib, Time delay);

  struct Record {
    Time changed;                  ///< when the links changed state
    Time applied = Time::max();    ///< when their switches applied it (max: not yet)
    uint32_t switchesChanged = 0;  ///< switches whose forwarding table changed then
  };

  /// `links` went down or up in the data plane now; their switch ends apply it after the
  /// delay. Returns the index of the record that tracks it.
  uint32_t linksChanged(std::span<const LinkId> links, bool up);
  const Record& record(uint32_t index) const { return records_[index]; }
  Time delay() const { return delay_; }

  void onEvent(uint32_t index) override;

 private:
  Simulator& sim_;
  const Topology& topo_;
  EcmpFib& fib_;
  Time delay_;
  std::vector<uint8_t> linkUp_;  // the data plane's state per link, as last reported
  std::vector<Record> records_;
  std::vector<std::vector<LinkId>> pending_;  // per record: the links it applies
  std::vector<NodeId> changed_;               // switches reported by the FIB while applying
  bool applying_ = false;
};

}  // namespace fabricsim
