#include "sim/packet/Nic.h"

#include <algorithm>

#include "sim/cc/CongestionControl.h"
#include "sim/packet/PacketFabric.h"

namespace fabricsim {

void Nic::init(uint32_t index, Simulator* sim, PacketFabric* fabric, PacketPool* pool,
               PacketCounters* counters, EgressPort* port, const NicParams* params) {
  index_ = index;
  sim_ = sim;
  fabric_ = fabric;
  pool_ = pool;
  counters_ = counters;
  port_ = port;
  params_ = params;
  paceTimer_ = sim->newTimer(this, kPaceWake);
}

void Nic::activate(uint32_t qpId) {
  QueuePair& q = fabric_->qp(qpId);
  if (q.failed) return;
  if (q.srcNic != index_) {  // it failed over to another NIC (an ACK or NACK reached this one)
    fabric_->nic(q.srcNic).activate(qpId);
    return;
  }
  if (!q.active && !q.parked && q.sndNxt < q.psnEnd && windowOpen(q.sndNxt, q.sndUna)) {
    q.active = true;
    active_.push(qpId);
  }
  if (q.active) port_->kick();
}

void Nic::park(uint32_t qpId, Time at) {
  QueuePair& q = fabric_->qp(qpId);
  q.active = false;
  q.parked = true;
  // Wake at its next send time, or earlier if a timer may raise its rate before then.
  const Time wake = std::min(at, params_->cc->nextTimer(qpId, sim_->now()));
  parked_.emplace(wake, qpId);
  if (wakeAt_ <= sim_->now() || wake < wakeAt_) {
    wakeAt_ = wake;
    sim_->arm(paceTimer_, wake);  // moves the one pending wake-up: no dead entries
  }
}

void Nic::wakeParked() {
  const Time now = sim_->now();
  while (!parked_.empty() && parked_.top().first <= now) {
    const uint32_t qpId = parked_.top().second;
    parked_.pop();
    QueuePair& q = fabric_->qp(qpId);
    q.parked = false;
    // Re-evaluate with the rate in force now (timers may have raised it).
    const BitRate r = params_->cc->rate(qpId, now);
    const Time allowed = q.lastSend + serializationTime(q.lastWire, r);
    if (allowed < q.nextSend) q.nextSend = allowed;
    if (q.nextSend > now)
      park(qpId, q.nextSend);
    else
      activate(qpId);
  }
  if (!parked_.empty() && (wakeAt_ <= now || parked_.top().first < wakeAt_)) {
    wakeAt_ = parked_.top().first;
    sim_->arm(paceTimer_, wakeAt_);
  }
}

void Nic::setPfcStorm(bool on) {
  if (on == storming_) return;
  storming_ = on;
  if (!on) {
    sim_->cancel(stormTimer_);
    return;
  }
  if (stormTimer_ == kNoTimer) stormTimer_ = sim_->newTimer(this, kStormTick);
  stormTick();
}

void Nic::stormTick() {
  // One PAUSE per lossless class, refreshed at half the pause time so the leaf never resumes.
  for (uint8_t tc = 0; tc < kTrafficClasses; ++tc) {
    if (!((params_->pfcClassMask >> tc) & 1)) continue;
    const uint32_t pkt = pool_->allocate();
    Packet& p = pool_->get(pkt);
    p.type = PacketType::Pause;
    p.tc = tc;
    p.psn = static_cast<uint32_t>(params_->pfcQuanta);
    p.wireBytes = params_->pauseFrame;
    ++counters_->pfcPauseFrames;
    port_->enqueue(pkt);
  }
  sim_->arm(stormTimer_, sim_->now() + port_->pauseDuration(params_->pfcQuanta) / 2);
}

uint32_t Nic::pullData(uint8_t allowed) {
  const Time now = sim_->now();
  size_t budget = active_.size();  // one pass at most
  while (budget-- > 0 && !active_.empty()) {
    const uint32_t qpId = active_.pop();
    QueuePair& q = fabric_->qp(qpId);
    if (q.failed || q.sndNxt >= q.psnEnd || !windowOpen(q.sndNxt, q.sndUna)) {
      q.active = false;
      continue;
    }
    if (!((allowed >> q.tc) & 1)) {  // its class is paused or out of credits: keep its turn
      active_.push(qpId);
      continue;
    }
    if (params_->cc && q.nextSend > now) {
      park(qpId, q.nextSend);
      continue;
    }
    // Find the message holding sndNxt (sendMsg moves forward; go-back-N resets it).
    RdmaMessage* m = &fabric_->message(q.sendMsg);
    while (q.sndNxt > m->lastPsn) {
      q.sendMsg = m->next;
      m = &fabric_->message(q.sendMsg);
    }
    const bool idle = q.sndUna >= q.highestSent;  // nothing outstanding: this packet starts the timer
    const uint32_t psn = q.sndNxt++;
    const uint32_t payload = psn == m->lastPsn ? m->lastPayload : params_->mtu;
    const uint32_t pkt = pool_->allocate();
    Packet& p = pool_->get(pkt);
    p.type = PacketType::Data;
    p.qp = qpId;
    p.psn = psn;
    p.dstNic = q.dstNic;
    p.tuple = q.tuple;
    p.tc = q.tc;
    p.payload = payload;
    p.wireBytes = params_->framing.dataWireBytes(payload);
    p.flags = psn == m->lastPsn ? Packet::kLastOfMessage : 0;
    counters_->dataBytesSent += payload;
    ++counters_->packetsSent;
    if (psn < q.highestSent)
      counters_->retransmittedBytes += payload;
    else
      q.highestSent = psn + 1;
    if (params_->cc) {
      params_->cc->onSent(qpId, now, p.wireBytes);
      const BitRate r = params_->cc->rate(qpId, now);
      q.lastSend = now;
      q.lastWire = p.wireBytes;
      q.nextSend = r < port_->rate() ? now + serializationTime(p.wireBytes, r) : now;
    }
    if (q.sndNxt < q.psnEnd && windowOpen(q.sndNxt, q.sndUna))
      active_.push(qpId);
    else
      q.active = false;
    if (idle && params_->retransmit.enabled()) {
      q.rtoDeadline = now + params_->retransmit.at(0);
      armTimer(qpId);
    }
    return pkt;
  }
  return kNoPacket;
}

void Nic::receive(uint32_t pkt) {
  Packet& p = pool_->get(pkt);
  switch (p.type) {
    case PacketType::Data:
      onData(p);
      break;
    case PacketType::Ack:
      onAck(p);
      break;
    case PacketType::Nack:
      onNack(p);
      break;
    case PacketType::Cnp:
    case PacketType::Becn:
      if (params_->cc) params_->cc->onNotification(p.qp, sim_->now());
      break;
    case PacketType::Pause:
      port_->applyPause(p.tc, static_cast<int>(p.psn));
      break;
  }
  pool_->release(pkt);
}

void Nic::onData(Packet& p) {
  counters_->dataBytesDelivered += p.payload;
  QueuePair& q = fabric_->qp(p.qp);
  if (params_->notify && (p.flags & Packet::kCongestionExperienced)) {
    const Time now = sim_->now();
    if (!q.notified || now - q.lastNotify >= params_->notifyInterval) {
      q.notified = true;
      q.lastNotify = now;
      if (params_->framing.infiniband)
        ++counters_->becns;
      else
        ++counters_->cnps;
      sendControl(params_->framing.infiniband ? PacketType::Becn : PacketType::Cnp, p.qp, 0);
    }
  }
  if (params_->tolerant) {
    onDataTolerant(p);
    return;
  }
  if (p.psn == q.ePsn) {
    ++q.ePsn;
    q.nackSent = false;
    counters_->goodputBytes += p.payload;
    const bool last = p.flags & Packet::kLastOfMessage;
    if (++q.ackCount >= params_->ackEvery || last) {
      q.ackCount = 0;
      sendControl(PacketType::Ack, p.qp, p.psn);
    }
    if (last) {
      const uint32_t msg = q.rcvMsg;
      q.rcvMsg = fabric_->message(msg).next;
      fabric_->messageDelivered(msg);  // may post new messages (reallocating qps): q is stale after this
    }
  } else if (p.psn > q.ePsn) {
    ++counters_->outOfOrder;
    if (!q.nackSent) {
      q.nackSent = true;
      ++counters_->nacks;
      sendControl(PacketType::Nack, p.qp, q.ePsn);
    }
  } else {
    sendControl(PacketType::Ack, p.qp, q.ePsn - 1);
  }
}

void Nic::onDataTolerant(Packet& p) {
  const uint32_t qpId = p.qp;
  QueuePair& q = fabric_->qp(qpId);
  if (p.psn < q.ePsn) {  // duplicate of something already placed: re-acknowledge
    sendControl(PacketType::Ack, qpId, q.ePsn - 1);
    return;
  }
  if (p.psn > q.ePsn) {  // ahead of a gap: place it and remember it
    ++counters_->outOfOrder;
    if (fabric_->reorderBuffer(qpId).insert(q.ePsn, p.psn)) counters_->goodputBytes += p.payload;
    return;
  }
  counters_->goodputBytes += p.payload;
  uint32_t e = q.ePsn + 1;
  if (q.reorder != 0xFFFFFFFFu) e = fabric_->reorderBuffer(qpId).advance(e);
  q.ePsn = e;
  // Complete every message whose last PSN is now below the expected one, in order.
  completedScratch_.clear();
  while (q.rcvMsg != 0xFFFFFFFFu && fabric_->message(q.rcvMsg).lastPsn < q.ePsn) {
    completedScratch_.push_back(q.rcvMsg);
    q.rcvMsg = fabric_->message(q.rcvMsg).next;
  }
  const bool completed = !completedScratch_.empty();
  if (++q.ackCount >= params_->ackEvery || completed) {
    q.ackCount = 0;
    sendControl(PacketType::Ack, qpId, q.ePsn - 1);
  }
  if (!completed) return;
  // Delivering may post new messages (reallocating qps, q is stale after this) and re-enter this
  // NIC, so iterate over a copy.
  const std::vector<uint32_t> done = completedScratch_;
  for (uint32_t m : done) fabric_->messageDelivered(m);
}

void Nic::sendControl(PacketType type, uint32_t qpId, uint32_t psn) {
  const QueuePair& q = fabric_->qp(qpId);
  const uint32_t pkt = pool_->allocate();
  Packet& c = pool_->get(pkt);
  c.type = type;
  c.qp = qpId;
  c.psn = psn;
  c.dstNic = q.srcNic;
  c.tuple = q.reverseTuple;
  c.tc = kControlClass;
  c.payload = 0;
  c.wireBytes = (type == PacketType::Cnp || type == PacketType::Becn) ? params_->framing.notification
                                                                      : params_->framing.ack;
  ++counters_->packetsSent;
  port_->enqueue(pkt);
}

void Nic::onAck(const Packet& p) {
  const uint32_t qpId = p.qp;
  QueuePair& q = fabric_->qp(qpId);
  const uint32_t acked = p.psn + 1;
  if (q.failed || acked <= q.sndUna) return;  // stale
  q.sndUna = acked;
  if (q.sndNxt < q.sndUna) q.sndNxt = q.sndUna;
  // Progress: the retry counter and the backoff start again (IBTA; ConnectX resets its timeout).
  q.timeouts = 0;
  if (params_->retransmit.enabled()) {
    q.rtoDeadline = sim_->now() + params_->retransmit.at(0);
    if (q.sndUna < q.highestSent) armTimer(qpId);
  }
  // Release fully acknowledged messages.
  while (q.msgHead != 0xFFFFFFFFu && fabric_->message(q.msgHead).lastPsn < q.sndUna) {
    const uint32_t m = q.msgHead;
    q.msgHead = fabric_->message(m).next;
    if (q.msgHead == 0xFFFFFFFFu) q.msgTail = 0xFFFFFFFFu;
    if (q.sendMsg == m) q.sendMsg = q.msgHead;
    fabric_->releaseMessage(m);
  }
  activate(qpId);
}

void Nic::onNack(const Packet& p) {
  QueuePair& q = fabric_->qp(p.qp);
  if (p.psn > q.sndUna) {
    // Everything before the NACKed PSN arrived.
    Packet ack = p;
    ack.psn = p.psn - 1;
    onAck(ack);
  }
  goBackTo(p.qp, p.psn);
}

void Nic::goBackTo(uint32_t qpId, uint32_t psn) {
  QueuePair& q = fabric_->qp(qpId);
  if (psn < q.sndUna) psn = q.sndUna;
  if (psn >= q.sndNxt) return;
  q.sndNxt = psn;
  // Re-find the message holding psn, from the oldest unacknowledged one.
  uint32_t m = q.msgHead;
  while (fabric_->message(m).lastPsn < psn) m = fabric_->message(m).next;
  q.sendMsg = m;
  activate(qpId);
}

void Nic::onEvent(uint32_t tag) {
  if (tag == kStormTick) {
    stormTick();
    return;
  }
  if (tag == kPaceWake) {
    wakeParked();
    return;
  }
  const uint32_t qpId = tag;
  QueuePair& q = fabric_->qp(qpId);
  const Time now = sim_->now();
  if (now != q.timerAt) return;  // superseded by an event for an earlier deadline
  if (q.srcNic != index_) {      // armed here before the QP failed over: its NIC handles it
    fabric_->nic(q.srcNic).onEvent(tag);
    return;
  }
  q.timerAt = Time::max();
  if (q.failed || q.sndUna >= q.highestSent) return;  // nothing outstanding; armed by the next send
  if (now >= q.rtoDeadline) {
    ++counters_->timeouts;
    // A NIC of the QP (or its host link) is down: detected now, by the timeout, it moves to
    // another NIC of that host if it may (nic.failover), which resends what is unacknowledged.
    if (!fabric_->nicsUsable(qpId) && fabric_->failOver(qpId)) return;
    if (q.timeouts >= params_->retransmit.retryLimit) {  // transport retry counter exceeded
      fabric_->queuePairFailed(qpId, q.timeouts);
      return;
    }
    ++q.timeouts;
    q.rtoDeadline = now + params_->retransmit.at(q.timeouts);
    goBackTo(qpId, q.sndUna);  // a timeout, unlike a NACK, uses up a retry
  }
  armTimer(qpId);
}

void Nic::detach(uint32_t qpId) {
  QueuePair& q = fabric_->qp(qpId);
  if (q.active)  // keep the others' turns in order
    for (uint32_t n = active_.size(); n > 0; --n)
      if (const uint32_t id = active_.pop(); id != qpId) active_.push(id);
  if (q.parked) {
    std::vector<Parked> keep;
    for (; !parked_.empty(); parked_.pop())
      if (parked_.top().second != qpId) keep.push_back(parked_.top());
    for (const Parked& p : keep) parked_.push(p);
  }
  q.active = false;
  q.parked = false;
}

void Nic::resendAll(uint32_t qpId) {
  QueuePair& q = fabric_->qp(qpId);
  if (params_->retransmit.enabled()) q.rtoDeadline = sim_->now() + params_->retransmit.at(0);
  goBackTo(qpId, q.sndUna);
  activate(qpId);
  armTimer(qpId);
}

void Nic::armTimer(uint32_t qpId) {
  QueuePair& q = fabric_->qp(qpId);
  if (!params_->retransmit.enabled() || q.timerAt <= q.rtoDeadline)
    return;  // an event at or before it is live
  q.timerAt = q.rtoDeadline;
  sim_->schedule(q.timerAt, this, qpId);
}

}  // namespace fabricsim
