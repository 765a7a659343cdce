// EgressPort: the transmit side of one link direction: per-traffic-class queues, the
// serializer, link-level flow control (PFC pauses, InfiniBand credits), and the packets
// propagating on the wire toward the peer.
//
// Models: strict-priority scheduling over 8 traffic classes (7 = control, highest) plus a MAC
// control queue for PFC frames above all of them; exact serialization (wireBytes at the link
// rate, rounded up to the picosecond), then a fixed delay (propagation, plus the peer switch's
// forwarding latency) before the peer receives the packet's last bit (store-and-forward).
// - PFC: a received PAUSE stops the class for quanta x 512 bit times (refreshed by later
//   PAUSEs, ended by quanta 0); a frame already being sent completes. Paused time is counted.
// - InfiniBand credits: with credits enabled, a class (= virtual lane) transmits only if the
//   peer has advertised buffer for the whole packet; credits come back when the peer forwards
//   the packet, after the link's delay. Returned credits are absorbed lazily, so a port with
//   credits to spare costs no events.
// Packets on the wire are kept in order with one pending arrival event per link; the
// transmitter schedules an event only when something is waiting, so an uncongested hop costs
// one event. A NIC's port pulls data packets from its NIC when its queues are empty.
// Leaves out: link errors, FEC latency, cut-through switching, IB VL arbitration tables
// (strict priority is used), credit-update packet sizes.
// Units: Time (ps), bytes, BitRate (bit/s).
#pragma once

#include <cstdint>

