// FlowFabric under failures: flows that lose packets at a dead link or a missing route, and
// their recovery by NAK or retransmission timer (see the model in FlowFabric.h).
#include <algorithm>
#include <cmath>

#include "sim/core/Error.h"
#include "sim/flow/FlowFabric.h"

namespace fabricsim {

void FlowFabric::setLinkUp(uint32_t link, bool up) {
  SIM_CHECK(link < topo_.linkCount(), "setLinkUp: unknown link");
  if (portUp_.empty()) portUp_.assign(topo_.portCount(), 1);
  const LinkInfo& info = topo_.link(link);
  portUp_[topo_.port(info.a, info.aPort)] = up ? 1 : 0;
  portUp_[topo_.port(info.b, info.bPort)] = up ? 1 : 0;
  // A host's port r is its NIC r: the NIC is usable while its link is up.
  if (topo_.isHost(info.a) || topo_.isHost(info.b)) {
    if (nicUp_.empty()) nicUp_.assign(topo_.nicCount(), 1);
    if (topo_.isHost(info.a)) nicUp_[info.a * topo_.nicsPerHost() + info.aPort] = up ? 1 : 0;
    if (topo_.isHost(info.b)) nicUp_[info.b * topo_.nicsPerHost() + info.bPort] = up ? 1 : 0;
  }
  routesChanged();
}

void FlowFabric::routesChanged() {
  failuresSeen_ = true;
  cacheStale_ = true;  // cleared at the next lookup: a control plane changes many rows at once
  rerouteAll_ = true;
  requestRecompute();
}

bool FlowFabric::ackPathWorks(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qp) const {
  const uint64_t tuple = path_.queuePairTuple(srcNic, dstNic, tc, qp, true);
  PortId p = topo_.nicPort(dstNic);
  if (!portUp_.empty() && !portUp_[p]) return false;
  size_t hops = 1;
  for (NodeId at = topo_.peerNode(p); !topo_.isHost(at); at = topo_.peerNode(p)) {
    p = path_.nextHop(at, srcNic, tuple);
    if (p == kInvalid || (!portUp_.empty() && !portUp_[p]) || ++hops > topo_.nodeCount()) return false;
  }
  return true;
}

void FlowFabric::checkAcks(const Active& a) {
  const FlowRecord& rec = transfers_.record(a.record);
  uint32_t srcNic, dstNic;
  uint64_t key;
  nicsOf(rec.srcGpu, rec.dstGpu, a.tc, a.qp, srcNic, dstNic, key);
  if (ackPathWorks(srcNic, dstNic, a.tc, a.qp)) return;
  const uint32_t slot = newStalled();
  Stalled& st = stalled_[slot];
  st.record = a.record;  // delivered before the wait ends: only the copies below are read
  st.srcGpu = rec.srcGpu;
  st.dstGpu = rec.dstGpu;
  st.bytes = rec.bytes;
  st.tc = a.tc;
  st.qp = a.qp;
  st.since = sim_.now();
  st.ackOnly = true;
  ++stalls_;
  armTimer(slot);
}

bool FlowFabric::routeWorks() const {
  if (routeBroken_) return false;
  if (portUp_.empty()) return true;
  for (size_t i = 0; i + ackHops_ < hops_.size(); ++i)
    if (!portUp_[hops_[i].resource]) return false;
  return true;
}

uint32_t FlowFabric::newStalled() {
  uint32_t slot;
  if (!freeStalled_.empty()) {
    slot = freeStalled_.back();
    freeStalled_.pop_back();
  } else {
    slot = static_cast<uint32_t>(stalled_.size());
    stalled_.emplace_back();
  }
  stalled_[slot] = Stalled{};
  stalled_[slot].used = true;
  return slot;
}

void FlowFabric::reroute() {
  explodeGroups(sim_.now());  // from here on every edge of a pipeline is on its own
  const Time now = sim_.now();
  // Active flows: a flow whose path lost a port stalls (its packets in flight are gone); one
  // whose path still works follows the tables' new choice at once.
  for (uint32_t f = 0; f < active_.size(); ++f) {
    Active& a = active_[f];
    if (!a.live) continue;
    const auto old = solver_.hops(f);
    PortId dead = kInvalid;
    if (!portUp_.empty())
      for (uint32_t i = 0; i < a.dataHops && dead == kInvalid; ++i)
        if (!portUp_[old[i].resource]) dead = old[i].resource;
    if (dead != kInvalid) {
      stall(f, now, delayToFarEnd(old, a.dataHops, dead, transfers_.record(a.record).bytes), false);
      continue;
    }
    // A flowlet whose path works goes on where it is (a switch keeps a live flowlet's member).
    if (selection_ == Selection::Flowlet) continue;
    const FlowRecord& rec = transfers_.record(a.record);
    const Time latency = route(rec.srcGpu, rec.dstGpu, a.tc, a.qp, rec.bytes, rec.id);
    if (!routeWorks()) {  // the tables now send it into a black hole
      // Lost: what has not yet passed the switch without a route (the route's delay up to
      // it), or what has not passed a dead port of the new path.
      PortId deadHop = kInvalid;
      for (size_t i = 0; i + ackHops_ < hops_.size() && deadHop == kInvalid; ++i)
        if (!portUp_.empty() && !portUp_[hops_[i].resource]) deadHop = hops_[i].resource;
      const Time window =
          deadHop != kInvalid
              ? delayToFarEnd(hops_, static_cast<uint32_t>(hops_.size() - ackHops_), deadHop, rec.bytes)
              : latency;
      stall(f, now, window, deadHop == kInvalid);
      continue;
    }
    // The flow's pace resource (hybrid mode) is not part of its path.
    const size_t pathHops = old.size() - (a.pace != kNoPace ? 1 : 0);
    bool same = hops_.size() == pathHops;
    for (size_t i = 0; same && i < hops_.size(); ++i)
      same = hops_[i].resource == old[i].resource && hops_[i].weight == old[i].weight;
    if (same) continue;
    settle(f, now);
    const Active moved = a;
    a.live = false;
    finishes_.erase(f);
    releasePace(a);
    solver_.removeFlow(f);
    // hops_ still holds the new path (nothing above rewrote it).
    const uint32_t g = start(moved.record, moved.remaining, latency, moved.burst, moved.tc, moved.qp);
    active_[g].orderKey = moved.orderKey;  // still in front of its connection
  }
  // Stalled flows: if their path works again while the sender is still sending, a strict
  // receiver sees a gap and NAKs: they resume one round trip later. A tolerant one never NAKs.
  for (uint32_t slot = 0; nakRecovery_ && slot < stalled_.size(); ++slot) {
    Stalled& st = stalled_[slot];
    if (!st.used || st.nak || st.ackOnly) continue;
    const double sentSince = st.rate * static_cast<double>((now - st.since).picos());
    if (sentSince >= st.remaining) continue;  // it has sent everything: only its timer recovers it
    const Time latency = route(st.srcGpu, st.dstGpu, st.tc, st.qp, st.bytes, transfers_.record(st.record).id);
    if (!routeWorks()) continue;
    st.nak = true;
    st.due = now + latency * 2;
    sim_.schedule(st.due, this, kStallBit | slot);
  }
  std::vector<uint64_t> orders;
  orders.swap(stalledOrders_);
  for (const uint64_t key : orders) releaseOrder(key);
}

Time FlowFabric::delayToFarEnd(std::span<const MaxMinSolver::Hop> hops, uint32_t dataHops, PortId dead,
                               Bytes bytes) const {
  // Arrival delay per port's far end, filled tier by tier: the first hop is the NIC's port
  // (propagation only: the fluid part holds the serialisation at the bottleneck), each later
  // one adds the switch, the link and one frame's serialisation (as the route's latency does).
  const uint32_t frame = framing_.dataWireBytes(static_cast<uint32_t>(std::min<Bytes>(bytes, mtu_)));
  std::vector<Time> at(dataHops, Time::max());
  for (uint32_t i = 0; i < dataHops; ++i)
    if (topo_.isHost(topo_.portNode(hops[i].resource))) at[i] = topo_.portLatency(hops[i].resource);
  for (uint32_t pass = 0; pass < dataHops; ++pass) {
    bool grew = false;
    for (uint32_t i = 0; i < dataHops; ++i) {
      if (at[i] == Time::max()) continue;
      const NodeId far = topo_.peerNode(hops[i].resource);
      for (uint32_t j = 0; j < dataHops; ++j) {
        if (at[j] != Time::max() || topo_.portNode(hops[j].resource) != far) continue;
        const PortId p = hops[j].resource;
        at[j] = at[i] + spec_.sw.latency + topo_.portLatency(p) + serializationTime(frame, topo_.portRate(p));
        grew = true;
      }
    }
    if (!grew) break;
  }
  for (uint32_t i = 0; i < dataHops; ++i)
    if (hops[i].resource == dead && at[i] != Time::max()) return at[i];
  return latencyOf(bytes);  // not on the path as walked: the whole one-way delay bounds it
}

void FlowFabric::stall(uint32_t f, Time now, Time lostWindow, bool blackhole) {
  settle(f, now);
  Active& a = active_[f];
  const FlowRecord& rec = transfers_.record(a.record);
  // Lost in flight: what the flow sent in the last `lostWindow` (the packets that had not yet
  // passed the failure), at most what it has sent at all. Go-back-N sends it again from the
  // first of them once the receiver NAKs or the timer expires.
  const double sent = static_cast<double>(rec.bytes) - std::max(0.0, a.remaining);
  const double lost = std::min(sent, a.rate * static_cast<double>(lostWindow.picos()));
  const auto old = solver_.hops(f);
  for (uint32_t i = 0; i < a.dataHops; ++i)  // what it will not send on this path after all
    portBytes_[old[i].resource] -= std::max(0.0, a.remaining) * old[i].weight;
  const uint32_t slot = newStalled();
  Stalled& st = stalled_[slot];
  st.record = a.record;
  st.srcGpu = rec.srcGpu;
  st.dstGpu = rec.dstGpu;
  st.bytes = rec.bytes;
  st.remaining = std::max(0.0, a.remaining) + lost;
  st.rate = a.rate;
  st.burst = a.burst;
  st.tc = a.tc;
  st.qp = a.qp;
  st.lost = lost;
  st.blackhole = blackhole;
  st.since = now;
  ++stalls_;
  a.live = false;
  endFlowlet(a, now);  // its flowlet ends with the loss
  finishes_.erase(f);
  releasePace(a);
  solver_.removeFlow(f);
  // A loss ends the connection's order: its next message goes once reroute() is done.
  if (a.orderKey != 0) stalledOrders_.push_back(a.orderKey);
  a.orderKey = 0;
  armTimer(slot);
}

void FlowFabric::armTimer(uint32_t slot) {
  Stalled& st = stalled_[slot];
  if (!retransmit_.enabled()) {  // no timer (InfiniBand local_ack_timeout 0): nothing recovers it
    failStalled(slot, TransferFailure::Kind::Stalled);
    return;
  }
  st.nak = false;
  st.due = sim_.now() + retransmit_.at(st.timeouts);
  sim_.schedule(st.due, this, kStallBit | slot);
}

void FlowFabric::onStallEvent(uint32_t slot) {
  Stalled& st = stalled_[slot];
  if (!st.used || st.due != sim_.now()) return;  // superseded
  st.due = Time::max();
  if (st.ackOnly) {  // delivered; the sender times out and resends until an ACK gets through
    ++timeouts_;
    uint32_t src, dst;
    uint64_t key;
    nicsOf(st.srcGpu, st.dstGpu, st.tc, st.qp, src, dst, key);
    resentBytes_ += static_cast<double>(st.bytes);  // go-back-N resends the unacknowledged message
    if (ackPathWorks(src, dst, st.tc, st.qp)) {
      st.used = false;
      freeStalled_.push_back(slot);
    } else if (static_cast<int>(st.timeouts) >= retransmit_.retryLimit) {
      failStalled(slot, TransferFailure::Kind::RetryExceeded);
    } else {
      ++st.timeouts;
      armTimer(slot);
    }
    return;
  }
  if (!st.nak) {  // the retransmission timer expired
    ++timeouts_;
    if (failOver(slot)) {
      st.timeouts = 0;  // a new path: the retry counter starts again
    } else if (static_cast<int>(st.timeouts) >= retransmit_.retryLimit) {
      uint32_t src, dst;
      uint64_t key;
      nicsOf(st.srcGpu, st.dstGpu, st.tc, st.qp, src, dst, key);
      failStalled(slot,
                  nicsUp(src, dst) ? TransferFailure::Kind::RetryExceeded : TransferFailure::Kind::NicDown);
      return;
    } else {
      ++st.timeouts;
    }
  }
  route(st.srcGpu, st.dstGpu, st.tc, st.qp, st.bytes, transfers_.record(st.record).id);
  if (!routeWorks()) {  // resent into the failure again
    chargeLoss(st, sim_.now());
    st.blackhole = routeBroken_;
    st.lost = 0;
    st.since = sim_.now();
    armTimer(slot);
    return;
  }
  resume(slot, sim_.now());
}

double FlowFabric::chargeLoss(const Stalled& st, Time now) {
  // Sent again: what was in flight when it stalled, and what it kept sending into the failure
  // (at its rate, until it had sent everything).
  const double intoFailure = st.rate * static_cast<double>((now - st.since).picos());
  const double lost = std::min(st.remaining, st.lost + intoFailure);
  resentBytes_ += lost;
  (st.blackhole ? blackholedBytes_ : deadLinkBytes_) += lost;
  if (lost > 0) {
    const double sendingPs = st.rate > 0 ? std::max(0.0, st.remaining - st.lost) / st.rate : 0.0;
    const Time last =
        st.since +
        Time::ps(static_cast<int64_t>(std::min(sendingPs, static_cast<double>((now - st.since).picos()))));
    lastRouteLoss_ = std::max(lastRouteLoss_, last);
  }
  return lost;
}

void FlowFabric::resume(uint32_t slot, Time now) {
  Stalled st = stalled_[slot];
  stalled_[slot].used = false;
  freeStalled_.push_back(slot);
  const Time latency = route(st.srcGpu, st.dstGpu, st.tc, st.qp, st.bytes, transfers_.record(st.record).id);
  SIM_CHECK(routeWorks(), "resuming a flow on a broken path");
  chargeLoss(st, now);
  for (size_t i = 0; i + ackHops_ < hops_.size(); ++i)
    portBytes_[hops_[i].resource] += st.remaining * hops_[i].weight;
  if (st.remaining <= 0) {
    scheduleDelivery(st.record, sim_.now() + latency);
    return;
  }
  start(st.record, st.remaining, latency, st.burst, st.tc, st.qp);
  requestRecompute();
}

bool FlowFabric::failOver(uint32_t slot) {
  if (!failover_ || nicUp_.empty()) return false;
  const Stalled& st = stalled_[slot];
  uint32_t src, dst;
  uint64_t key;
  nicsOf(st.srcGpu, st.dstGpu, st.tc, st.qp, src, dst, key);
  if (nicsUp(src, dst) || !path_.failoverNics(src, dst, nicUp_)) return false;
  movedQps_[key] = {src, dst};
  ++failovers_;
  // Cached paths of the queue pair lead to the old NICs; its other stalled transfers see the new
  // path at the next recomputation (or their own timers).
  cacheStale_ = true;
  rerouteAll_ = true;
  requestRecompute();
  return true;
}

void FlowFabric::failStalled(uint32_t slot, TransferFailure::Kind kind) {
  Stalled& st = stalled_[slot];
  st.used = false;
  freeStalled_.push_back(slot);
  // An ACK-only wait follows a delivered transfer (its slot may hold another one by now).
  if (!st.ackOnly && transfers_.isOpen(st.record)) transfers_.fail(st.record);
  TransferFailure f;
  f.kind = kind;
  f.at = sim_.now();
  uint32_t srcNic, dstNic;
  uint64_t key;
  nicsOf(st.srcGpu, st.dstGpu, st.tc, st.qp, srcNic, dstNic, key);
  auto name = [&](uint32_t nic) {
    const uint32_t perHost = static_cast<uint32_t>(topo_.nicsPerHost());
    std::string n = topo_.node(nic / perHost).name;
    if (perHost > 1) n += " nic " + std::to_string(nic % perHost);
    return n;
  };
  f.source = name(srcNic);
  f.destination = name(dstNic);
  f.srcNic = srcNic;
  f.dstNic = dstNic;
  f.trafficClass = st.tc;
  f.qpIndex = st.qp;
  f.retries = static_cast<int>(st.timeouts);
  f.transfers = st.ackOnly ? 0 : 1;
  f.srcGpus = {st.srcGpu};
  f.dstGpus = {st.dstGpu};
  std::string cause;
  if (kind == TransferFailure::Kind::NicDown) {
    const uint32_t dead = nicUp_[srcNic] ? dstNic : srcNic;
    cause = "NIC " + name(dead) + " or its host link is down and " +
            (failover_
                 ? "no other NIC of " + topo_.node(topo_.hostOfNic(dead)).name + " is up and reaches the peer"
                 : std::string("nic.failover is off")) +
            "; ";
  }
  f.message =
      f.source + " -> " + f.destination + " QP " + std::to_string(st.qp) + ": " + cause +
      (kind == TransferFailure::Kind::Stalled
           ? "packets lost at a failure and no retransmission timer (local_ack_timeout 0) to resend them"
           : "transport retry counter exceeded after " + std::to_string(st.timeouts) +
                 (st.ackOnly ? " retries: the data arrived but no ACK came back (their path is broken)"
                             : " retries without a working path"));
  failures_.push_back(std::move(f));
  sim_.stop();  // the workload cannot complete: the run ends here
}

}  // namespace fabricsim
