// Switch: an output-queued packet switch with a shared-buffer MMU, ECN marking, PFC, and
// InfiniBand credit return.
//
// Models: a packet arriving on any port is looked up in the ECMP forwarding table (O(1)).
// - Buffer admission, PFC XOFF/XON and headroom are the MMU's (Mmu.h): reserves, headroom and a
//   shared pool with static or dynamic thresholds; the headroom per (ingress port, lossless
//   class) is pfc.headroom when set, else PfcHeadroom's IEEE 802.1Qbb budget for that port's link.
// - PFC: when the MMU calls for XOFF, a PAUSE goes upstream from the ingress MAC (EgressPort's
//   control path: the wire's delay, never the forwarding pipeline), refreshed by a re-armable
//   timer every half pause time while XOFF holds, so the upstream never sees a gap; XON sends
//   quanta 0 and cancels the timer. A PAUSE sent while one of this switch's own egress ports is
//   paused for that class counts as propagated.
// - A lossless packet the MMU cannot admit (a user's headroom too small for the link) is
//   dropped, counted as a lossless violation per (port, class) and reported with the port:
//   with the default headroom this does not happen.
// - InfiniBand: never drops; every packet forwarded returns its bytes as credits to the
//   upstream port after the link's propagation delay.
// - ECN (RED): a data packet of a marking class is marked CE with probability 0 at or below
//   kmin, rising linearly to pmax at kmax, and 1 above kmax, judged on its class queue at
//   enqueue (before it joins) or at dequeue (what remains behind it). Marks are counted per
//   egress port. On InfiniBand the same marking sets FECN, but only at a port that is a root of
//   congestion: a port starved of credits for the class (held back by the downstream switch:
//   EgressPort::creditStarved) is a victim and does not mark (the IBTA annex A10 victim rule),
//   so only flows that cause the congestion are slowed. Credits are judged at the same moment as
//   the queue: at enqueue, what the port has now; at dequeue, what is left once the departing
//   frame's credits are spent (the port spends them before calling onDequeue), i.e. whether the
//   frame behind it could follow. Judged before spending, a departing full frame would always
//   find a frame of credit and only the port's recent waits would keep a victim from marking on
//   dequeue. Ports toward NICs have no credits and are never victims.
// - Path selection among the ECMP group (routing.algorithm; the one definition of each mode is
//   the README's "Routing" section, which the flow backend follows in fluid form):
//   ecmp hashes the five-tuple with the switch's seed (per flow).
//   flowlet is flowlet switching with load-aware re-selection (LetFlow / CONGA style): a
//   flowlet starts at a flow's first packet (an entry never seen) or after the flow has been
//   idle longer than routing.flowlet_gap; its member is then re-selected as the least loaded by
//   the egress queue of the packet's class, graded as adaptive grades it, ties going to the
//   member least recently given a new flowlet (so flowlets starting in one burst, which all see
//   the same empty queues, spread over the members as the flow backend's loads updated flow by
//   flow spread them), then at random. Within a flowlet the flow stays on its member, so a flow
//   is never reordered when the gap exceeds the spread of path delays. The flowlet table has
//   1,024 entries indexed by the flow hash without a tag, as switch ASICs keep it: flows that
//   collide share an entry, hence a member and a flowlet, and a newcomer joins an active
//   entry's flowlet. (A tagged table that evicts on a mismatch would move the evicted flow in
//   mid-flowlet and reorder it; a tagged table that does not evict behaves as this one does.)
//   adaptive is per packet (InfiniBand AR / Spectrum-X): each packet goes to the member with the
//   least queued in its class, graded in quanta; among equal grades, to the first after the
//   member the flow's previous packet took (a per-flow pointer in an 8,192-entry table indexed
//   by the flow hash), so a flow's packets cycle over the equally loaded members and every flow
//   splits evenly over them. Random ties would make each flow's split a random walk whose
//   excursions overload downlinks that no upstream switch sees (last FCT 1.10-1.14x ideal on a
//   k=8 permutation, against 1.04-1.07x). With a bias, the hashed member is kept unless another
//   is emptier by more than the bias. It sees only its own queues, so downstream congestion
//   reaches it through back-pressure alone.
//   spray picks a random member per packet, or round-robin.
//   adaptive and spray reorder flows: the loader refuses them with nic.reorder: strict.
// - InfiniBand with subnet-manager routing (SwitchParams::ibLft): the egress is the LFT entry of
//   the packet's DLID; with adaptive routing, the least-queued live member of the SM's group for
//   the destination (graded as above, ties at random), which holds the LFT's port and every other
//   port on a legal path of fewest hops.
// - A packet for which the switch has no route (an empty group, e.g. while BGP reconverges) is
//   black-holed and counted.
// Buffer is held from admission until the packet starts transmission. The forwarding latency
// is applied by the upstream link (see EgressPort).
// Leaves out: ingress queueing, cut-through, multicast.
// Units: bytes, Time (ps).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/Rng.h"
#include "sim/core/Simulator.h"
#include "sim/packet/EgressPort.h"
#include "sim/packet/Mmu.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"
#include "sim/packet/SwitchParams.h"
#include "sim/routing/EcmpFib.h"