#include "sim/core/Simulator.h"
#include "sim/core/Units.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"
#include "sim/packet/PacketQueue.h"
#include "sim/packet/PacketRing.h"
#include "sim/packet/QueueHistogram.h"

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
            Endpoint owner, Endpoint peer, uint32_t peerLocalPort, EgressPort* reverse);

  /// Queues a packet for transmission (the caller has done admission control). `inPort` is
  /// the local ingress port it came from (switches), returned by Switch::onDequeue.
  void enqueue(uint32_t pkt, uint32_t inPort = 0) {
    const Packet& p = pool_->get(pkt);
    const int q = p.type == PacketType::Pause ? kMacControlQueue : p.tc;
    if (histogram_) {
      const uint64_t seen = queues_[q].bytes();
      if (seen == 0) ++emptyArrivals_;  // most arrivals: counted here, on the port's hot line
      else histogram_->add(seen);
    }
    queues_[q].push(pkt, p.wireBytes, inPort);
    nonEmpty_ |= static_cast<uint16_t>(1u << q);
    queuedBytes_ += p.wireBytes;
    if (queuedBytes_ > maxQueuedBytes_) maxQueuedBytes_ = queuedBytes_;
    kick();
  }
  /// Starts the transmitter if it is idle (used by NICs when new data becomes available).
  void kick() {
    if (sim_->now() >= busyUntil_) transmitNext();
    else if (txEventAt_ != busyUntil_) scheduleTx(busyUntil_);
  }

  // ---- PFC ----
  /// A PAUSE for class `tc` arrived: quanta > 0 pauses (or extends), 0 resumes.
  void applyPause(uint8_t tc, int quanta);
  /// Classes paused at this instant (bit per class).
  uint8_t pausedMask() const;
  /// Total time any class of this port spent paused, up to `end`.
  Time pausedTime(Time end) const;
  /// Time one PAUSE of `quanta` lasts on this link.
  Time pauseDuration(int quanta) const {
    return serializationTime(static_cast<Bytes>(quanta) * 64, rate_);  // quanta x 512 bits
  }

  // ---- InfiniBand credits ----
  /// Enables credit-based flow control with `perClass` bytes of credit per virtual lane;
  /// `maxFrame` is the largest frame a NIC may build, which a NIC-owned port needs credit for
  /// before it pulls a packet of that class.
  void enableCredits(uint64_t perClass, uint32_t maxFrame);
  /// The peer freed `bytes` of class `vl`; the update reaches this port at `arrival`.
  void returnCredits(uint8_t vl, uint32_t bytes, Time arrival);
  bool creditsEnabled() const { return fc_ && fc_->creditsEnabled; }
  /// Credits currently available for class `vl` (after absorbing updates that have arrived).
  int64_t credits(uint8_t vl) {
    absorbCredits();
    return fc_ ? fc_->credits[vl] : 0;
  }
  int64_t minCreditsSeen() const { return fc_ ? fc_->minCredits : 0; }

  void onEvent(uint32_t tag) override;

  // ---- failures ----
  /// Takes the link direction down or up. While down (and for packets already on the wire when it
  /// goes down) packets are lost at the far end and counted; the transmitter keeps draining its
  /// queue into the dead link, as a port does until routing moves traffic away.
  void setUp(bool up) {
    if (!up && up_) lastDownAt_ = sim_->now();
    up_ = up;
  }
  bool up() const { return up_; }

  uint64_t queueBytes(uint8_t tc) const { return queues_[tc].bytes(); }
  uint64_t queuedBytes() const { return queuedBytes_; }
  uint64_t maxQueuedBytes() const { return maxQueuedBytes_; }
  uint64_t wireBytesSent() const { return wireBytes_; }
  uint64_t packetsSent() const { return packets_; }
  Time busyTime() const { return busyTime_; }
  uint64_t drops() const { return drops_; }
  void countDrop() { ++drops_; }
  BitRate rate() const { return rate_; }
  Time delay() const { return delay_; }
  EgressPort* reverse() const { return reverse_; }
  Endpoint owner() const { return owner_; }
  /// Records the queue length every arriving packet sees (switch ports).
  void enableHistogram() { histogram_ = std::make_unique<QueueHistogram>(); }
  /// The occupancy histogram including empty-queue arrivals (nullptr when not enabled).
  std::unique_ptr<QueueHistogram> histogram() const {
    if (!histogram_) return nullptr;
    auto h = std::make_unique<QueueHistogram>(*histogram_);
    h->addZeros(emptyArrivals_);
    return h;
  }
  uint64_t pauseFramesReceived() const { return fc_ ? fc_->pausesReceived : 0; }

 private:
  static constexpr uint32_t kArrival = 1;  // odd tags; transmitter events carry (generation << 1)

  struct OnWire {
    Time arrival;  // when the last bit reaches the peer
    uint32_t packet;
  };
  struct CreditReturn {
    Time arrival;
    uint32_t bytes;
    uint8_t vl;
  };

  void scheduleTx(Time at) {
    ++txGen_;
    txEventAt_ = at;
    sim_->schedule(at, this, txGen_ << 1);
  }
  void transmitNext();
  void deliverHead();
  void absorbCredits();

  Simulator* sim_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  Endpoint owner_;
  Endpoint peer_;
  uint32_t peerLocalPort_ = 0;
  EgressPort* reverse_ = nullptr;
  BitRate rate_;
  Time delay_;
  Time busyUntil_;
  Time txEventAt_ = Time::max();  // time of the valid pending transmitter event
  uint32_t txGen_ = 0;
  uint16_t nonEmpty_ = 0;  // bit per queue with packets (bit 8: MAC control)
  PacketQueue queues_[kTrafficClasses + 1];
  PacketRing<OnWire> wire_;  // transmitted, not yet arrived, in order
  uint64_t queuedBytes_ = 0;
  uint64_t maxQueuedBytes_ = 0;
  uint64_t wireBytes_ = 0;
  uint64_t packets_ = 0;
  uint64_t drops_ = 0;
  Time busyTime_;
  uint32_t lastWire_ = 0;  // serialization time of the last frame size, to skip the division
  Time lastSer_;
  // Link-level flow control state, allocated on the first PAUSE or when credits are enabled, so
  // the common port stays small and its hot fields share few cache lines.
  struct FlowControlState {
    Time pausedUntil[kTrafficClasses]{};
    Time pauseStart[kTrafficClasses]{};
    Time pausedTotal;
    uint64_t pausesReceived = 0;
    bool creditsEnabled = false;
    int64_t credits[kTrafficClasses]{};
    int64_t minCredits = 0;
    uint64_t maxPullWire = 0;  // NIC: credit a class needs before the NIC may pull a packet of it
    PacketRing<CreditReturn> inFlight;
  };
  FlowControlState& fc() {
    if (!fc_) fc_ = std::make_unique<FlowControlState>();
    return *fc_;
  }
  std::unique_ptr<FlowControlState> fc_;
  std::unique_ptr<QueueHistogram> histogram_;
  uint64_t emptyArrivals_ = 0;
  bool up_ = true;
  Time lastDownAt_ = Time::ps(-1);
};

}  // namespace fabricsim
