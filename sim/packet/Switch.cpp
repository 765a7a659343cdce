#include "sim/packet/Switch.h"

#include <algorithm>

namespace fabricsim {

void Switch::init(NodeId id, Simulator* sim, const EcmpFib* fib, PacketPool* pool, PacketCounters* counters,
                  EgressPort* ports, PortId firstPort, uint32_t degree, const SwitchParams* params) {
  id_ = id;
  sim_ = sim;
  fib_ = fib;
  pool_ = pool;
  counters_ = counters;
  ports_ = ports;
  firstPort_ = firstPort;
  degree_ = degree;
  params_ = params;
  if (params->pfc.enabled || params->infiniband) {
    ingress_.assign(static_cast<size_t>(degree) * kTrafficClasses, 0);
    pauseSent_.assign(degree, 0);
    refreshAt_.assign(static_cast<size_t>(degree) * kTrafficClasses, Time::max());
  }
  rng_ = sim->rngStream(Rng::streamId("switch/ecn") ^ (static_cast<uint64_t>(id) << 20));
  if (params->selection == PathSelection::Flowlet) flowlets_.assign(kFlowletEntries, Flowlet{});
}

PortId Switch::selectPort(const Packet& p) {
  if (params_->selection == PathSelection::Ecmp) return fib_->nextHop(id_, p.dstNic, p.tuple);
  const std::span<const PortId> group = fib_->group(id_, p.dstNic);
  if (group.size() <= 1) return fib_->nextHop(id_, p.dstNic, p.tuple);  // leaf port, single path, or none
  const auto n = static_cast<uint32_t>(group.size());
  switch (params_->selection) {
    case PathSelection::Flowlet: {
      Flowlet& f = flowlets_[FlowHash::mix(p.tuple ^ fib_->switchSeed(id_)) & (kFlowletEntries - 1)];
      const Time now = sim_->now();
      // The table is indexed by hash without a tag, as flowlet tables in switch ASICs are:
      // flows that collide in it share an entry, and so a path, rather than evicting each other.
      if (now - f.lastSeen > params_->flowletGap || f.member >= n) {
        f.member = static_cast<uint32_t>(rng_.below(n));  // a new flowlet may take any member
      }
      f.lastSeen = now;
      return group[f.member];
    }
    case PathSelection::Adaptive: {
      // The least-loaded member by bytes queued in this class. With a bias, the hashed member is
      // kept unless another is emptier by more than the bias; without one, ties are broken at
      // random, so an idle fabric spreads packets instead of degenerating to ECMP.
      // Queues are compared in grades (routing.adaptive_quantum, default eight maximum frames), as
      // switch ASICs grade port load coarsely: exact byte counts make packets arriving in lock-step
      // settle into a fixed rotation that pins each flow to one port.
      const uint64_t quantum = params_->adaptiveQuantum;
      uint64_t bestQ = UINT64_MAX;
      uint32_t ties = 0, pick = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t q = ports_[group[i] - firstPort_].queueBytes(p.tc) / quantum;
        if (q < bestQ) {
          bestQ = q;
          ties = 1;
          pick = i;
        } else if (q == bestQ && rng_.below(++ties) == 0) {
          pick = i;  // reservoir sampling: uniform among the tied members
        }
      }
      if (params_->adaptiveBias > 0) {
        const uint32_t hashed = FlowHash::select(p.tuple, fib_->switchSeed(id_), n);
        if (ports_[group[hashed] - firstPort_].queueBytes(p.tc) <= bestQ * quantum + params_->adaptiveBias)
          return group[hashed];
      }
      return group[pick];
    }
    case PathSelection::Spray:
      if (params_->sprayRoundRobin) return group[sprayNext_++ % n];
      return group[rng_.below(n)];
    case PathSelection::Ecmp:
      break;
  }
  return fib_->nextHop(id_, p.dstNic, p.tuple);
}

