#include "sim/packet/Switch.h"

#include <algorithm>

namespace fabricsim {

bool Switch::init(NodeId id, Simulator* sim, const EcmpFib* fib, PacketPool* pool, PacketCounters* counters,
                  EgressPort* ports, PortId firstPort, uint32_t degree, const SwitchParams* params,
                  const std::vector<uint64_t>& headroom) {
  id_ = id;
  sim_ = sim;
  fib_ = fib;
  pool_ = pool;
  counters_ = counters;
  ports_ = ports;
  firstPort_ = firstPort;
  degree_ = degree;
  params_ = params;
  mmuConfig_.buffer = params->buffer;
  mmuConfig_.reserve = params->infiniband ? 0 : params->reserve;
  mmuConfig_.losslessMask = params->pfc.enabled && !params->infiniband ? params->pfc.classMask : 0;
  mmuConfig_.credited = params->infiniband;
  mmuConfig_.dynamicAlpha = params->pfc.dynamicAlpha;
  mmuConfig_.xoff = static_cast<uint64_t>(params->pfc.xoff);
  mmuConfig_.xon = static_cast<uint64_t>(params->pfc.xon);
  mmuConfig_.xonDelta =
      params->pfc.xonDelta > 0 ? static_cast<uint64_t>(params->pfc.xonDelta) : 2ULL * params->maxFrame;
  mmuConfig_.lossyAlpha = params->dtAlpha;
  const bool fits = mmu_.init(&mmuConfig_, headroom);
  if (mmuConfig_.losslessMask) refresh_.assign(static_cast<size_t>(degree) * kTrafficClasses, kNoTimer);
  rng_ = sim->rngStream(Rng::streamId("switch/ecn") ^ (static_cast<uint64_t>(id) << 20));
  if (params->selection == PathSelection::Flowlet) {
    flowlets_.assign(kFlowletEntries, Flowlet{});
    flowletAssigned_.assign(degree, Time::zero());
  }
  if (params->selection == PathSelection::Adaptive) rotation_.assign(kRotationEntries, 0);
  return fits;
}

PortId Switch::selectLid(const Packet& p) {
  const uint8_t local = params_->ibLft->local(id_, p.tuple);
  if (local == IbLft::kNoRoute) return kInvalid;
  const PortId lft = firstPort_ + local;
  if (!params_->ibAdaptive) return lft;
  const std::span<const PortId> group = fib_->group(id_, p.dstNic);
  if (group.size() <= 1) return lft;
  // The least-queued live member in load grades (as the Adaptive case below), ties at random.
  const uint64_t quantum = params_->adaptiveQuantum;
  uint64_t bestQ = UINT64_MAX;
  uint32_t ties = 0;
  PortId pick = lft;
  for (const PortId m : group) {
    const EgressPort& port = ports_[m - firstPort_];
    if (!port.up()) continue;  // a switch knows its own ports' state
    const uint64_t q = port.queueBytes(p.tc) / quantum;
    if (q < bestQ) {
      bestQ = q;
      ties = 1;
      pick = m;
    } else if (q == bestQ && rng_.below(++ties) == 0) {
      pick = m;
    }
  }
  return pick;
}

PortId Switch::selectPort(const Packet& p) {
  // ECMP first: the common case costs one compare before the table lookup.
  if (params_->selection == PathSelection::Ecmp) return fib_->nextHop(id_, p.dstNic, p.tuple);
  if (params_->selection == PathSelection::IbLft) return selectLid(p);
  const std::span<const PortId> group = fib_->group(id_, p.dstNic);
  if (group.size() <= 1) return fib_->nextHop(id_, p.dstNic, p.tuple);  // leaf port, single path, or none
  const auto n = static_cast<uint32_t>(group.size());
  switch (params_->selection) {
    case PathSelection::Flowlet: {
      Flowlet& f = flowlets_[FlowHash::mix(p.tuple ^ fib_->switchSeed(id_)) & (kFlowletEntries - 1)];
      const Time now = sim_->now();
      // A flowlet starts at the first packet an entry sees, or after an idle gap; only then may
      // the member change. Colliding flows share the entry (see the header comment), and a
      // flow whose group is smaller than the entry's member index folds it.
      if (!f.seen || now - f.lastSeen > params_->flowletGap) {
        f.member = newFlowletMember(group, p.tc);
        f.seen = true;
      }
      f.lastSeen = now;
      return group[f.member % n];
    }
    case PathSelection::Adaptive: {
      // The least-loaded member by bytes queued in this class; among equal grades the first after
      // the member this flow's previous packet took, so the flow cycles over them (see Switch.h).
      // With a bias, the hashed member is kept unless another is emptier by more than the bias.
      // Queues are compared in grades (routing.adaptive_quantum, default eight maximum frames), as
      // switch ASICs grade port load coarsely: exact byte counts make packets arriving in lock-step
      // settle into a fixed rotation that pins each flow to one port.
      const uint64_t quantum = params_->adaptiveQuantum;
      uint16_t& last = rotation_[FlowHash::mix(p.tuple ^ fib_->switchSeed(id_)) & (kRotationEntries - 1)];
      uint64_t bestQ = UINT64_MAX;
      uint32_t pick = 0;
      for (uint32_t k = 0, i = last % n; k < n; ++k) {
        if (++i == n) i = 0;
        const uint64_t q = ports_[group[i] - firstPort_].queueBytes(p.tc) / quantum;
        if (q < bestQ) {
          bestQ = q;
          pick = i;
        }
      }
      last = static_cast<uint16_t>(pick);
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
    case PathSelection::IbLft:
      break;  // handled above
  }
  return fib_->nextHop(id_, p.dstNic, p.tuple);
}

uint32_t Switch::newFlowletMember(std::span<const PortId> group, uint8_t tc) {
  // Least loaded by the graded queue of the class; among equal grades the member that has gone
  // longest without a new flowlet (never = time zero); then uniformly at random.
  const uint64_t quantum = params_->adaptiveQuantum;
  const auto n = static_cast<uint32_t>(group.size());
  uint64_t bestQ = UINT64_MAX;
  Time bestAt = Time::max();
  uint32_t ties = 0, pick = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t local = group[i] - firstPort_;
    const uint64_t q = ports_[local].queueBytes(tc) / quantum;
    const Time at = flowletAssigned_[local];
    if (q < bestQ || (q == bestQ && at < bestAt)) {
      bestQ = q;
      bestAt = at;
      ties = 1;
      pick = i;
    } else if (q == bestQ && at == bestAt && rng_.below(++ties) == 0) {
      pick = i;  // reservoir sampling: uniform among the tied members
    }
  }
  // Strictly later than "never": a port chosen at time zero is no longer tied with the unchosen.
  flowletAssigned_[group[pick] - firstPort_] = sim_->now() + Time::ps(1);
  return pick;
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
    if (lossless(p.tc))
      ports_[inPort].applyPause(p.tc, static_cast<int>(p.psn));  // else not a PFC priority here
    pool_->release(pkt);
    return;
  }
  const PortId out = --p.ttl == 0 ? kInvalid : selectPort(p);
  if (out == kInvalid) {  // no route (black hole) or no hops left (a loop)
    ++drops_;
    ++counters_->packetsDropped;
    if (p.type == PacketType::Data) counters_->dataBytesDropped += p.payload;
    if (p.ttl == 0) {
      ++counters_->ttlExpiredPackets;
    } else {
      ++counters_->blackholedPackets;
      counters_->lastRouteLoss = sim_->now();
      if (p.type == PacketType::Data) counters_->blackholedBytes += p.payload;
    }
    if (params_->infiniband) {  // the frame leaves the receive buffer: its credits go back upstream
      EgressPort& back = ports_[inPort];
      back.reverse()->returnCredits(p.tc, p.wireBytes, sim_->now() + back.propagation());
    }
    pool_->release(pkt);
    return;
  }
  EgressPort& port = ports_[out - firstPort_];
  const uint8_t tc = p.tc;
  const uint32_t wire = p.wireBytes;
  uint32_t entryPort = inPort;  // what the queue entry keeps for the release
  if (params_->infiniband) {
    mmu_.addCredited(inPort, tc, wire);  // the credit loop bounds this
  } else if (lossless(tc)) {
    bool xoff = false;
    if (mmu_.admitLossless(inPort, tc, wire, xoff) == Mmu::Verdict::Dropped) {
      ++drops_;
      port.countDrop();
      ++counters_->packetsDropped;
      countLosslessDrop(inPort, tc);
      if (p.type == PacketType::Data) counters_->dataBytesDropped += p.payload;
      pool_->release(pkt);
      return;
    }
    if (xoff) {
      const uint8_t bit = static_cast<uint8_t>(1u << tc);
      bool propagated = false;
      for (uint32_t i = 0; i < degree_ && !propagated; ++i) propagated = ports_[i].pausedMask() & bit;
      if (propagated) ++counters_->pfcPausePropagated;
      sendPause(inPort, tc, params_->pfc.quanta);
      armRefresh(inPort, tc);
    }
  } else {
    const Mmu::LossyCharge charge = mmu_.admitLossy(inPort, wire, port.queueBytes(tc));
    if (charge == Mmu::LossyCharge::Dropped) {
      ++drops_;
      port.countDrop();
      ++counters_->packetsDropped;
      if (p.type == PacketType::Data) counters_->dataBytesDropped += p.payload;
      pool_->release(pkt);
      return;
    }
    if (charge == Mmu::LossyCharge::Reserve) entryPort |= kReserveCharge;
  }
  if (mmu_.used() > maxUsed_) maxUsed_ = mmu_.used();
  if (params_->ecn.enabled && !params_->ecn.markOnDequeue && p.type == PacketType::Data &&
      shouldMark(port, tc, port.queueBytes(tc))) {
    p.flags |= Packet::kCongestionExperienced;
    ++counters_->ecnMarks;
    port.countMark();
  }
  port.enqueue(pkt, entryPort);
}

