// EgressPort: the transmit side of one link direction: per-traffic-class queues, the
// serializer, link-level flow control (PFC pauses, InfiniBand credits), and the frames
// propagating on the wire toward the peer.
//
// Models: strict-priority scheduling over 8 traffic classes (7 = control, highest) plus a MAC
// control queue for PFC frames above all of them; exact serialization (wireBytes at the link
// rate, rounded up to the picosecond), then the link's propagation delay, plus the peer switch's
// forwarding latency for frames it forwards, before the peer processes the frame's last bit
// (store-and-forward).
// - Link-level control frames do not enter the peer's forwarding pipeline: a PAUSE is generated
//   at the ingress MAC, waits only for the frame being sent (it jumps every queue), and reaches
//   the peer's MAC after the wire's propagation delay alone; the peer acts on it after its PAUSE
//   response time (`pfc.response_time`). IB credit updates likewise take the wire's delay only.
// - PFC: a received PAUSE stops the class for quanta x 512 bit times (refreshed by later
//   PAUSEs, ended by quanta 0); a frame already being sent completes. Paused time is counted.
// - InfiniBand credits: with credits enabled, a class (= virtual lane) transmits only if the
//   peer has advertised buffer for the whole packet; credits come back when the peer forwards
//   the packet, after the link's propagation delay. Returned credits are absorbed lazily, so a
//   port with credits to spare costs no events. Credits survive failures: while the link is
//   down nothing waits for credits (what is sent is lost, as a port flushes toward a dead link),
//   credit updates on the dead link are lost, and when the link comes up both ends start again
//   from the peer's real free buffer (the IB link-layer flow-control re-initialisation).
// - Credit starvation (for the switch's IB CC victim rule): a class is starved while it has less
//   than a maximum frame of credit or its head frame waits for credits, and for one credit round
//   trip (a maximum frame's serialization, the wire and the peer's forwarding latency, and the
//   wire back) after a wait ends. A port held back by its downstream waits again and again, but
//   a credit that arrives while it serializes a frame shows as spare for the rest of that frame;
//   without the round trip those instants would make a victim look like a root of congestion.
//   A port that waited once and then kept up with its credits is a root again one round trip on.
// Frames on the wire are kept in order with one pending arrival event per link (and one for
// control frames); the transmitter keeps one re-armable timer, armed only when something is
// waiting, so an uncongested hop costs one event and a paused port no dead wake-ups. A NIC's
// port pulls data packets from its NIC when its queues are empty.
// Queue statistics: the class-queue length seen by each arriving data packet (control frames are
// not sampled), per class; the ECN/FECN marks its switch set on packets of its queues.
// Leaves out: link errors, FEC latency, cut-through switching, IB VL arbitration tables
// (strict priority is used), the wire time of credit updates (they ride between frames).
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

  /// `propagation`: the wire's delay; `forwarding`: the peer switch's forwarding latency (0 for a
  /// NIC peer); `peerResponse`: how long after a PAUSE arrives the peer acts on it.
  void init(Simulator* sim, PacketPool* pool, PacketCounters* counters, BitRate rate, Time propagation,
            Time forwarding, Time peerResponse, Endpoint owner, Endpoint peer, uint32_t peerLocalPort,
            EgressPort* reverse);

  /// Queues a packet for transmission (the caller has done admission control). `inPort` is
  /// the local ingress port it came from (switches), returned by Switch::onDequeue.
  void enqueue(uint32_t pkt, uint32_t inPort = 0) {
    const Packet& p = pool_->get(pkt);
    const int q = p.type == PacketType::Pause ? kMacControlQueue : p.tc;
    if (stormed_ && q < kTrafficClasses && ((stormed_ >> q) & 1)) {  // the PFC watchdog drops the class
      dropStormed(pkt, inPort);
      return;
    }
    if (statsEnabled_ && p.type == PacketType::Data) sample(q, p.wireBytes);
    queues_[q].push(pkt, p.wireBytes, inPort);
    nonEmpty_ |= static_cast<uint16_t>(1u << q);
    queuedBytes_ += p.wireBytes;
    if (queuedBytes_ > maxQueuedBytes_) maxQueuedBytes_ = queuedBytes_;
    kick();
  }
  /// Starts the transmitter if it is idle (used by NICs when new data becomes available).
  void kick() {
    if (sim_->now() >= busyUntil_)
      transmitNext();
    else
      scheduleBusy(busyUntil_);
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

  /// PFC storm watchdog (switch ports): a class paused without a break for `detection` stops
  /// honouring PAUSE and drops its queued and arriving packets, until no PAUSE has arrived for
  /// `restoration`.
  void enableStormWatchdog(Time detection, Time restoration);
  /// Classes the storm watchdog has taken out of PFC (bit per class).
  uint8_t stormedMask() const { return stormed_; }
  /// Since when class `tc` has been paused without a break (Time::max() if it is not paused now).
  Time pausedSince(uint8_t tc) const {
    if (!fc_ || sim_->now() >= fc_->pausedUntil[tc]) return Time::max();
    return fc_->pauseStart[tc];
  }

  // ---- InfiniBand credits ----
  /// Enables credit-based flow control with `perClass` bytes of credit per virtual lane;
  /// `maxFrame` is the largest frame a NIC may build, which a NIC-owned port needs credit for
  /// before it pulls a packet of that class.
  void enableCredits(uint64_t perClass, uint32_t maxFrame);
  /// The peer freed `bytes` of class `vl`; the update reaches this port at `arrival`.
  void returnCredits(uint8_t vl, uint32_t bytes, Time arrival);
  bool creditsEnabled() const { return credits_; }
  /// Credits currently available for class `vl` (after absorbing updates that have arrived).
  int64_t credits(uint8_t vl) {
    absorbCredits();
    return cr_ ? cr_->credits[vl] : 0;
  }
  int64_t minCreditsSeen() const { return cr_ ? cr_->minCredits : 0; }
  /// Credits of `vl` including updates that have arrived by now (const: for diagnostics).
  int64_t creditsNow(uint8_t vl) const {
    if (!cr_) return 0;
    int64_t c = cr_->credits[vl];
    const Time now = sim_->now();
    cr_->inFlight.forEach([&](const CreditReturn& r) {
      if (r.vl == vl && r.arrival <= now) c += r.bytes;
    });
    return c;
  }
  /// Wire bytes of the packet at the head of class `tc` (0 if empty).
  uint32_t queueFront(uint8_t tc) const { return queues_[tc].empty() ? 0 : queues_[tc].front().wireBytes; }
  /// Whether class `vl` is held back by credits (the IBTA A10 victim state): it has less than
  /// `frame` bytes of credit, or its head frame is waiting for credits, or it last waited less
  /// than one credit round trip ago (see the header). Always false without credits.
  bool creditStarved(uint8_t vl, uint32_t frame) {
    if (!creditsEnabled()) return false;
    absorbCredits();
    return cr_->credits[vl] < static_cast<int64_t>(frame) || ((cr_->creditWait >> vl) & 1) ||
           sim_->now() < cr_->starvedUntil[vl];
  }
  /// Credit bytes neither available nor on their way back: what the peer holds (or what was lost
  /// and not yet re-initialised). 0 once the fabric has drained, if no credit leaked.
  int64_t creditsOutstanding() const {
    if (!creditsEnabled()) return 0;
    int64_t out = 0;
    for (int64_t c : cr_->credits) out += static_cast<int64_t>(cr_->perClass) - c;
    cr_->inFlight.forEach([&](const CreditReturn& r) { out -= r.bytes; });
    return out;
  }

  void onEvent(uint32_t tag) override;
  /// An arrival: the arriving packet and the receiving switch's first lines (its routing and
  /// buffer state); a transmission: the head entry of the highest class with packets.
  void prefetchFor(uint32_t tag) const override;
  /// Gives back the buffers of empty queues and of an empty wire (after a run).
  void releaseIdleMemory();

  // ---- failures ----
  /// Takes the link direction down or up. While down (and for packets already on the wire when it
  /// goes down) packets are lost at the far end and counted; the transmitter keeps draining its
  /// queue into the dead link, as a port does until routing moves traffic away.
  void setUp(bool up);
  bool up() const { return up_; }

  uint64_t queueBytes(uint8_t tc) const { return queues_[tc].bytes(); }
  uint64_t queuedBytes() const { return queuedBytes_; }
  uint64_t maxQueuedBytes() const { return maxQueuedBytes_; }
  uint64_t wireBytesSent() const { return wireBytes_; }
  uint64_t packetsSent() const { return packets_; }
  Time busyTime() const { return busyTime_; }
  /// When the last packet put on the link finishes serialising (zero before the first).
  Time busyUntil() const { return busyUntil_; }
  uint64_t drops() const { return drops_; }
  void countDrop() { ++drops_; }
  /// Data packets this port's switch marked CE (RoCEv2) or FECN (InfiniBand) for this port's queues.
  uint64_t ecnMarks() const { return marks_; }
  void countMark() { ++marks_; }
  BitRate rate() const { return rate_; }
  /// Delay from the end of a frame's serialization until the peer processes it (data frames).
  Time delay() const { return delay_; }
  /// The wire's propagation delay alone (link-level control frames).
  Time propagation() const { return propagation_; }
  EgressPort* reverse() const { return reverse_; }
  Endpoint owner() const { return owner_; }
  /// Records the class-queue length every arriving data packet sees (switch ports).
  void enableHistogram() { statsEnabled_ = true; }
  /// The occupancy histogram of class `tc` including empty-queue arrivals (nullptr when no data
  /// packet of that class arrived, or statistics are off).
  std::unique_ptr<QueueHistogram> histogram(uint8_t tc) const {
    const uint64_t empty = emptyArrivals_[tc] + (stats_[tc] ? stats_[tc]->empty : 0);
    if (!stats_[tc] && empty == 0) return nullptr;
    auto h =
        stats_[tc] ? std::make_unique<QueueHistogram>(stats_[tc]->hist) : std::make_unique<QueueHistogram>();
    h->addZeros(empty);
    return h;
  }
  /// Largest length class `tc` reached as seen by its arriving data packets that found it
  /// non-empty (their own bytes included); 0 if every one found it empty.
  uint64_t maxClassBytes(uint8_t tc) const { return stats_[tc] ? stats_[tc]->max : 0; }
  uint64_t pauseFramesReceived() const { return fc_ ? fc_->pausesReceived : 0; }

 private:
  static constexpr uint32_t kArrival = 1;
  static constexpr uint32_t kControlArrival = 2;
  static constexpr uint32_t kTransmit = 3;  // + generation << kKindBits: the transmitter is free
  static constexpr uint32_t kWake = 4;      // the blocked transmitter's timer (pause expiry, credits)
  static constexpr uint32_t kKindBits = 6;
  static constexpr uint32_t kStormTimer = 16;  // + class: storm detection, then restoration

  struct OnWire {
    Time arrival;  // when the last bit reaches the peer
    uint32_t packet;
  };
  struct CreditReturn {
    Time arrival;
    uint32_t bytes;
    uint8_t vl;
  };

  // The transmitter wakes up in two ways. When it is busy sending, a one-shot event at the end
  // of the frame (busyEventAt_), superseded by a generation number: it can only go stale when
  // the transmitter is started directly at that same instant, so a dead entry never outlives a
  // frame time. When it is blocked (a paused class, credits on their way), a re-armable timer
  // (wakeAt_), moved or cancelled in place: a port paused for 335 us leaves no dead wake-up.
  void scheduleBusy(Time at) {
    if (busyEventAt_ == at) return;
    busyEventAt_ = at;
    ++txGen_;
    sim_->schedule(at, this, kTransmit | (txGen_ << kKindBits));
  }
  void armWake(Time at) {
    if (wakeAt_ == at) return;
    wakeAt_ = at;
    sim_->arm(wakeTimer_, at);
  }
  void cancelWake() {
    if (wakeAt_ == Time::max()) return;
    wakeAt_ = Time::max();
    sim_->cancel(wakeTimer_);
  }
  void transmitNext();
  void deliverHead();
  void deliverControl();
  /// Whether a frame that started serialization at `sent` reaches the peer (the link stayed up).
  bool survived(Time sent) const { return up_ && sent > lastDownAt_ && sent >= lastUpAt_; }
  void deliver(uint32_t pkt);
  void dropStormed(uint32_t pkt, uint32_t inPort);
  void onStormTimer(uint32_t tag);
  void sample(int q, uint32_t wire) {
    const uint64_t seen = queues_[q].bytes();
    if (seen == 0) {
      if (++emptyArrivals_[q] == 0x80000000u) flushEmpty(q);
      return;
    }
    auto& st = stats_[q];
    if (!st) st = std::make_unique<ClassStats>();
    st->hist.add(seen);
    if (seen + wire > st->max) st->max = seen + wire;
  }
  void flushEmpty(int q) {
    auto& st = stats_[q];
    if (!st) st = std::make_unique<ClassStats>();
    st->empty += emptyArrivals_[q];
    emptyArrivals_[q] = 0;
  }
  void absorbCredits();
  void spendCredits(uint8_t vl, uint32_t wire) {
    cr_->credits[vl] -= wire;
    if (cr_->credits[vl] < cr_->minCredits) cr_->minCredits = cr_->credits[vl];
    if ((cr_->creditWait >> vl) & 1) {  // the end of a wait for credits
      cr_->creditWait &= static_cast<uint8_t>(~(1u << vl));
      cr_->starvedUntil[vl] = sim_->now() + cr_->creditLoop;
    }
  }

  // Field order follows what one hop touches, in 64-byte groups from the object's start (the
  // vtable pointer first): "line" 0 the identity and flags, 1 the transmitter's clock, 2 the
  // counters and the peer (delivery), 3 the wire; then the class queues, then the rest. The event
  // queue prefetches the first groups (prefetchHandler). At k=32 (8,192 hosts, ~49 K ports) the
  // ports do not fit in cache and every line a hop reads is a likely miss. The object is not
  // aligned to a cache line: aligning it (and keeping the first wire entries inline) measured no
  // faster and cost 2 MiB at k=32.
  struct PauseState;
  struct CreditState;
  struct StormState;
  Simulator* sim_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  Endpoint owner_;
  uint16_t nonEmpty_ = 0;  // bit per queue with packets (bit 8: MAC control)
  uint8_t stormed_ = 0;    // classes the PFC storm watchdog drops
  bool statsEnabled_ = false;
  bool credits_ = false;  // InfiniBand credit flow control (its state is in cr_)
  bool up_ = true;
  uint32_t txGen_ = 0;
  uint32_t lastWire_ = 0;  // serialization time of the last frame size, to skip the division
  // line 1
  Time busyUntil_;
  Time busyEventAt_ = Time::max();  // the valid pending end-of-frame event (max: none)
  Time wakeAt_ = Time::max();       // expiry of the armed wake timer (max: not armed)
  // No class is paused from this time on (the latest pause expiry ever set; a resume does not
  // lower it): at or after it the transmitter need not look at fc_'s per-class pauses.
  Time pauseEnd_;
  Time delay_;  // propagation + peer forwarding latency (data)
  BitRate rate_;
  Time lastSer_;
  Time busyTime_;
  // line 2
  uint64_t queuedBytes_ = 0;
  uint64_t maxQueuedBytes_ = 0;
  uint64_t wireBytes_ = 0;
  uint64_t packets_ = 0;
  Endpoint peer_;
  uint32_t peerLocalPort_ = 0;
  TimerId wakeTimer_ = kNoTimer;
  Time lastDownAt_ = Time::ps(-1);
  // line 3
  PacketRing<OnWire> wire_;  // transmitted data packets, not yet arrived, in order
  Time lastUpAt_ = Time::ps(-1);
  std::unique_ptr<PauseState> fc_;     // PFC pauses received (see below)
  std::unique_ptr<CreditState> cr_;    // InfiniBand credits
  std::unique_ptr<StormState> storm_;  // the PFC storm watchdog
  // Data arrivals that found their class queue empty (most arrivals), counted here; the others
  // go to the class's histogram.
  uint32_t emptyArrivals_[kTrafficClasses]{};
  PacketQueue queues_[kTrafficClasses + 1];
  PacketRing<OnWire> control_;  // link-level control frames (PAUSE) on the wire, in order
  EgressPort* reverse_ = nullptr;
  Time propagation_;   // the wire alone
  Time controlDelay_;  // propagation + the peer's PAUSE response time
  uint64_t drops_ = 0;
  uint64_t marks_ = 0;
  // Link-level flow control state, each part allocated when first needed, so the common port
  // stays small and its hot fields share few cache lines.
  struct PauseState {  // PFC: on the first PAUSE received
    Time pausedUntil[kTrafficClasses]{};
    Time pauseStart[kTrafficClasses]{};
    Time pausedTotal;
    uint64_t pausesReceived = 0;
  };
  struct StormState {  // the PFC storm watchdog: when enabled
    Time detection;
    Time restoration;
    Time lastPauseAt[kTrafficClasses]{};
    TimerId timer[kTrafficClasses] = {kNoTimer, kNoTimer, kNoTimer, kNoTimer,
                                      kNoTimer, kNoTimer, kNoTimer, kNoTimer};
  };
  struct CreditState {  // InfiniBand credits: when enabled
    int64_t credits[kTrafficClasses]{};
    int64_t minCredits = 0;
    uint64_t maxPullWire = 0;  // NIC: credit a class needs before the NIC may pull a packet of it
    uint64_t perClass = 0;     // advertised buffer per virtual lane
    PacketRing<CreditReturn> inFlight;
    uint8_t creditWait = 0;                // bit per VL whose head frame is waiting for credits
    Time starvedUntil[kTrafficClasses]{};  // a VL counts as credit-starved until then
    Time creditLoop;                       // a maximum frame's serialization + the credit round trip
  };
  PauseState& pause() {
    if (!fc_) fc_ = std::make_unique<PauseState>();
    return *fc_;
  }
  struct ClassStats {
    QueueHistogram hist;
    uint64_t empty = 0;  // arrivals that found the class queue empty, beyond emptyArrivals_
    uint64_t max = 0;
  };
  std::unique_ptr<ClassStats> stats_[kTrafficClasses];
};

}  // namespace fabricsim
