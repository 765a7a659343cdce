#include "sim/packet/EgressPort.h"

#include "sim/packet/Nic.h"
#include "sim/packet/Switch.h"

namespace fabricsim {

void EgressPort::init(Simulator* sim, PacketPool* pool, PacketCounters* counters, BitRate rate, Time delay,
                      Endpoint owner, Endpoint peer, uint32_t peerLocalPort) {
  sim_ = sim;
  pool_ = pool;
  counters_ = counters;
  rate_ = rate;
  delay_ = delay;
  owner_ = owner;
  peer_ = peer;
  peerLocalPort_ = peerLocalPort;
}

void EgressPort::onEvent(uint32_t tag) {
  if (tag == kArrival) {
    deliverHead();
  } else {
    txPending_ = false;
    transmitNext();
  }
}

void EgressPort::transmitNext() {
  uint32_t pkt;
  uint32_t wire;
  if (nonEmpty_) {
    const int tc = 31 - __builtin_clz(static_cast<unsigned>(nonEmpty_));
    const PacketQueue::Entry e = queues_[tc].pop();
    if (queues_[tc].empty()) nonEmpty_ &= static_cast<uint8_t>(~(1u << tc));
    pkt = e.packet;
    wire = e.wireBytes;
    queuedBytes_ -= wire;
    if (owner_.sw) owner_.sw->onDequeue(wire);
  } else if (owner_.nic) {
    pkt = owner_.nic->pullData();
    if (pkt == kNoPacket) return;
    wire = pool_->get(pkt).wireBytes;
  } else {
    return;
  }
  const Time now = sim_->now();
  if (wire != lastWire_) {
    lastWire_ = wire;
    lastSer_ = serializationTime(wire, rate_);
  }
  const Time ser = lastSer_;
  busyUntil_ = now + ser;
  busyTime_ += ser;
  wireBytes_ += wire;
  ++packets_;
  ++counters_->linkTransmissions;
  const Time arrival = busyUntil_ + delay_;
  const bool wasEmpty = wire_.empty();
  wire_.push(OnWire{arrival, pkt});
  if (wasEmpty) sim_->schedule(arrival, this, kArrival);
  if (nonEmpty_ || (owner_.nic && owner_.nic->hasPendingData())) {
    txPending_ = true;
    sim_->schedule(busyUntil_, this, kTxDone);
  }
}

void EgressPort::deliverHead() {
  const uint32_t pkt = wire_.pop().packet;
  if (!wire_.empty()) sim_->schedule(wire_.front().arrival, this, kArrival);
  if (peer_.sw) {
    peer_.sw->receive(pkt, peerLocalPort_);
  } else {
    counters_->lastDelivery = sim_->now();
    peer_.nic->receive(pkt);
  }
}

}  // namespace fabricsim
