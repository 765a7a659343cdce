#include "sim/packet/PacketWatchdog.h"

#include <algorithm>
#include <vector>

#include "sim/packet/PacketFabric.h"
#include "sim/packet/PauseCycle.h"

namespace fabricsim {

PacketWatchdog::PacketWatchdog(Simulator& sim, PacketFabric& fabric, const WatchdogSpec& spec)
    : sim_(sim), fabric_(fabric), spec_(spec) {
  timer_ = sim_.newTimer(this, 0);
}

void PacketWatchdog::activity() {
  if (!enabled() || sim_.armed(timer_)) return;
  const Time now = sim_.now();
  lastProgress_ = now;
  lastCheck_ = now;
  lastDelivered_ = fabric_.counters().dataBytesDelivered;
  sim_.arm(timer_, now + spec_.interval);
}

void PacketWatchdog::onEvent(uint32_t) {
  const Time now = sim_.now();
  const PacketCounters& c = fabric_.counters();
  if (c.dataBytesDelivered != lastDelivered_) {
    lastDelivered_ = c.dataBytesDelivered;
    lastProgress_ = now;
  }
  if (spec_.pfcDeadlock && c.pfcPauseFrames != lastPauses_) {
    lastPauses_ = c.pfcPauseFrames;
    const std::string cycle = findDeadlock(lastCheck_);
    if (!cycle.empty()) {
      fabric_.stopByWatchdog(
          TransferFailure::Kind::PfcDeadlock,
          "PFC deadlock at " + formatTime(now) + ": a cycle of switch ports, each holding packets " +
              "its peer has paused since the previous check (" + formatTime(lastCheck_) + "): " + cycle);
      return;
    }
  }
  if (spec_.noProgress > Time::zero() && fabric_.pool().live() > 0 &&
      now - lastProgress_ >= spec_.noProgress) {
    fabric_.stopByWatchdog(TransferFailure::Kind::NoProgress,
                           "no progress at " + formatTime(now) + ": no data reached any NIC for " +
                               formatTime(now - lastProgress_) + " with " +
                               std::to_string(fabric_.pool().live()) +
                               " packets in the fabric; stuck ports: " + stuckPorts());
    return;
  }
  lastCheck_ = now;
  // Keep checking while transfers are outstanding, but never be the only event left: a run that
  // drains must end.
  if (fabric_.outstandingTransfers() > 0 && sim_.pendingEvents() > 0) sim_.arm(timer_, now + spec_.interval);
}

std::string PacketWatchdog::findDeadlock(Time pausedBefore) const {
  const Topology& topo = fabric_.topology();
  const uint8_t lossless = fabric_.losslessClasses();
  for (uint8_t tc = 0; tc < kTrafficClasses; ++tc) {
    if (!((lossless >> tc) & 1)) continue;
    std::vector<PauseEdge> edges;
    for (PortId p = 0; p < topo.portCount(); ++p) {
      const NodeId n = topo.portNode(p);
      const NodeId peer = topo.peerNode(p);
      if (topo.isHost(n) || topo.isHost(peer)) continue;
      const EgressPort& e = fabric_.port(p);
      if (e.queueBytes(tc) > 0 && e.pausedSince(tc) <= pausedBefore)
        edges.push_back(PauseEdge{n, peer, topo.portLocal(p)});
    }
    const std::vector<size_t> cycle = findPauseCycle(edges);
    if (cycle.empty()) continue;
    std::string text = "class " + std::to_string(tc) + ": ";
    for (size_t i : cycle)
      text += topo.node(edges[i].from).name + " port " + std::to_string(edges[i].port) + " -> ";
    text += topo.node(edges[cycle.front()].from).name;
    return text;
  }
  return "";
}

std::string PacketWatchdog::stuckPorts() const {
  const Topology& topo = fabric_.topology();
  std::vector<PortId> ports;
  for (PortId p = 0; p < topo.portCount(); ++p)
    if (fabric_.port(p).queuedBytes() > 0) ports.push_back(p);
  std::stable_sort(ports.begin(), ports.end(), [&](PortId a, PortId b) {
    return fabric_.port(a).queuedBytes() > fabric_.port(b).queuedBytes();
  });
  if (ports.size() > 5) ports.resize(5);
  std::string text;
  for (PortId p : ports) {
    const EgressPort& e = fabric_.port(p);
    if (!text.empty()) text += "; ";
    text += topo.node(topo.portNode(p)).name + " port " + std::to_string(topo.portLocal(p)) + " -> " +
            topo.node(topo.peerNode(p)).name + ": " + formatBytes(static_cast<Bytes>(e.queuedBytes())) +
            " queued";
    if (!e.up()) text += ", link down";
    for (uint8_t tc = 0; tc < kTrafficClasses; ++tc) {
      if (e.queueBytes(tc) == 0) continue;
      const Time since = e.pausedSince(tc);
      if (since != Time::max())
        text += ", class " + std::to_string(tc) + " paused since " + formatTime(since);
      else if (e.creditsEnabled() && e.creditsNow(tc) < static_cast<int64_t>(e.queueFront(tc)))
        text += ", VL " + std::to_string(tc) + " out of credits";
    }
  }
  return text.empty() ? "none (packets on the wire only)" : text;
}

}  // namespace fabricsim