void Switch::countLosslessDrop(uint32_t inPort, uint8_t tc) {
  ++counters_->losslessDrops;
  for (Violation& v : violations_)
    if (v.port == inPort && v.tc == tc) {
      ++v.drops;
      return;
    }
  violations_.push_back(Violation{inPort, tc, 1, sim_->now()});
}

void Switch::onDequeue(EgressPort& out, uint32_t pkt, const PacketQueue::Entry& e, uint8_t tc,
                       uint64_t queueAfter) {
  release(e, tc);
  if (params_->ecn.enabled && params_->ecn.markOnDequeue) {
    Packet& p = pool_->get(pkt);
    if (p.type == PacketType::Data && shouldMark(out, tc, queueAfter)) {
      p.flags |= Packet::kCongestionExperienced;
      ++counters_->ecnMarks;
      out.countMark();
    }
  }
}

void Switch::release(const PacketQueue::Entry& e, uint8_t tc) {
  if (params_->infiniband) {
    mmu_.releaseCredited(e.inPort, tc, e.wireBytes);
    // The credit update leaves from the ingress MAC toward the upstream port: the wire's delay.
    EgressPort& back = ports_[e.inPort];
    back.reverse()->returnCredits(tc, e.wireBytes, sim_->now() + back.propagation());
  } else if (lossless(tc)) {
    bool xon = false;
    mmu_.releaseLossless(e.inPort, tc, e.wireBytes, xon);
    if (xon) {
      sendPause(e.inPort, tc, 0);
      sim_->cancel(refresh_[e.inPort * kTrafficClasses + tc]);
    }
  } else {
    mmu_.releaseLossy(e.inPort & ~kReserveCharge, e.wireBytes, e.inPort & kReserveCharge);
  }
}