uint64_t Switch::headroom(uint32_t inPort) const {
  if (params_->pfc.headroom > 0) return static_cast<uint64_t>(params_->pfc.headroom);
  // After XOFF is crossed, data keeps arriving for: the PAUSE's trip upstream (our delay toward
  // the peer) plus the trip of what the peer had already sent (its delay toward us, which in this
  // model includes our forwarding latency), one frame we may be sending ahead of the PAUSE, one
  // the peer may have started, and the PAUSE frame itself.
  const EgressPort& p = ports_[inPort];
  const Time roundTrip = p.delay() + p.reverse()->delay();
  return static_cast<uint64_t>(bytesInTime(roundTrip, p.rate())) + 2 * params_->maxFrame + params_->pauseFrame;
}

uint64_t Switch::xoff() const {
  if (params_->pfc.dynamicAlpha > 0)
    return static_cast<uint64_t>(params_->pfc.dynamicAlpha * static_cast<double>(params_->buffer - std::min(used_, params_->buffer)));
  return static_cast<uint64_t>(params_->pfc.xoff);
}

uint64_t Switch::xon() const {
  if (params_->pfc.dynamicAlpha > 0) {
    const uint64_t delta = params_->pfc.xonDelta > 0 ? static_cast<uint64_t>(params_->pfc.xonDelta) : 2ULL * params_->maxFrame;
    const uint64_t off = xoff();
    return off > delta ? off - delta : 0;
  }
  return static_cast<uint64_t>(params_->pfc.xon);
}

bool Switch::redMark(uint64_t q) {
  const EcnSpec& e = params_->ecn;
  if (q <= static_cast<uint64_t>(e.kmin)) return false;
  if (q > static_cast<uint64_t>(e.kmax)) return true;
  const double span = static_cast<double>(e.kmax - e.kmin);
  const double p = span > 0 ? e.pmax * static_cast<double>(q - static_cast<uint64_t>(e.kmin)) / span : 1.0;
  return rng_.uniform() < p;
}

void Switch::receive(uint32_t pkt, uint32_t inPort) {
  Packet& p = pool_->get(pkt);
  if (p.type == PacketType::Pause) {  // consumed by the MAC: pauses our egress toward the sender
    ports_[inPort].applyPause(p.tc, static_cast<int>(p.psn));
    pool_->release(pkt);
    return;
  }
  const PortId out = selectPort(p);
  if (out == kInvalid) {  // no route: black hole
    ++drops_;
    ++counters_->packetsDropped;
    ++counters_->blackholedPackets;
    counters_->lastRouteLoss = sim_->now();
    if (p.type == PacketType::Data) {
      counters_->dataBytesDropped += p.payload;
      counters_->blackholedBytes += p.payload;
    }
    pool_->release(pkt);
    return;
  }
  EgressPort& port = ports_[out - firstPort_];
  const uint8_t tc = p.tc;
  const uint32_t wire = p.wireBytes;
  if (params_->infiniband) {
    ingress_[inPort * kTrafficClasses + tc] += wire;  // the credit loop bounds this
  } else if (lossless(tc)) {
    // Static thresholds: beyond XOFF a (port, priority) may use only its headroom. Dynamic XOFF
    // moves with the free buffer, so there only the whole buffer bounds admission.
    const bool headroomExhausted = params_->pfc.dynamicAlpha <= 0 &&
                                   ingress_[inPort * kTrafficClasses + tc] + wire > xoff() + headroom(inPort);
    if (headroomExhausted || used_ + wire > params_->buffer) {
      ++drops_;
      port.countDrop();
      ++counters_->packetsDropped;
      ++counters_->losslessDrops;
      if (p.type == PacketType::Data) counters_->dataBytesDropped += p.payload;
      pool_->release(pkt);
      return;
    }
    uint64_t& ing = ingress_[inPort * kTrafficClasses + tc];
    ing += wire;
    const uint8_t bit = static_cast<uint8_t>(1u << tc);
    if (pauseSent_[inPort] & bit) {
      const uint64_t off = xoff();
      if (ing > off && ing - off > counters_->maxHeadroomUsed) counters_->maxHeadroomUsed = ing - off;
    }
    if (!(pauseSent_[inPort] & bit) && ing >= xoff()) {
      bool propagated = false;
      for (uint32_t i = 0; i < degree_ && !propagated; ++i) propagated = ports_[i].pausedMask() & bit;
      if (propagated) ++counters_->pfcPausePropagated;
      pauseSent_[inPort] |= bit;
      sendPause(inPort, tc, params_->pfc.quanta);
      scheduleRefresh(inPort, tc);
    }
  } else {
    const uint64_t freeBytes = params_->buffer - std::min(used_, params_->buffer);
    const uint64_t threshold = static_cast<uint64_t>(params_->dtAlpha * static_cast<double>(freeBytes));
    if (wire > freeBytes || port.queueBytes(tc) + wire > threshold) {
      ++drops_;
      port.countDrop();
      ++counters_->packetsDropped;
      if (p.type == PacketType::Data) counters_->dataBytesDropped += p.payload;
      pool_->release(pkt);
      return;
    }
  }
  used_ += wire;
  if (used_ > maxUsed_) maxUsed_ = used_;
  if (params_->ecn.enabled && !params_->ecn.markOnDequeue && p.type == PacketType::Data &&
      ((params_->ecn.classMask >> tc) & 1) && redMark(port.queueBytes(tc))) {
    p.flags |= Packet::kCongestionExperienced;
    ++counters_->ecnMarks;
  }
  port.enqueue(pkt, inPort);
}

