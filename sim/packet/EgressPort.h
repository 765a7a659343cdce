// EgressPort: the transmit side of one link direction: per-traffic-class queues, the
// serializer, and the packets propagating on the wire toward the peer.
//
// Models: strict-priority scheduling over 8 traffic classes (7 = control, highest), exact
// serialization (wireBytes at the link rate, rounded up to the picosecond), then a fixed
// delay (propagation, plus the peer switch's forwarding latency) before the peer receives the
// packet's last bit (store-and-forward). Packets on the wire are kept in order with one pending
// arrival event per link; the transmitter schedules an event only when something is waiting,
// so an uncongested hop costs one event. A NIC's port pulls data packets from its NIC when
// its queues are empty, so NICs never materialise whole messages.
// Leaves out: link errors, FEC latency, cut-through switching, PFC pauses (a later issue).
// Units: Time (ps), bytes, BitRate (bit/s).
#pragma once

#include <cstdint>

#include "sim/core/Simulator.h"
#include "sim/core/Units.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"
#include "sim/packet/PacketQueue.h"
#include "sim/packet/PacketRing.h"

namespace fabricsim {

class Switch;
class Nic;

class EgressPort final : public EventHandler {
 public:
  struct Endpoint {
    Switch* sw = nullptr;  ///< exactly one of sw / nic is set
    Nic* nic = nullptr;
  };

  void init(Simulator* sim, PacketPool* pool, PacketCounters* counters, BitRate rate, Time delay,
            Endpoint owner, Endpoint peer, uint32_t peerLocalPort);

  /// Queues a packet for transmission (the caller has done admission control).
  void enqueue(uint32_t pkt) {
    const Packet& p = pool_->get(pkt);
    queues_[p.tc].push(pkt, p.wireBytes);
    nonEmpty_ |= static_cast<uint8_t>(1u << p.tc);
    queuedBytes_ += p.wireBytes;
    if (queuedBytes_ > maxQueuedBytes_) maxQueuedBytes_ = queuedBytes_;
    kick();
  }
  /// Starts the transmitter if it is idle (used by NICs when new data becomes available).
  void kick() {
    if (txPending_) return;
    if (sim_->now() >= busyUntil_) {
      transmitNext();
    } else {
      txPending_ = true;
      sim_->schedule(busyUntil_, this, kTxDone);
    }
  }

  void onEvent(uint32_t tag) override;

  uint64_t queueBytes(uint8_t tc) const { return queues_[tc].bytes(); }
  uint64_t queuedBytes() const { return queuedBytes_; }
  uint64_t maxQueuedBytes() const { return maxQueuedBytes_; }
  uint64_t wireBytesSent() const { return wireBytes_; }
  uint64_t packetsSent() const { return packets_; }
  Time busyTime() const { return busyTime_; }
  uint64_t drops() const { return drops_; }
  void countDrop() { ++drops_; }
  BitRate rate() const { return rate_; }

 private:
  static constexpr uint32_t kTxDone = 0;
  static constexpr uint32_t kArrival = 1;

  void transmitNext();
  void deliverHead();

  Simulator* sim_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  Endpoint owner_;
  Endpoint peer_;
  uint32_t peerLocalPort_ = 0;
  BitRate rate_;
  Time delay_;
  Time busyUntil_;
  bool txPending_ = false;
  uint8_t nonEmpty_ = 0;  // bit per traffic class with queued packets
  PacketQueue queues_[kTrafficClasses];
  struct OnWire {
    Time arrival;  // when the last bit reaches the peer
    uint32_t packet;
  };
  PacketRing<OnWire> wire_;  // transmitted, not yet arrived, in order
  uint64_t queuedBytes_ = 0;
  uint64_t maxQueuedBytes_ = 0;
  uint64_t wireBytes_ = 0;
  uint64_t packets_ = 0;
  uint64_t drops_ = 0;
  Time busyTime_;
  uint32_t lastWire_ = 0;  // serialization time of the last frame size, to skip the division
  Time lastSer_;
};

}  // namespace fabricsim