void Switch::sendPause(uint32_t inPort, uint8_t tc, int quanta) {
  const uint32_t pkt = pool_->allocate();
  Packet& p = pool_->get(pkt);
  p.type = PacketType::Pause;
  p.tc = tc;
  p.psn = static_cast<uint32_t>(quanta);
  p.wireBytes = params_->pauseFrame;
  if (quanta > 0)
    ++counters_->pfcPauseFrames;
  else
    ++counters_->pfcResumeFrames;
  ports_[inPort].enqueue(pkt);
}

void Switch::onEvent(uint32_t tag) {
  const uint32_t inPort = tag / kTrafficClasses;
  const uint8_t tc = static_cast<uint8_t>(tag % kTrafficClasses);
  if (!mmu_.paused(inPort, tc)) return;
  // Still congested: refresh the PAUSE before the upstream's timer runs out.
  sendPause(inPort, tc, params_->pfc.quanta);
  armRefresh(inPort, tc);
}

void Switch::armRefresh(uint32_t inPort, uint8_t tc) {
  const uint32_t idx = inPort * kTrafficClasses + tc;
  if (refresh_[idx] == kNoTimer) refresh_[idx] = sim_->newTimer(this, idx);
  // Half the pause time: a refresh may wait behind one maximum frame on the wire, and the
  // loader requires a pause to last at least two maximum frames and a PAUSE frame, so the
  // refreshed PAUSE always arrives before the previous one expires.
  sim_->arm(refresh_[idx], sim_->now() + ports_[inPort].pauseDuration(params_->pfc.quanta) / 2);
}

void Switch::onLinkUp(const EgressPort* port) {
  if (!mmuConfig_.losslessMask) return;
  const auto p = static_cast<uint32_t>(port - ports_);
  // The upstream MAC starts with no PAUSE in force: re-assert the classes still above XOFF at once.
  for (uint8_t tc = 0; tc < kTrafficClasses; ++tc)
    if (mmu_.paused(p, tc)) {
      sendPause(p, tc, params_->pfc.quanta);
      armRefresh(p, tc);
    }
}

}  // namespace fabricsim