void Switch::onDequeue(uint32_t pkt, const PacketQueue::Entry& e, uint8_t tc, uint64_t queueAfter) {
  used_ -= e.wireBytes;
  if (params_->infiniband) {
    ingress_[e.inPort * kTrafficClasses + tc] -= e.wireBytes;
    EgressPort& back = ports_[e.inPort];
    back.reverse()->returnCredits(tc, e.wireBytes, sim_->now() + back.delay());
  } else if (lossless(tc)) {
    uint64_t& ing = ingress_[e.inPort * kTrafficClasses + tc];
    ing -= e.wireBytes;
    const uint8_t bit = static_cast<uint8_t>(1u << tc);
    if ((pauseSent_[e.inPort] & bit) && ing <= xon()) {
      pauseSent_[e.inPort] &= static_cast<uint8_t>(~bit);
      sendPause(e.inPort, tc, 0);
    }
  }
  if (params_->ecn.enabled && params_->ecn.markOnDequeue && ((params_->ecn.classMask >> tc) & 1)) {
    Packet& p = pool_->get(pkt);
    if (p.type == PacketType::Data && redMark(queueAfter)) {
      p.flags |= Packet::kCongestionExperienced;
      ++counters_->ecnMarks;
    }
  }
}

void Switch::sendPause(uint32_t inPort, uint8_t tc, int quanta) {
  const uint32_t pkt = pool_->allocate();
  Packet& p = pool_->get(pkt);
  p.type = PacketType::Pause;
  p.tc = tc;
  p.psn = static_cast<uint32_t>(quanta);
  p.wireBytes = params_->pauseFrame;
  if (quanta > 0) ++counters_->pfcPauseFrames;
  else ++counters_->pfcResumeFrames;
  ports_[inPort].enqueue(pkt);
}

void Switch::onEvent(uint32_t tag) {
  const uint32_t inPort = tag / kTrafficClasses;
  const uint8_t tc = static_cast<uint8_t>(tag % kTrafficClasses);
  const uint8_t bit = static_cast<uint8_t>(1u << tc);
  if (!(pauseSent_[inPort] & bit) || refreshAt_[tag] != sim_->now()) return;  // resumed, or superseded
  // Still congested: refresh the PAUSE before the upstream's timer runs out.
  sendPause(inPort, tc, params_->pfc.quanta);
  scheduleRefresh(inPort, tc);
}

void Switch::scheduleRefresh(uint32_t inPort, uint8_t tc) {
  const uint32_t idx = inPort * kTrafficClasses + tc;
  refreshAt_[idx] = sim_->now() + ports_[inPort].pauseDuration(params_->pfc.quanta) / 2 + Time::ps(1);
  sim_->schedule(refreshAt_[idx], this, idx);
}

}  // namespace fabricsim
