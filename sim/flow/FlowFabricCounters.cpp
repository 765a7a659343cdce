// FlowFabric's reports: its memory and the network counters it can compute from the fluid
// (bytes, retransmissions, losses at failures, per-tier link utilisation and wire bytes), and
// which it cannot (CounterCoverage).
#include <algorithm>
#include <cmath>

#include "sim/flow/FlowFabric.h"

namespace fabricsim {

size_t FlowFabric::memoryBytes() const {
  return solver_.memoryBytes() + active_.capacity() * sizeof(Active) + finishes_.memoryBytes() +
         paceExpiries_.memoryBytes() + holdTimers_.memoryBytes() +
         transfers_.memoryBytes() + deliveries_.capacity() * sizeof(uint32_t) +
         freeDeliveries_.capacity() * sizeof(uint32_t) + portBytes_.capacity() * sizeof(double) +
         nominal_.capacity() * sizeof(double) + routeHops_.capacity() * sizeof(MaxMinSolver::Hop) +
         routeCache_.memoryBytes() + latencyCache_.memoryBytes() + flowlets_.memoryBytes() +
         flowletHops_.capacity() * sizeof(MaxMinSolver::Hop) + stalled_.capacity() * sizeof(Stalled) +
         freeStalled_.capacity() * sizeof(uint32_t) + nvlink_->memoryBytes() +
         (freePaces_.capacity() + paced_.capacity() + shareStamp_.capacity() + passStamp_.capacity()) *
             sizeof(uint32_t) +
         (share_.capacity() + pass_.capacity()) * sizeof(double) + groups_.capacity() * sizeof(Group) +
         freeGroups_.capacity() * sizeof(uint32_t) + groupHops_.capacity() * sizeof(groupHops_[0]) + [&] {
           size_t b = 0;
           for (const Group& g : groups_) b += g.members.capacity() * sizeof(GroupMember);
           return b;
         }();
}

NetworkCounters FlowFabric::networkCounters() const {
  NetworkCounters c;
  // The fluid has no packets, queues, marks, pauses or credits: those counters are not its to
  // give (results: null, listed under `unmodelled`). Hybrid mode's episodes count theirs apart.
  c.modelled = CounterCoverage::none();
  c.activeTime = lastDelivery_;
  c.retransmittedBytes = static_cast<Bytes>(std::llround(resentBytes_));
  c.retransmitTimeouts = timeouts_;
  c.deadLinkBytes = static_cast<Bytes>(std::llround(deadLinkBytes_));
  c.blackholedBytes = static_cast<Bytes>(std::llround(blackholedBytes_));
  // Bytes as the packet backend counts them: sent includes what was resent, delivered includes
  // duplicates, dropped is what was lost at dead links and missing routes (the only losses the
  // fluid has). Every resent byte was either lost in flight (chargeLoss) or resent after its
  // ACKs could not come back (the data had arrived: a duplicate, which the fluid assumes arrives
  // again; it does not follow it). Once the fabric drains, sent = delivered + dropped.
  const Bytes lost = c.deadLinkBytes + c.blackholedBytes;
  const Bytes duplicates =
      std::max<Bytes>(0, static_cast<Bytes>(std::llround(resentBytes_ - deadLinkBytes_ - blackholedBytes_)));
  c.bytesSent = bytesSent_ + lost + duplicates;
  c.bytesDelivered = bytesDelivered_ + duplicates;
  c.bytesDropped = lost;
  c.goodputBytes = bytesDelivered_;
  c.lastRouteLoss = lastRouteLoss_;
  c.nicFailovers = failovers_;
  const Time end = lastDelivery_;
  const double simPs = std::max(1.0, static_cast<double>(end.picos()));
  const int tiers = std::max(1, topo_.tiers());
  std::vector<TierCounters> tc(static_cast<size_t>(2 * tiers));
  static const char* kTierNames[] = {"host-leaf", "leaf-spine", "spine-core", "tier3-tier4"};
  for (int t = 0; t < tiers; ++t) {
    tc[2 * t].name = std::string(kTierNames[std::min(t, 3)]) + " up";
    tc[2 * t + 1].name = std::string(kTierNames[std::min(t, 3)]) + " down";
  }
  const double efficiency = static_cast<double>(mtu_) / framing_.dataWireBytes(mtu_);
  double utilSum = 0;
  for (PortId p = 0; p < topo_.portCount(); ++p) {
    const LinkInfo& l = topo_.link(topo_.portLink(p));
    const NodeId n = topo_.portNode(p);
    const NodeId peer = topo_.peerNode(p);
    const bool up = topo_.isHost(n) || (!topo_.isHost(peer) && topo_.node(peer).tier > topo_.node(n).tier);
    const size_t idx = std::min(static_cast<size_t>(2 * l.tier + (up ? 0 : 1)), tc.size() - 1);
    const double util = std::min(1.0, portBytes_[p] / (solver_.capacity(p) * simPs));
    TierCounters& t = tc[idx];
    ++t.links;
    t.utilMean += util;
    t.utilMax = std::max(t.utilMax, util);
    t.wireBytes += static_cast<Bytes>(portBytes_[p] / efficiency);
    utilSum += util;
    c.linkUtilMax = std::max(c.linkUtilMax, util);
  }
  for (auto& t : tc)
    if (t.links) t.utilMean /= static_cast<double>(t.links);
  c.linkUtilMean = topo_.portCount() ? utilSum / static_cast<double>(topo_.portCount()) : 0;
  c.perTier = std::move(tc);
  return c;
}

}  // namespace fabricsim
