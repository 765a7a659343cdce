// FlowFabric: the flow-level backend behind the Fabric interface (DESIGN.md section 4).
//
// Models: every transfer as a fluid flow whose rate is its max-min fair share (MaxMinSolver)
// of the resources on its path: each directed link's payload capacity (line rate x MTU
// payload / framed MTU, so RoCEv2 and InfiniBand framing cost what they cost in the packet
// backend). Transfers inside a host ride NvlinkModel, as on the packet backend (each GPU's
// NVLink egress serves its transfers in order). NIC limits are the host links themselves; a flow's ACKs take
// their share (one ACK frame per ackEvery data frames) of the two NIC links in the reverse direction. Paths
// are the packet backend's: the same RoCEv2 queue-pair five-tuple (FlowHash::queuePairTuple) hashed by the
// same ECMP tables (EcmpFib, static or installed by BGP), with PXN for GPUs whose NIC is on another rail, so
// ECMP collisions are the same. Each routing mode means what it means at packet level (README, "Routing"), in
// fluid form:
//   ecmp, bgp  the hashed path (per flow, the same as the packet backend's);
//   flowlet    a transfer starts a new flowlet when its queue pair has nothing in flight and
//              has been idle longer than routing.flowlet_gap since its last transfer's fluid
//              end (otherwise it continues the pair's flowlet, on the same path). A new flowlet
//              takes at each switch the member of the ECMP group with the least load (the sum
//              of the active flows' weights on it), ties broken from the transfer's own hash;
//              loads count every flow placed so far, so transfers that start together see each
//              other as the packet backend's flowlets do. The approximation: a fluid flow never
//              idles, so it is never re-placed in mid-transfer (the packet backend re-selects
//              after a PFC pause or a retransmission timeout longer than the gap).
//   adaptive   per packet at packet level, hence a split of the flow over every member: each
//              packet joining the least-loaded queue keeps the members' queues level, and with
//              every flow split the same way the members of a group carry equal loads, so the
//              fluid split is even: the same as spray. They differ at packet level only in
//              transients (spray's random overloads), which the fluid leaves out.
//              routing.adaptive_bias (keep the hashed member until another is emptier by the
//              bias) has no fluid form and is refused.
//   spray      an even split over every equal-cost path (random or round-robin per packet are
//              even in the mean); each link used with weight = its share of the flow.
// Rates are recomputed when flows start or finish; all changes at one timestamp are batched
// into one recomputation of the connected parts of the fabric they touch (incremental).
// Hashed paths are looked up once per queue pair (ring steps and micro-batches reuse them), and
// each flow's projected completion moves in place in a CompletionHeap when its rate changes.
// Hybrid mode (setEpisodeModel, `--backend hybrid`): after each solve, every switch egress the
// solve left saturated with flows from two or more upstream ports, able to arrive faster than
// it drains, is a congestion episode. Its flows are all the episodic ones that cross it, those
// bottlenecked elsewhere too: they sit in the same queue, and ECN marks any packet there. A flow arrives as
// fast as its NIC serves it: NICs serve their queue pairs in turn, blind to their paths' bottlenecks, so each
// gets an equal share of its port (less what paced queue pairs take), not its max-min rate. A
// CongestionEpisodeModel measures what the fabric's congestion control makes of the episode, flow by flow,
// and each flow is then held to a pace: its fluid rate there times its draw from the episode's per-flow
// efficiencies (flows whose queue pair is still held by its congestion control draw the lowest,
// the most held first; the others in the order of a hash of the transfer, the time and the
// seed). The pace is a resource of the flow's own in the solver, and holds for the bytes the
// episode covered (the flow's burst, else the rest of the flow): a queue pair's
// congestion-control state outlives the collision that set it (a DCQCN QP cut there recovers
// over milliseconds), so partners leaving or new flows arriving do not lift it. Beyond those
// bytes the queue pair keeps the state its draw left in the episode (the model's flowStates(),
// copied into a congestion control of the fabric's own, one QP per queue pair that took part in
// an episode): each later message on it starts held to that state's rate, recovering on the
// scheme's own timers: held to the mean of that rate until it has moved by more than
// episodes.tolerance, then refreshed at the next recomputation, until it is back at line rate. Rates and paces depend on each
// other; each recomputation runs rounds of (solve, the episodes of the links that solve
// touched, evaluated together from it, their flows held to their paces) until a round holds no
// new flow, or episodes.max_rounds rounds were run (the recomputation is then counted as
// unconverged). Paced flows, and lossless classes without congestion control (PfcSpreading's),
// are not flows of later episodes: they are the episode's background (CongestionEpisode), at
// their rates; the paced ones are cut to what the background kept (the new queue marks them too).
// The episodes of one switch build their queues at once in its shared packet buffer: each is
// evaluated alone, then, where a switch has several, again with what the others hold of the
// buffer meanwhile (CongestionEpisode::bufferHeld): each other queue as its episode alone built it
// (the model's queueBytes()), for the part of this episode's time its own lasts, and, in a lossy
// class, no more than the dynamic thresholds let it keep beside the others (queue u_k keeps
// min(u_k, T), T = alpha (B - sum of them); a lossless queue is not held at its egress). One
// step, not iterated: what the others' queues are measured alone is what they hold unless the
// threshold binds, and then T is that equilibrium. InfiniBand credits each input port its own
// buffer: nothing is shared.
// An episode whose efficiency is within episodes.tolerance of 1 holds no flow and cuts none.
// NIC uplinks are never episodes.
// A flow is delivered its fixed path latency after its last byte left the fluid: propagation,
// switch latency and one frame's store-and-forward per switch hop (as the packet backend's
// unloaded time).
// Failures during the run (setLinkUp; tables changed by a control plane or local fast failover:
// routesChanged): a flow whose path crosses a dead port, or meets a switch without a route, loses
// what it had in flight and had not yet passed the failure (its rate x the delay from its source
// to there, resent later) and stalls; the link capacity its doomed packets burn upstream of the
// failure is not charged. It recovers as RC retransmission does in the packet backend: if its
// path works again while the sender still has new data to send and the receiver is strict
// (nic.reorder), the receiver sees the gap and NAKs, and the flow resumes one round trip later
// (go-back-N); a tolerant receiver places out-of-order packets and never NAKs, so, as otherwise,
// the flow waits for the retransmission timer (RetransmitSchedule: the
// same RTOs and backoff), resends at each expiry, and fails after the retry limit, which ends the
// run with the same failure record as the packet backend. A flow whose path still works when
// the tables change moves to its new hashed path at once (its in-flight packets are not lost).
// A flow that finishes sending while its ACKs' path (the reverse hashed path) is broken is
// delivered, but its sender hears nothing: it times out and resends until an ACK gets through,
// or fails the connection after the retry limit, as go-back-N does.
// Host links and NICs (a NIC down is its host link down) fail as other links do; in addition, a
// stalled flow whose NIC, or its peer's, is down when its retransmission timer expires moves its
// queue pair to another NIC pair of the same hosts (nic.failover; GpuPath::failoverNics, as the
// packet backend does), resending what it had not delivered there with a fresh retry counter;
// later transfers of that queue pair use the new NICs too. Without failover it fails as
// `nic_down` after its retries.
// Lossless classes without congestion control (PFC classes, or InfiniBand credits): a switch
// egress the rates congest is shared per paused ingress port and pauses the ports upstream of
// it, and flows queued behind the paused traffic are slowed with it (PfcSpreading, applied
// after the solve: applyPfcSpreading).
// Leaves out (reported in the results' backend_model.not_modelled): congestion-control
// transients (rates are the converged fair share at once), queueing delay and buffer
// occupancy, ECN marks, PFC pauses under a congestion control, pause dynamics, drops other
// than at failures,
// CNP traffic, ACKs beyond the NIC links, packet reordering.
// Units: Bytes, Time (ps), rates in bytes per picosecond internally.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/cc/CongestionControl.h"
#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/fabric/LinkFraming.h"
#include "sim/fabric/NvlinkModel.h"
#include "sim/fabric/RetransmitSchedule.h"
#include "sim/flow/CompletionHeap.h"
#include "sim/flow/CongestionEpisodeModel.h"
#include "sim/flow/FlatCache.h"
#include "sim/flow/FlowFabricState.h"
#include "sim/flow/MaxMinSolver.h"
#include "sim/flow/PfcSpreading.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/GpuPath.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class FlowFabric final : public Fabric, public EventHandler {
 public:
  FlowFabric(Simulator& sim, const Topology& topo, const TopologySpec& spec, const EcmpFib& fib);

  /// InfiniBand: route by the subnet manager's LFTs (the packet backend's paths for each QP's
  /// DLID); with its adaptive routing, as `adaptive` over the SM's groups. Call before any transfer.
  void setSubnetManager(const IbSubnetManager& sm);

  void send(const TransferRequest& request, TransferObserver* observer) override;
  /// A pipeline's network edges as one fluid flow (FlowFabricGroups.cpp): its hops are every
  /// member's path, each weighted by the member's bytes over the largest member's, so it moves
  /// every member at the same fraction of its bytes per second. NVLink members, empty and
  /// in-order ones go on their own. Coupled (couplesGroups()) without PFC spreading, failures
  /// seen, or flowlets (whose placement is per queue pair); sprayed and adaptive members bring
  /// their split paths. In hybrid mode each member crossing a congested link is a flow of that
  /// episode (its own upstream port, NIC share, size and queue pair), and the pace the slowest
  /// member draws holds the group (a pipeline moves at its slowest edge). A failure
  /// during the run splits every group flow back into its members (explodeGroups).
  void sendGroup(std::span<const TransferRequest> members, TransferObserver* observer) override;
  bool couplesGroups() const override {
    return pfcClasses_ == 0 && !failuresSeen_ && selection_ != Selection::Flowlet;
  }
  std::string backendName() const override { return episodes_ ? "hybrid" : "flow"; }
  Time pathLatency(uint32_t srcGpu, uint32_t dstGpu) const override;
  double pathRate(uint32_t srcGpu, uint32_t dstGpu) const override;
  const TransferTable& transfers() const override { return transfers_; }
  void keepFlowRecords(bool keep) override { transfers_.keepAll(keep); }
  NetworkCounters networkCounters() const override;
  void onEvent(uint32_t tag) override;
  std::vector<TransferFailure> failures() const override { return failures_; }
  void setLinkUp(uint32_t link, bool up) override;
  /// The forwarding tables changed (a control plane installed routes, or a switch removed a dead
  /// port): active flows are checked against them at this timestamp's recomputation.
  void routesChanged();
  /// Tables of the fault-free fabric, for the unloaded path latencies and ideal times (default:
  /// the live tables). Must outlive the fabric.
  void setReferenceTables(const EcmpFib& reference) { path_.setReferenceTables(reference); }

  /// Hybrid mode: the flows of congestion episodes are held to the paces `model` measures
  /// (nullptr: pure max-min, the default). `model` must outlive the run.
  void setEpisodeModel(CongestionEpisodeModel* model);
  /// Congestion episodes evaluated, and flows held to a pace by them (hybrid mode).
  uint64_t episodesEvaluated() const { return episodesEvaluated_; }
  uint64_t pacesSet() const { return pacesSet_; }
  /// Paces cut again because their flows were in a later episode's background.
  uint64_t backgroundCuts() const { return backgroundCuts_; }
  /// Messages that started held by the congestion-control state an earlier episode left their
  /// queue pair in, and queue pairs carrying such a state.
  uint64_t carriedHolds() const { return carriedHolds_; }
  /// Holds set at a carried rate: at a message's start, and each time its rate moved by the tolerance.
  uint64_t holdRefreshes() const { return holdRefreshes_; }
  size_t carriedQueuePairs() const { return qpSlots_.size(); }
  /// The rounds between episodes and rates (hybrid mode).
  struct Coupling {
    uint64_t recomputations = 0;  ///< recomputations (each runs rounds until one holds no new flow)
    uint64_t rounds = 0;          ///< rounds that held flows (each followed by a solve), in all
    uint32_t maxRounds = 0;       ///< the most such rounds one recomputation needed
    uint64_t unconverged = 0;     ///< recomputations stopped by episodes.max_rounds
  };
  const Coupling& coupling() const { return coupling_; }
  /// Lossless classes without congestion control (PfcSpreading): recomputations in which a
  /// congested switch egress of the components they changed paused the ports feeding it, and
  /// the flows slowed there as victims (summed over those recomputations).
  uint64_t pfcPausedRecomputations() const { return pfcPausedRecomputations_; }
  uint64_t pfcVictims() const { return pfcVictims_; }

  /// The effects this backend does not model, for the results.
  static std::vector<std::string> unmodelledEffects();

  // ---- statistics (results, benchmarks, tests) ----
  const MaxMinSolver& solver() const { return solver_; }
  uint64_t flowsStarted() const { return flowsStarted_; }
  /// Bytes held by the backend's tables (solver, active flows, records), for the memory figures.
  size_t memoryBytes() const;
  /// Payload bytes carried by directed port `p` so far (sprayed flows by their share).
  double portPayloadBytes(PortId p) const { return portBytes_[p]; }
  /// Queue pairs moved to another NIC so far (nic.failover).
  uint64_t failovers() const { return failovers_; }
  /// Payload capacity of directed port `p` in bytes per picosecond.
  double portCapacity(PortId p) const { return solver_.capacity(p); }
  /// The ports a transfer would use now, with weights, in path order (sprayed: sorted by port);
  /// without the ACK share; empty inside a host (NVLink) (tests).
  std::vector<MaxMinSolver::Hop> pathOf(const TransferRequest& request);

 private:
  enum : uint32_t { kRecompute = 0, kCompletion = 1, kDeliveryBase = 2 };
  static constexpr uint32_t kPaceExpiry = 0x40000000u;  ///< tag of the next pace's end
  static constexpr uint32_t kStallBit = 0x80000000u;    ///< tag of a stalled flow's timer: bit | slot
  static constexpr uint32_t kNoPace = flowstate::kNoPace;
  static constexpr uint32_t kNoGroup = flowstate::kNoGroup;
  static constexpr uint32_t kNoSlot = flowstate::kNoSlot;
  static constexpr uint32_t kNoMember = flowstate::kNoMember;
  using Active = flowstate::Active;
  using GroupMember = flowstate::GroupMember;
  using Group = flowstate::Group;
  using Crossing = flowstate::Crossing;
  using Stalled = flowstate::Stalled;
  /// Calls fn(const Crossing&) for each data passage of user u's flow through `link`: the flow's
  /// own (not its ACK share), or each member of a group flow whose path crosses it.
  template <class Fn>
  void forEachCrossing(const MaxMinSolver::User& u, uint32_t link, Fn&& fn) const;
  std::vector<Group> groups_;
  std::vector<uint32_t> freeGroups_;
  std::vector<std::pair<uint32_t, double>> groupHops_;  ///< scratch: (resource, weight x bytes)
  std::vector<std::array<uint32_t, 3>> crossScratch_;   ///< scratch: (resource, member, hop)
  /// Fills g's crossing index from its members' paths and its merged hops (hops_).
  void indexCrossings(Group& g);
  /// Splits every group flow into its members' own flows, each with its share of what the group
  /// has left (failures: each member then stalls or moves on its own path).
  void explodeGroups(Time now);
  /// Opens the record of transfer `r` routed in hops_ (its ideal time from that path) and counts
  /// it as sent, with its bytes on the ports it crosses.
  uint32_t openRouted(const TransferRequest& r, TransferObserver* observer, Time latency);
  /// A record of transfer `r` starting now (endpoints, bytes, start).
  FlowRecord recordOf(const TransferRequest& r) const;
  /// Fills hops_ with the path of a transfer and returns its fixed latency. `transferId`: its
  /// number in request order (FlowRecord::id), from which flowlet placement breaks ties.
  Time route(uint32_t srcGpu, uint32_t dstGpu, uint8_t tc, uint16_t qp, Bytes bytes, uint32_t transferId);
  /// route() between two NICs, hop by hop through the tables (no cache).
  Time hashedRoute(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qp, Bytes bytes,
                   uint32_t transferId);
  void requestRecompute();
  /// True when every data hop of hops_ is up (and the route reached its NIC).
  bool routeWorks() const;
  /// Checks every active flow and every stalled one against the current tables and links.
  void reroute();
  /// Takes solver flow `f` out: it lost the bytes it sent in the last `lostWindow` (those
  /// that had not yet passed the failure) and waits to resend them.
  void stall(uint32_t f, Time now, Time lostWindow, bool blackhole);
  /// True when the ACKs of QP (tc, qp) from dstNic back to srcNic reach it: every port of the
  /// reverse hashed path is up and every switch on it has a route.
  bool ackPathWorks(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qp) const;
  /// Flow `a` sent its last byte into a fabric that has seen failures: if its ACKs cannot come
  /// back, its sender waits on its retransmission timer (a Stalled entry, ackOnly).
  void checkAcks(const Active& a);
  bool failuresSeen_ = false;  ///< a link changed state or the tables changed during the run
  /// The fixed delay from the source NIC to the far end of port `dead` along data hops
  /// `hops[0, dataHops)` (hop order, or the weighted hop set of spray/adaptive), for frames of
  /// a transfer of `bytes`: how long before a failure there the first lost packet left.
  Time delayToFarEnd(std::span<const MaxMinSolver::Hop> hops, uint32_t dataHops, PortId dead,
                     Bytes bytes) const;
  /// Puts a stalled flow back on its current path (which works).
  void resume(uint32_t slot, Time now);
  /// A stalled flow's NAK recovery or retransmission timer is due.
  void onStallEvent(uint32_t slot);
  uint32_t newStalled();
  /// Arms the retransmission timer of stalled flow `slot` (its RTO after its timeouts so far).
  void armTimer(uint32_t slot);
  /// Fails stalled flow `slot`'s connection: the run ends (as in the packet backend).
  void failStalled(uint32_t slot, TransferFailure::Kind kind);
  /// The NICs a transfer's queue pair uses now (its GPUs' NICs, or those it failed over to), and
  /// the queue pair's key (from its GPUs' NICs: the route cache's and movedQps_'s key).
  void nicsOf(uint32_t srcGpu, uint32_t dstGpu, uint8_t tc, uint16_t qp, uint32_t& src, uint32_t& dst,
              uint64_t& key) const;
  /// True when both NICs are up (their host links too).
  bool nicsUp(uint32_t src, uint32_t dst) const { return nicUp_.empty() || (nicUp_[src] && nicUp_[dst]); }
  /// Stalled flow `slot`'s timer expired with a NIC of its queue pair down: moves the queue pair
  /// to a usable NIC pair (nic.failover) and returns true, or false if it may not or cannot.
  bool failOver(uint32_t slot);
  /// Adds a flow on hops_ with `remaining` bytes; returns its solver id.
  /// `group`: the group flow it is (its members in groups_), else kNoGroup.
  uint32_t start(uint32_t record, double remaining, Time latency, Bytes burst, uint8_t tc, uint16_t qp,
                 uint32_t group = kNoGroup);
  void recompute();
  /// Hybrid mode: the episodes of the switch links the last solve touched (each from that same
  /// solution), and their flows held to the paces those episodes give them (those
  /// not held yet, and those an episode holds to a slower pace than their own); returns how many
  /// flows it held. Episodes with an efficiency within `tolerance` of 1 and no flow of their own
  /// cut by more than `tolerance` below its fluid share are left alone.
  uint32_t commitEpisodes(double tolerance);
  /// A flow that can take part in a congestion episode: not held to a pace already, and not in a
  /// lossless class without congestion control (PfcSpreading shares its congested links).
  bool episodic(const Active& a) const { return !a.paced && !((pfcClasses_ >> a.tc) & 1); }
  /// What NIC uplink `nicPort` gives each of its queue pairs not held to a pace: the rest of the
  /// port after the paced ones, in equal shares (bytes/ps).
  double nicShare(uint32_t nicPort) const;
  /// What crossing `c` of flow `f` (the flow, or one group member) offers its first switch: its
  /// NIC's share (episodic flows on one path), else its rate (bytes/ps). NIC shares cached per round.
  double offered(uint32_t f, const Crossing& c);
  /// Bytes flow `a` has left to send now (its remaining, less what it sent since it was settled).
  double left(const Active& a) const;
  /// The fraction of what its flows offer that switch link `link` passes: 1, or its capacity
  /// over their offered rates where they exceed it. Cached per round.
  double passFraction(uint32_t link);
  /// Hybrid mode: gives flow `f` (being started on hops_) its pace resource, unlimited.
  void attachPace();
  /// Frees flow `a`'s pace resource (it leaves the solver).
  void releasePace(Active& a);
  /// Ends flow `f`'s pace (its resource stays, at its queue pair's carried rate or unlimited).
  void unpace(uint32_t f);
  /// Flow `f`'s pace resource at its queue pair's carried congestion-control rate, if that is
  /// below line rate now, else unlimited (and out of held_): the mean of the rate from now until
  /// it has moved by more than episodes.tolerance, line rate or kMaxHoldSteps of its timers,
  /// when holdTimers_ refreshes it.
  void holdAtCarriedRate(uint32_t f);
  static constexpr int kMaxHoldSteps = 4096;
  /// The carried rate of flow `f`'s queue pair now, as its payload rate (bytes/ps); 0: line rate.
  double carriedRate(uint32_t f);
  /// Payload bytes/ps per line-rate bit/s of flow `f`'s NIC; 0 where it has no carried state.
  double carriedScale(uint32_t f) const;
  /// The queue pair of flow `a` as a key (source NIC, destination NIC, class, index).
  uint64_t queuePairKey(uint32_t record, uint8_t tc, uint16_t qp) const;
  /// The NIC uplink of the queue pair that holds flow `f` (a group: its holdMember's), and its
  /// bytes per byte of the flow.
  uint32_t holdNic(uint32_t f) const;
  double holdShare(uint32_t f) const;
  /// A group flow starting: held by the carried state of the member queue pair that would hold
  /// it lowest (each member moves share x the group's rate), if any carries one.
  void holdGroupAtCarriedRate(uint32_t f);
  /// Takes flow `a` off paced_ / held_ (its pace resource's capacity is the caller's).
  void dropPaced(Active& a);
  void dropHeld(Active& a);
  /// The held flows' paces at their queue pairs' carried rates now (they recover).
  void refreshHolds();
  /// Moves flow f's (paced) entry in paceExpiries_ to when its pace ends at its current rate.
  void setPaceExpiry(uint32_t f);
  /// Ends the paces of the flows that have sent the bytes their episode covered, and schedules
  /// the next such end.
  void expirePaces(Time now);
  void schedulePaceExpiry();
  struct Target {
    uint32_t link = 0;
    double efficiency = 1;
    std::span<const double> flows;  ///< CongestionEpisodeModel::flowEfficiencies
    std::span<const CongestionEpisodeModel::QueuePairState> states;  ///< its flowStates
    std::span<const uint32_t> quartiles;                             ///< its flowQuartiles
    double background = 1;  ///< CongestionEpisodeModel::backgroundEfficiency
    double durationPs = 0;  ///< the episode's time: its fluid makespan over its efficiency
  };
  /// An episode and the model's answer about it.
  struct Shape {
    uint32_t link = 0;
    CongestionEpisode episode;
    double bytes = 0;     ///< the episode's bytes
    double capacity = 0;  ///< what the background leaves of the link, bytes/ps
    Target answer;        ///< the model's (answer.durationPs: its bytes through `capacity` at its efficiency)
    double queue = 0;     ///< the mean queue the model says it builds (bytes)
  };
  /// The episode on saturated switch port `r`, whose flows are the episodic data flows crossing
  /// it, into `out`; false (no episode) if fewer than two upstream ports feed them, or if they
  /// cannot arrive faster than the link drains what the others leave.
  bool episodeAt(uint32_t r, Shape& out);
  /// Asks the model about `shape`'s episode, into its answer and queue.
  void evaluate(Shape& shape);
  /// The episodes of one switch share its buffer: each is asked again with what the others'
  /// queues hold of it (shapes_ of one round).
  void shareSwitchBuffers();
  std::vector<Shape> shapes_;  ///< scratch: the episodes of one round
  std::vector<std::pair<uint32_t, uint32_t>> switchOf_;  ///< scratch: (switch, shape) of a round
  std::vector<double> levels_, heldBytes_;               ///< scratch: shareSwitchBuffers' queues, bytes held
  /// Lossless classes without congestion control: the rates of PfcSpreading (paused ports and
  /// their victims) replace the max-min ones while a pause holds (FlowFabricPfc.cpp).
  void applyPfcSpreading(Time now);
  void settle(uint32_t f, Time now);
  /// Moves flow `f`'s entry in the completion schedule to its finish time at its new rate.
  void updateFinish(uint32_t f);
  void completeDue();
  /// The body of send() for a transfer that may start now; `orderKey` (key + 1, 0: none) is its
  /// connection's entry in ordered_, held until the transfer has left the sender.
  void dispatch(const TransferRequest& request, TransferObserver* observer, uint64_t orderKey);
  /// The transfer of connection `orderKey` in front has left the sender: the next queued one
  /// starts, or the connection is idle again.
  void releaseOrder(uint64_t orderKey);
  /// Flow `a` leaves the fluid (finished or stalled): its queue pair's flowlet counts it out.
  void endFlowlet(const Active& a, Time now);
  void scheduleCompletion();
  /// Delivers `record` at `at` (one event, in a reusable slot).
  void scheduleDelivery(uint32_t record, Time at);
  void deliver(uint32_t slot);
  /// Records the delivery of transfer `record` now (its slot is freed) and tells its observer.
  void finishRecord(uint32_t record);

  Simulator& sim_;
  const Topology& topo_;
  const TopologySpec& spec_;
  const EcmpFib& fib_;
  LinkFraming framing_;
  uint32_t mtu_;
  GpuPath path_;
  enum class Selection : uint8_t { Ecmp, Flowlet, Adaptive, Spray } selection_;
  MaxMinSolver solver_;
  std::unique_ptr<NvlinkModel> nvlink_;
  std::vector<double> nominal_;  ///< per port: fluid payload capacity, bytes/ps
  CongestionEpisodeModel* episodes_ = nullptr;
  static constexpr double kCapacityTolerance = 1e-6;  ///< relative change worth setting
  /// Flows whose arrival rates add up to within this fraction of a link's capacity fill it
  /// without building a queue (rounding in the rates): no episode.
  static constexpr double kArrivalMargin = 1e-3;
  std::vector<uint32_t> touched_;  ///< scratch
  struct Arrival {
    uint32_t port;  ///< upstream port (or a sprayed flow's own id, top bit set)
    double most;    ///< what the flow brings here when nothing holds it back, bytes/ps
    double start;   ///< what its sender sends at the start: `most` but for the queues before here
  };
  std::vector<Arrival> arrivals_;                 ///< scratch: the flows of one episode
  uint32_t round_ = 0;                            ///< commitEpisodes calls, the caches' stamp
  std::vector<double> share_, pass_;              ///< per port: nicShare, passFraction of round_
  std::vector<uint32_t> shareStamp_, passStamp_;  ///< per port: the round they were computed in
  std::vector<Target> targets_;  ///< scratch: the episodes of one round
  /// One episode flow's place in the draw of outcomes: its bytes left, its carried rate over
  /// line rate (2: none carried), the luck of the packets, and the range of outcomes it draws from.
  struct Draw {
    double size = 0;
    double carried = 2;
    uint64_t hash = 0;
    uint32_t flow = 0;
    uint32_t begin = 0, end = 0;
    Crossing crossing;
  };
  std::vector<Draw> draws_;    ///< scratch: the flows of one episode
  std::vector<uint32_t> carried_;  ///< scratch: the group members whose state a flow's paces carried
  std::vector<double> sizes_;  ///< scratch: their bytes left (episodeEfficiency)
  /// scratch: (flow, pace, its queue pair's state after the episode, the group member it is or kNoMember)
  std::vector<std::tuple<uint32_t, double, CongestionEpisodeModel::QueuePairState, uint32_t>> paces_;
  std::vector<std::pair<uint32_t, double>> recut_;  ///< scratch: (paced flow, its cut pace)
  Coupling coupling_;
  std::vector<uint32_t> freePaces_;        ///< pace resources of flows that left
  std::vector<uint32_t> paced_;            ///< the flows held to a pace
  CompletionHeap paceExpiries_;            ///< when each paced flow's pace ends, earliest first
  CompletionHeap holdTimers_;              ///< when each held flow's hold interval ends
  Time nextPaceExpiry_ = Time::max();      ///< the pending pace-expiry event, or max
  static constexpr double kUnpaced = 1e6;  ///< a pace resource's capacity while it holds nothing (bytes/ps)
  uint64_t episodesEvaluated_ = 0;
  uint64_t pacesSet_ = 0;
  uint64_t backgroundCuts_ = 0;
  /// In-order transfers (TransferRequest::inOrder) waiting behind the one in front of their
  /// connection (source and destination GPU, class, qp); a key is present while its connection
  /// has a transfer in front.
  struct Queued {
    TransferRequest request;
    TransferObserver* observer = nullptr;
  };
  std::unordered_map<uint64_t, std::deque<Queued>> ordered_;
  std::vector<uint64_t> released_;  ///< completeDue's scratch: connections whose message left
  std::vector<uint64_t> stalledOrders_;  ///< reroute(): connections whose message stalled
  /// Hybrid mode under a congestion control: the queue pairs' carried states (one QP each), by
  /// queuePairKey; the flows held by them.
  std::unique_ptr<CongestionControl> qpCc_;
  std::unique_ptr<CongestionControl> scratchCc_;  ///< holdAtCarriedRate's: one QP stepped ahead
  uint64_t holdRefreshes_ = 0;
  std::unordered_map<uint64_t, uint32_t> qpSlots_;
  std::vector<uint32_t> held_;
  uint64_t carriedHolds_ = 0;
  PfcSpreading pfc_;
  std::vector<MaxMinSolver::Hop> pfcHops_;  ///< scratch: a split flow's hops, NIC uplink first
  uint8_t pfcClasses_ = 0;                  ///< PfcSpreading::pausingClasses of the spec (0: never applied)
  // applyPfcSpreading's scratch: the components its fill redoes (stamped, never cleared).
  std::vector<uint32_t> pfcRes_, pfcFlows_, pfcResStamp_, pfcFlowStamp_;
  uint32_t pfcEpoch_ = 0;
  uint64_t pfcPausedRecomputations_ = 0;
  uint64_t pfcVictims_ = 0;
  double ackWeight_ = 0;  ///< share of a flow's rate its ACKs take on the reverse NIC links
  size_t ackHops_ = 0;    ///< the last hops_ entries that are the ACK share

  std::vector<Active> active_;  ///< by solver flow id
  CompletionHeap finishes_;
  Time nextCompletion_ = Time::max();
  bool recomputeScheduled_ = false;
  TransferTable transfers_;           ///< transfers in flight (by slot: `record` below) and statistics
  std::vector<uint32_t> deliveries_;  ///< per delivery slot: the record
  std::vector<uint32_t> freeDeliveries_;
  std::vector<double> portBytes_;        ///< payload bytes carried per port (weights applied)
  std::vector<MaxMinSolver::Hop> hops_;  ///< scratch: path being built
  /// Paths of hashed (ECMP/BGP) queue pairs carrying full frames, by (srcNic, dstNic, tc, qp);
  /// cleared when the tables change.
  struct CachedRoute {
    uint32_t offset = 0;  ///< first hop in routeHops_
    uint16_t count = 0;
    uint16_t ackHops = 0;
    Time latency;
  };
  static constexpr size_t kRouteCacheEntries = size_t{1} << 22;  ///< bound on the cache's memory
  FlatCache<CachedRoute> routeCache_{kRouteCacheEntries};
  std::vector<MaxMinSolver::Hop> routeHops_;
  /// Flowlet routing: per queue pair (the route cache's key), its current flowlet's path.
  struct Flowlet {
    uint32_t offset = 0;  ///< first hop in flowletHops_ (data hops and ACK share)
    uint16_t count = 0;
    uint16_t ackHops = 0;
    uint32_t active = 0;  ///< its transfers in the fluid now
    bool ended = false;   ///< lastEnd is set
    Time lastEnd;         ///< when its last transfer left the fluid
  };
  FlatCache<Flowlet> flowlets_{kRouteCacheEntries};
  std::vector<MaxMinSolver::Hop> flowletHops_;
  /// The fixed latency of the path in hops_ for a first frame of `bytes` (see hashedRoute).
  Time latencyOf(Bytes bytes) const;
  mutable FlatCache<Time> latencyCache_{kRouteCacheEntries};        ///< pathLatency by (src GPU, dst GPU)
  std::vector<std::pair<NodeId, double>> frontier_, nextFrontier_;  ///< scratch: spraying
  // ---- failures ----
  RetransmitSchedule retransmit_;
  bool nakRecovery_;             ///< strict receivers NAK a gap; tolerant ones (nic.reorder) never do
  std::vector<uint8_t> portUp_;  ///< per directed port; empty while no link has failed
  std::vector<uint8_t> nicUp_;   ///< per NIC (its host link up); empty while no host link has failed
  bool failover_ = false;        ///< nic.failover
  uint64_t failovers_ = 0;
  /// Queue pairs that failed over, by key (see nicsOf): their NICs now.
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> movedQps_;
  bool rerouteAll_ = false;   ///< the tables or links changed since the last recomputation
  bool routeBroken_ = false;  ///< the last route() met a switch without a route
  bool cacheStale_ = false;   ///< the tables changed: the route cache must be emptied
  std::vector<Stalled> stalled_;
  std::vector<uint32_t> freeStalled_;
  std::vector<TransferFailure> failures_;
  uint64_t stalls_ = 0;
  uint64_t timeouts_ = 0;
  double resentBytes_ = 0;
  double deadLinkBytes_ = 0, blackholedBytes_ = 0;  ///< what the resends made up for, by cause
  Time lastRouteLoss_ = Time::ps(-1);               ///< when the last of them was lost
  /// Counts what a stalled flow lost up to `now` (in flight, then sent into the failure) as
  /// resent, and by cause; returns it.
  double chargeLoss(const Stalled& st, Time now);
  Time lastDelivery_;
  Bytes bytesSent_ = 0;
  Bytes bytesDelivered_ = 0;
  uint64_t flowsStarted_ = 0;
};

}  // namespace fabricsim
