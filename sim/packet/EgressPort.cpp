#include "sim/packet/EgressPort.h"

#include <algorithm>

#include "sim/packet/Nic.h"
#include "sim/packet/Switch.h"

namespace fabricsim {

void EgressPort::init(Simulator* sim, PacketPool* pool, PacketCounters* counters, BitRate rate,
                      Time propagation, Time forwarding, Time peerResponse, Endpoint owner, Endpoint peer,
                      uint32_t peerLocalPort, EgressPort* reverse) {
  sim_ = sim;
  pool_ = pool;
  counters_ = counters;
  rate_ = rate;
  propagation_ = propagation;
  delay_ = propagation + forwarding;
  controlDelay_ = propagation + peerResponse;
  wakeTimer_ = sim->newTimer(this, kWake);
  owner_ = owner;
  peer_ = peer;
  peerLocalPort_ = peerLocalPort;
  reverse_ = reverse;
}

void EgressPort::enableCredits(uint64_t perClass, uint32_t maxFrame) {
  if (!cr_) cr_ = std::make_unique<CreditState>();
  CreditState& f = *cr_;
  credits_ = true;
  for (auto& c : f.credits) c = static_cast<int64_t>(perClass);
  f.minCredits = static_cast<int64_t>(perClass);
  f.maxPullWire = maxFrame;
  f.perClass = perClass;
  f.creditLoop = serializationTime(maxFrame, rate_) + delay_ + propagation_;
}

void EgressPort::setUp(bool up) {
  const Time now = sim_->now();
  if (!up && up_) lastDownAt_ = now;
  if (up && !up_) {
    lastUpAt_ = now;
    // Link-level state starts again on both ends: no PAUSE survives a link reset, and credits are
    // what the peer really has free (what it still holds from before the failure stays counted).
    if (fc_)
      for (int tc = 0; tc < kTrafficClasses; ++tc)
        if (fc_->pausedUntil[tc] > now) {
          fc_->pausedTotal += now - fc_->pauseStart[tc];
          fc_->pauseStart[tc] = now;
          fc_->pausedUntil[tc] = now;
        }
    if (credits_) {
      cr_->inFlight.clear();
      for (int vl = 0; vl < kTrafficClasses; ++vl) {
        const uint64_t held =
            peer_.sw ? peer_.sw->creditedBytes(peerLocalPort_, static_cast<uint8_t>(vl)) : 0;
        cr_->credits[vl] = static_cast<int64_t>(cr_->perClass) - static_cast<int64_t>(held);
      }
    }
  }
  const bool cameUp = up && !up_;
  up_ = up;
  if (cameUp && owner_.sw) owner_.sw->onLinkUp(this);
  if (cameUp) kick();
}

void EgressPort::returnCredits(uint8_t vl, uint32_t bytes, Time arrival) {
  if (!creditsEnabled()) return;
  if (!reverse_->up_) return;  // the update rides the reverse direction: lost while it is down
  cr_->inFlight.push(CreditReturn{arrival, bytes, vl});
  // An idle port that is waiting for credits and has no wake-up pending looks again then.
  const bool work = (nonEmpty_ & 0xFF) || (owner_.nic && owner_.nic->hasPendingData());
  if (work && sim_->now() >= busyUntil_ && busyEventAt_ == Time::max() && arrival < wakeAt_) armWake(arrival);
}

void EgressPort::absorbCredits() {
  if (!cr_) return;
  const Time now = sim_->now();
  while (!cr_->inFlight.empty() && cr_->inFlight.front().arrival <= now) {
    const CreditReturn c = cr_->inFlight.pop();
    cr_->credits[c.vl] += c.bytes;
  }
}

void EgressPort::applyPause(uint8_t tc, int quanta) {
  const Time now = sim_->now();
  PauseState& f = pause();
  ++f.pausesReceived;
  if ((stormed_ >> tc) & 1) {  // the watchdog ignores PAUSE for this class; it only notes it
    storm_->lastPauseAt[tc] = now;
    return;
  }
  const bool startsPause = now >= f.pausedUntil[tc];
  if (startsPause) {
    f.pausedTotal += f.pausedUntil[tc] - f.pauseStart[tc];  // close the previous interval
    f.pauseStart[tc] = now;
  }
  f.pausedUntil[tc] = quanta > 0 ? now + pauseDuration(quanta) : now;
  if (f.pausedUntil[tc] > pauseEnd_) pauseEnd_ = f.pausedUntil[tc];
  if (storm_ && storm_->detection > Time::zero() && quanta > 0) {
    StormState& w = *storm_;
    w.lastPauseAt[tc] = now;
    if (startsPause) {
      if (w.timer[tc] == kNoTimer) w.timer[tc] = sim_->newTimer(this, kStormTimer + tc);
      sim_->arm(w.timer[tc], now + w.detection);
    }
  }
  if (quanta == 0) kick();
}

void EgressPort::enableStormWatchdog(Time detection, Time restoration) {
  if (!storm_) storm_ = std::make_unique<StormState>();
  storm_->detection = detection;
  storm_->restoration = restoration;
}

void EgressPort::onStormTimer(uint32_t tag) {
  PauseState& f = *fc_;  // a storm timer is armed only by a PAUSE
  StormState& w = *storm_;
  const Time now = sim_->now();
  const auto tc = static_cast<uint8_t>(tag - kStormTimer);
  const auto bit = static_cast<uint8_t>(1u << tc);
  if (stormed_ & bit) {
    // Restoration: honour PAUSE again once none has arrived for `restoration`.
    const Time quietUntil = w.lastPauseAt[tc] + w.restoration;
    if (now < quietUntil) {
      sim_->arm(w.timer[tc], quietUntil);
      return;
    }
    stormed_ &= static_cast<uint8_t>(~bit);
    kick();
    return;
  }
  // Detection: paused without a break for at least `detection`: a storm.
  if (now >= f.pausedUntil[tc] || now - f.pauseStart[tc] < w.detection) return;
  stormed_ |= bit;
  ++counters_->pfcStorms;
  f.pausedTotal += now - f.pauseStart[tc];
  f.pauseStart[tc] = now;
  f.pausedUntil[tc] = now;
  // Flush what waits in the class queue. Its buffer is released, which may end the XOFF this
  // switch holds upstream: the storm stops spreading.
  while (!queues_[tc].empty()) {
    const PacketQueue::Entry e = queues_[tc].pop();
    queuedBytes_ -= e.wireBytes;
    dropStormed(e.packet, e.inPort);
  }
  nonEmpty_ &= static_cast<uint16_t>(~(1u << tc));
  sim_->arm(w.timer[tc], std::max(now, w.lastPauseAt[tc]) + w.restoration);
}

void EgressPort::dropStormed(uint32_t pkt, uint32_t inPort) {
  const Packet& p = pool_->get(pkt);
  if (owner_.sw) owner_.sw->release(PacketQueue::Entry{pkt, p.wireBytes, inPort}, p.tc);
  ++counters_->packetsDropped;
  ++counters_->pfcStormDrops;
  if (p.type == PacketType::Data) counters_->dataBytesDropped += p.payload;
  ++drops_;
  pool_->release(pkt);
}

void EgressPort::releaseIdleMemory() {
  for (PacketQueue& q : queues_) q.releaseIfEmpty();
  wire_.releaseIfEmpty();
  control_.releaseIfEmpty();
  if (cr_) cr_->inFlight.releaseIfEmpty();
}

uint8_t EgressPort::pausedMask() const {
  const Time now = sim_->now();
  if (now >= pauseEnd_) return 0;
  uint8_t m = 0;
  for (int tc = 0; tc < kTrafficClasses; ++tc)
    if (now < fc_->pausedUntil[tc]) m |= static_cast<uint8_t>(1u << tc);
  return m;
}

Time EgressPort::pausedTime(Time end) const {
  if (!fc_) return Time::zero();
  Time t = fc_->pausedTotal;
  for (int tc = 0; tc < kTrafficClasses; ++tc) t += std::min(fc_->pausedUntil[tc], end) - fc_->pauseStart[tc];
  return t;
}

void EgressPort::onEvent(uint32_t tag) {
  if (tag == kArrival) {
    deliverHead();
    return;
  }
  if (tag == kControlArrival) {
    deliverControl();
    return;
  }
  if (tag >= kStormTimer && tag < kStormTimer + kTrafficClasses) {
    onStormTimer(tag);
    return;
  }
  if (tag == kWake) {
    wakeAt_ = Time::max();  // the timer has fired
  } else {
    if ((tag >> kKindBits) != (txGen_ & (0xFFFFFFFFu >> kKindBits))) return;  // superseded
    busyEventAt_ = Time::max();
  }
  if (sim_->now() >= busyUntil_)
    transmitNext();
  else
    scheduleBusy(busyUntil_);
}

void EgressPort::prefetchFor(uint32_t tag) const {
  if (tag == kArrival) {
    if (wire_.empty()) return;
    __builtin_prefetch(&pool_->get(wire_.front().packet));
    const char* peer =
        peer_.sw ? reinterpret_cast<const char*>(peer_.sw) : reinterpret_cast<const char*>(peer_.nic);
    __builtin_prefetch(peer);
    __builtin_prefetch(peer + 64);
    return;
  }
  const uint32_t kind = tag & ((1u << kKindBits) - 1);
  if ((kind == kTransmit || kind == kWake) && (nonEmpty_ & 0xFF)) {
    const int tc = 31 - __builtin_clz(static_cast<unsigned>(nonEmpty_ & 0xFF));
    __builtin_prefetch(&queues_[tc].front());
  }
}

void EgressPort::transmitNext() {
  const Time now = sim_->now();
  ++txGen_;  // a pending end-of-frame event is now stale
  busyEventAt_ = Time::max();
  uint32_t pkt = kNoPacket;
  uint32_t wire = 0;
  uint8_t vl = 0;
  bool control = false;
  if (nonEmpty_ & (1u << kMacControlQueue)) {
    control = true;
    const PacketQueue::Entry e = queues_[kMacControlQueue].pop();
    if (queues_[kMacControlQueue].empty()) nonEmpty_ &= static_cast<uint16_t>(~(1u << kMacControlQueue));
    pkt = e.packet;
    wire = e.wireBytes;
    queuedBytes_ -= wire;
  } else {
    // Classes that may send now: not paused, and (with credits) with room at the peer.
    uint8_t paused = 0;
    Time wake = Time::max();
    // Toward a dead link nothing waits for credits: what is sent there is lost (see setUp).
    const bool credits = credits_ && up_;
    if (now < pauseEnd_)
      for (int tc = 0; tc < kTrafficClasses; ++tc)
        if (now < fc_->pausedUntil[tc]) {
          paused |= static_cast<uint8_t>(1u << tc);
          wake = std::min(wake, fc_->pausedUntil[tc]);
        }
    if (credits) absorbCredits();
    uint16_t cand = static_cast<uint16_t>(nonEmpty_ & ~paused & 0xFF);
    bool creditBlocked = false;
    while (cand) {
      const int tc = 31 - __builtin_clz(static_cast<unsigned>(cand));
      const PacketQueue::Entry& head = queues_[tc].front();
      if (credits && cr_->credits[tc] < static_cast<int64_t>(head.wireBytes)) {
        cand &= static_cast<uint16_t>(~(1u << tc));
        creditBlocked = true;
        cr_->creditWait |= static_cast<uint8_t>(1u << tc);
        continue;
      }
      const PacketQueue::Entry e = queues_[tc].pop();
      if (queues_[tc].empty()) nonEmpty_ &= static_cast<uint16_t>(~(1u << tc));
      pkt = e.packet;
      wire = e.wireBytes;
      vl = static_cast<uint8_t>(tc);
      queuedBytes_ -= wire;
      // The departing frame's credits are spent before the switch sees the departure, so that
      // dequeue marking judges what is left behind it: the queue and the credits for the next frame.
      if (credits) spendCredits(vl, wire);
      if (owner_.sw) owner_.sw->onDequeue(*this, pkt, e, static_cast<uint8_t>(tc), queues_[tc].bytes());
      break;
    }
    if (pkt == kNoPacket && owner_.nic && !(nonEmpty_ & 0xFF & ~paused)) {
      uint8_t allowed = static_cast<uint8_t>(~paused);
      if (credits)
        for (int tc = 0; tc < kTrafficClasses; ++tc)
          if (cr_->credits[tc] < static_cast<int64_t>(cr_->maxPullWire)) {
            allowed &= static_cast<uint8_t>(~(1u << tc));
            creditBlocked = true;
          }
      pkt = owner_.nic->pullData(allowed);
      if (pkt != kNoPacket) {
        const Packet& p = pool_->get(pkt);
        wire = p.wireBytes;
        vl = p.tc;
        if (credits) spendCredits(vl, wire);
      }
    }
    if (pkt == kNoPacket) {
      // Nothing may go now: wake at the first pause expiry or credit arrival that could help
      // (returnCredits arms the timer for credits that are not yet on their way).
      const bool work = (nonEmpty_ & 0xFF) || (owner_.nic && owner_.nic->hasPendingData());
      if (work && creditBlocked && !cr_->inFlight.empty())
        wake = std::min(wake, cr_->inFlight.front().arrival);
      if (work && wake != Time::max())
        armWake(wake);
      else
        cancelWake();
      return;
    }
  }
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
  if (control) {
    const Time arrival = busyUntil_ + controlDelay_;
    const bool wasEmpty = control_.empty();
    control_.push(OnWire{arrival, pkt});
    if (wasEmpty) sim_->schedule(arrival, this, kControlArrival);
  } else {
    const Time arrival = busyUntil_ + delay_;
    const bool wasEmpty = wire_.empty();
    wire_.push(OnWire{arrival, pkt});
    if (wasEmpty) sim_->schedule(arrival, this, kArrival);
  }
  cancelWake();
  if (nonEmpty_ || (owner_.nic && owner_.nic->hasPendingData())) scheduleBusy(busyUntil_);
}

void EgressPort::deliverControl() {
  const OnWire w = control_.pop();
  if (!control_.empty()) sim_->schedule(control_.front().arrival, this, kControlArrival);
  const Time sent = w.arrival - controlDelay_ - serializationTime(pool_->get(w.packet).wireBytes, rate_);
  if (lastDownAt_ >= Time::zero() && !survived(sent)) {
    ++counters_->packetsDropped;
    ++counters_->deadLinkPackets;
    ++drops_;
    pool_->release(w.packet);
    return;
  }
  deliver(w.packet);
}

void EgressPort::deliverHead() {
  const OnWire w = wire_.pop();
  const uint32_t pkt = w.packet;
  if (!wire_.empty()) sim_->schedule(wire_.front().arrival, this, kArrival);
  // Lost unless the link stayed up from the start of its transmission until now.
  if (lastDownAt_ >= Time::zero() &&
      !survived(w.arrival - delay_ - serializationTime(pool_->get(pkt).wireBytes, rate_))) {
    Packet& p = pool_->get(pkt);
    ++counters_->packetsDropped;
    ++counters_->deadLinkPackets;
    counters_->lastRouteLoss = sim_->now();
    if (p.type == PacketType::Data) {
      counters_->dataBytesDropped += p.payload;
      counters_->deadLinkBytes += p.payload;
    }
    ++drops_;
    pool_->release(pkt);
    return;
  }
  deliver(pkt);
}

void EgressPort::deliver(uint32_t pkt) {
  if (peer_.sw) {
    peer_.sw->receive(pkt, peerLocalPort_);
  } else {
    counters_->lastDelivery = sim_->now();
    peer_.nic->receive(pkt);
  }
}

}  // namespace fabricsim
