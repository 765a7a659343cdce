#include "sim/packet/Nic.h"

#include "sim/packet/PacketFabric.h"
#include "sim/packet/RoceFraming.h"

namespace fabricsim {

void Nic::init(uint32_t index, Simulator* sim, PacketFabric* fabric, PacketPool* pool, PacketCounters* counters,
               EgressPort* port, uint32_t mtu, int ackEvery, uint32_t windowPackets, Time rto) {
  index_ = index;
  sim_ = sim;
  fabric_ = fabric;
  pool_ = pool;
  counters_ = counters;
  port_ = port;
  mtu_ = mtu;
  ackEvery_ = ackEvery;
  windowPackets_ = windowPackets;
  rto_ = rto;
}

void Nic::activate(uint32_t qpId) {
  QueuePair& q = fabric_->qp(qpId);
  if (!q.active && q.sndNxt < q.psnEnd && windowOpen(q.sndNxt, q.sndUna)) {
    q.active = true;
    active_.push_back(qpId);
  }
  if (q.active) port_->kick();
}

uint32_t Nic::pullData() {
  while (!active_.empty()) {
    const uint32_t qpId = active_.front();
    active_.pop_front();
    QueuePair& q = fabric_->qp(qpId);
    if (q.sndNxt >= q.psnEnd || !windowOpen(q.sndNxt, q.sndUna)) {
      q.active = false;
      continue;
    }
    // Find the message holding sndNxt (sendMsg moves forward; go-back-N resets it).
    RdmaMessage* m = &fabric_->message(q.sendMsg);
    while (q.sndNxt > m->lastPsn) {
      q.sendMsg = m->next;
      m = &fabric_->message(q.sendMsg);
    }
    const uint32_t psn = q.sndNxt++;
    const uint32_t payload = psn == m->lastPsn ? m->lastPayload : mtu_;
    const uint32_t pkt = pool_->allocate();
    Packet& p = pool_->get(pkt);
    p.type = PacketType::Data;
    p.qp = qpId;
    p.psn = psn;
    p.dstNic = q.dstNic;
    p.tuple = q.tuple;
    p.tc = q.tc;
    p.payload = payload;
    p.wireBytes = RoceFraming::dataWireBytes(payload);
    p.flags = psn == m->lastPsn ? Packet::kLastOfMessage : 0;
    counters_->dataBytesSent += payload;
    ++counters_->packetsSent;
    if (psn < q.highestSent) counters_->retransmittedBytes += payload;
    else q.highestSent = psn + 1;
    if (q.sndNxt < q.psnEnd && windowOpen(q.sndNxt, q.sndUna)) active_.push_back(qpId);
    else q.active = false;
    if (!q.timerArmed) {
      q.timerArmed = true;
      q.rtoDeadline = sim_->now() + rto_;
      sim_->schedule(q.rtoDeadline, this, qpId);
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
  }
  pool_->release(pkt);
}

void Nic::onData(Packet& p) {
  counters_->dataBytesDelivered += p.payload;
  QueuePair& q = fabric_->qp(p.qp);
  if (p.psn == q.ePsn) {
    ++q.ePsn;
    q.nackSent = false;
    counters_->goodputBytes += p.payload;
    const bool last = p.flags & Packet::kLastOfMessage;
    if (++q.ackCount >= ackEvery_ || last) {
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
  c.wireBytes = RoceFraming::ackWireBytes();
  ++counters_->packetsSent;
  port_->enqueue(pkt);
}

void Nic::onAck(const Packet& p) {
  const uint32_t qpId = p.qp;
  QueuePair& q = fabric_->qp(qpId);
  const uint32_t acked = p.psn + 1;
  if (acked <= q.sndUna) return;  // stale
  q.sndUna = acked;
  if (q.sndNxt < q.sndUna) q.sndNxt = q.sndUna;
  q.rtoDeadline = sim_->now() + rto_;
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

void Nic::onEvent(uint32_t qpId) {
  QueuePair& q = fabric_->qp(qpId);
  q.timerArmed = false;
  if (q.sndUna >= q.highestSent) return;  // nothing outstanding; re-armed by the next send
  const Time now = sim_->now();
  if (now >= q.rtoDeadline) {
    ++counters_->timeouts;
    q.rtoDeadline = now + rto_;
    goBackTo(qpId, q.sndUna);
  }
  QueuePair& q2 = fabric_->qp(qpId);
  if (!q2.timerArmed && q2.sndUna < q2.highestSent) {
    q2.timerArmed = true;
    sim_->schedule(q2.rtoDeadline, this, qpId);
  }
}

}  // namespace fabricsim
