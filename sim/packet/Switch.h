// Switch: an output-queued packet switch with a shared buffer, ECN marking, PFC, and
// InfiniBand credit return.
//
// Models: a packet arriving on any port is looked up in the ECMP forwarding table (O(1)).
// - Lossy classes: admitted if the shared buffer has room and the class queue is below the
//   dynamic threshold (Choudhury-Hahne): queue + packet <= alpha x (buffer - used); otherwise
//   tail-dropped and counted.
// - Lossless classes (PFC on): accounted per (ingress port, priority). Crossing XOFF (static,
//   or dynamicAlpha x free buffer) sends a PAUSE upstream, refreshed every half pause time
//   while above XON; falling to XON sends a resume (quanta 0). Packets that arrive after XOFF
//   land in the (port, priority)'s headroom (pfc.headroom, or sized from the link as below); a
//   lossless packet is dropped only when that headroom or the whole buffer is exhausted (counted
//   as a lossless violation, which correct thresholds prevent). A PAUSE sent while one of this
//   switch's own egress ports is paused for that priority counts as propagated.
// - InfiniBand: never drops; every packet forwarded returns its bytes as credits to the
//   upstream port after the link's delay.
// - ECN (RED): a data packet of a marking class is marked CE with probability 0 at or below
//   kmin, rising linearly to pmax at kmax, and 1 above kmax, judged on its class queue at
//   enqueue (before it joins) or at dequeue (what remains behind it). On InfiniBand the same
//   marking sets FECN.
// - Path selection among the ECMP group (routing.algorithm): ecmp hashes the five-tuple with
//   the switch's seed; flowlet keeps a flow on its port until it pauses longer than the flowlet
//   gap, then picks again (a 1,024-entry flowlet table indexed by the flow hash, as switch ASICs
//   keep, so colliding flows share an entry); adaptive sends each packet to the member with the
//   least queued in its class, graded in quanta (ties broken at random), keeping the hashed member
//   unless another is emptier by more than the bias (InfiniBand AR / Spectrum-X style); it sees
//   only its own queues, so downstream congestion reaches it through back-pressure alone; spray
//   picks a random member per packet, or round-robin.
// - A packet for which the switch has no route (an empty group, e.g. while BGP reconverges) is
//   black-holed and counted.
// Buffer is held from admission until the packet starts transmission. The forwarding latency
// is applied by the upstream link (see EgressPort).
// Leaves out: ingress queueing, cut-through, multicast, per-port buffer quotas.
// Units: bytes, Time (ps).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/Rng.h"
#include "sim/core/Simulator.h"
#include "sim/packet/EgressPort.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"
#include "sim/packet/SwitchParams.h"
#include "sim/routing/EcmpFib.h"

namespace fabricsim {

class Switch final : public EventHandler {
 public:
  void init(NodeId id, Simulator* sim, const EcmpFib* fib, PacketPool* pool, PacketCounters* counters,
            EgressPort* ports, PortId firstPort, uint32_t degree, const SwitchParams* params);

  /// A packet's last bit has arrived on local port `inPort`.
  void receive(uint32_t pkt, uint32_t inPort);
  /// Called by an egress port when a packet leaves its queue for the wire; `queueAfter` is
  /// what remains in that class queue.
  void onDequeue(uint32_t pkt, const PacketQueue::Entry& e, uint8_t tc, uint64_t queueAfter);
  /// PFC refresh timer of (ingress port, priority) = tag / 8, tag % 8.
  void onEvent(uint32_t tag) override;

  NodeId id() const { return id_; }
  uint64_t bufferUsed() const { return used_; }
  uint64_t maxBufferUsed() const { return maxUsed_; }
  uint64_t drops() const { return drops_; }
  /// Bytes held for lossless class `tc` that arrived on `inPort`.
  uint64_t ingressBytes(uint32_t inPort, uint8_t tc) const {
    return ingress_.empty() ? 0 : ingress_[inPort * kTrafficClasses + tc];
  }
  /// Headroom of `inPort` (pfc.headroom when set, else what keeps arriving while a PAUSE takes
  /// effect): the link's round trip (both directions' delays, forwarding latency included) at its
  /// rate, plus a maximum frame the upstream may have started, one this switch may be sending
  /// ahead of the PAUSE, and the PAUSE itself.
  uint64_t headroom(uint32_t inPort) const;

 private:
  bool lossless(uint8_t tc) const { return params_->pfc.enabled && (params_->pfc.classMask >> tc) & 1; }
  uint64_t xoff() const;
  uint64_t xon() const;
  bool redMark(uint64_t queueBytes);
  /// Egress port (global id) for a packet, or kInvalid when there is no route.
  PortId selectPort(const Packet& p);
  void sendPause(uint32_t inPort, uint8_t tc, int quanta);
  void scheduleRefresh(uint32_t inPort, uint8_t tc);

  NodeId id_ = kInvalid;
  Simulator* sim_ = nullptr;
  const EcmpFib* fib_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  EgressPort* ports_ = nullptr;  // this switch's ports, indexed by local port
  PortId firstPort_ = 0;
  uint32_t degree_ = 0;
  const SwitchParams* params_ = nullptr;
  uint64_t used_ = 0;
  uint64_t maxUsed_ = 0;
  uint64_t drops_ = 0;
  std::vector<uint64_t> ingress_;  // per (port, class): lossless or credit-accounted bytes
  std::vector<uint8_t> pauseSent_;  // per port: classes for which a PAUSE is in force upstream
  std::vector<Time> refreshAt_;     // per (port, class): the valid pending refresh
  Rng rng_;
  struct Flowlet {
    Time lastSeen;
    uint32_t member = 0;
  };
  static constexpr uint32_t kFlowletEntries = 1024;
  std::vector<Flowlet> flowlets_;  // allocated only for flowlet switching
  uint32_t sprayNext_ = 0;
};

}  // namespace fabricsim