namespace fabricsim {

class Switch final : public EventHandler {
 public:
  /// `headroom[p]`: the headroom of each lossless class of local port p. Returns false when the
  /// reserves and headroom do not fit in the buffer (see mmu().carved()).
  bool init(NodeId id, Simulator* sim, const EcmpFib* fib, PacketPool* pool, PacketCounters* counters,
            EgressPort* ports, PortId firstPort, uint32_t degree, const SwitchParams* params,
            const std::vector<uint64_t>& headroom);

  /// A packet's last bit has arrived on local port `inPort`.
  void receive(uint32_t pkt, uint32_t inPort);
  /// Called by egress port `out` when a packet leaves its queue for the wire (its credits, on
  /// InfiniBand, already spent); `queueAfter` is what remains in that class queue.
  void onDequeue(EgressPort& out, uint32_t pkt, const PacketQueue::Entry& e, uint8_t tc, uint64_t queueAfter);
  /// A packet leaves the buffer without being sent (the PFC storm watchdog dropped it): its
  /// bytes are released as on a dequeue, and nothing is marked.
  void release(const PacketQueue::Entry& e, uint8_t tc);
  /// PFC refresh timer of (ingress port, priority) = tag / 8, tag % 8.
  void onEvent(uint32_t tag) override;

  NodeId id() const { return id_; }
  uint64_t bufferUsed() const { return mmu_.used(); }
  uint64_t maxBufferUsed() const { return maxUsed_; }
  uint64_t drops() const { return drops_; }
  const Mmu& mmu() const { return mmu_; }
  /// Bytes held for class `tc` that arrived on `inPort` (reserve, shared and headroom).
  uint64_t ingressBytes(uint32_t inPort, uint8_t tc) const { return mmu_.held(inPort, tc); }
  /// InfiniBand: bytes of virtual lane `vl` held from `inPort` (what its credits cover).
  uint64_t creditedBytes(uint32_t inPort, uint8_t vl) const { return mmu_.credited(inPort, vl); }
  /// Headroom of each lossless class of `inPort`.
  uint64_t headroom(uint32_t inPort) const { return mmu_.headroomOf(inPort); }
  /// A lossless drop: where and how many.
  struct Violation {
    uint32_t port = 0;
    uint8_t tc = 0;
    uint64_t drops = 0;
    Time first;
  };
  const std::vector<Violation>& violations() const { return violations_; }
  /// The link of `port` (one of this switch's) came back up: its peer's MAC starts with no PAUSE
  /// in force, so every class still above XOFF is paused again at once.
  void onLinkUp(const EgressPort* port);

 private:
  /// Set in a queue entry's ingress port when a lossy packet was charged to its port's reserve.
  static constexpr uint32_t kReserveCharge = 0x80000000u;
  bool lossless(uint8_t tc) const { return params_->pfc.enabled && (params_->pfc.classMask >> tc) & 1; }
  bool redMark(uint64_t queueBytes);
  /// Whether a data packet of class `tc` leaving through (or joining) `out` with `queueBytes`
  /// in its class queue is marked: ECN on for the class, not an InfiniBand victim, RED says so.
  bool shouldMark(EgressPort& out, uint8_t tc, uint64_t queueBytes) {
    return ((params_->ecn.classMask >> tc) & 1) && !(params_->infiniband && creditVictim(out, tc)) &&
           redMark(queueBytes);
  }
  /// InfiniBand: whether egress port `out` is a victim for `vl` (credit-starved, see EgressPort).
  bool creditVictim(EgressPort& out, uint8_t vl) { return out.creditStarved(vl, params_->maxFrame); }
  void countLosslessDrop(uint32_t inPort, uint8_t tc);
  /// Egress port (global id) for a packet, or kInvalid when there is no route.
  PortId selectPort(const Packet& p);
  /// selectPort on InfiniBand subnet-manager routing.
  PortId selectLid(const Packet& p);
  void sendPause(uint32_t inPort, uint8_t tc, int quanta);
  void armRefresh(uint32_t inPort, uint8_t tc);

  NodeId id_ = kInvalid;
  Simulator* sim_ = nullptr;
  const EcmpFib* fib_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  EgressPort* ports_ = nullptr;  // this switch's ports, indexed by local port
  PortId firstPort_ = 0;
  uint32_t degree_ = 0;
  const SwitchParams* params_ = nullptr;
  uint64_t maxUsed_ = 0;
  uint64_t drops_ = 0;
  Mmu mmu_;
  Mmu::Config mmuConfig_;
  std::vector<TimerId> refresh_;  // per (port, class): PAUSE refresh timer, created on first XOFF
  std::vector<Violation> violations_;
  Rng rng_;
  /// The member of `group` a new flowlet of class `tc` takes now (see the header comment).
  uint32_t newFlowletMember(std::span<const PortId> group, uint8_t tc);
  struct Flowlet {
    Time lastSeen;
    uint32_t member = 0;
    bool seen = false;  ///< no packet has used the entry yet: the next one starts a flowlet
  };
  static constexpr uint32_t kFlowletEntries = 1024;
  static constexpr uint32_t kRotationEntries = 8192;
  std::vector<Flowlet> flowlets_;      // allocated only for flowlet switching
  std::vector<Time> flowletAssigned_;  // per local port: when it last got a new flowlet (flowlet only)
  std::vector<uint16_t> rotation_;     // adaptive: per flow-hash entry, the member its last packet took
  uint32_t sprayNext_ = 0;
};

}  // namespace fabricsim
