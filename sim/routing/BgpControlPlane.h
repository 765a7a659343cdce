// BgpControlPlane: RFC 7938 eBGP in a Clos fabric, installing ECMP groups into an EcmpFib.
//
// Models: one eBGP session per switch-to-switch link (parallel links: one session each, each
// its own next hop and egress port); hosts do not speak BGP. Every leaf (a switch with hosts)
// originates one prefix for its hosts, keyed by the leaf itself. A route is (prefix leaf,
// AS_PATH); ASNs come from AsnPlan (see AsnPlan.h for the rfc7938 and unique schemes).
//  - Receive: an UPDATE replaces the route of that session for that prefix in Adj-RIB-In
//    (implicit withdraw); a route whose AS_PATH holds the receiver's own ASN is ineligible
//    (RFC 4271 section 9.1.2) and so acts as a withdrawal; a withdrawal removes it.
//  - Decide: shortest AS_PATH; multipath over every session offering that length, even from
//    different neighbour ASNs (RFC 7938 section 6.3, "multipath relax"). The multipath set
//    becomes the ECMP group of (switch, leaf) via EcmpFib::setRoute (empty: no route). The
//    single best path that is advertised is the incumbent while it stays in the set (RFC
//    5004), else the one from the lowest egress port.
//  - Advertise: when the best path changes (its AS_PATH or its reachability), the switch
//    sends its own ASN prepended to every established session, the ones it learned the route
//    from included (eBGP does not suppress those; the receiver drops them by loop
//    prevention), or a withdrawal to sessions it had advertised the prefix on. One prefix per
//    UPDATE message. An advertisement equal to the last one sent on a session is not resent.
//  - Timing: a message reaches the peer after the link's propagation latency; each switch
//    processes received messages one at a time in arrival order, each taking
//    BgpSpec::updateDelay. MRAI (BgpSpec::mrai > 0): per (session, prefix) at most one
//    advertisement per interval, later changes coalesced into the next one; withdrawals are
//    not delayed (RFC 4271 section 9.2.1.1 allows this). A new session starts without MRAI
//    history and exchanges the full table at once.
//  - Failures: linkDown/linkUp/switchDown/switchUp act on the control plane after the
//    detection delay (bfd: bfdInterval x bfdMultiplier; los: 0). Messages on a link that is
//    down are lost; a switch that is down processes nothing, forgets its state and its FIB
//    rows are emptied at the moment it fails. Sessions are torn down at detection (dropping
//    their Adj-RIB-In routes, re-running selection, sending withdrawals and changes) and
//    re-established at detection of the repair, with a full table exchange.
// start() takes the FIB as it finds it: a group is only rewritten when BGP's selection for
// it differs from what the FIB holds, so a run may start from converged static tables.
// Leaves out: BGP message encoding, TCP, keepalive and hold timers (BFD or loss of light
// stands for them), route-flap damping, graceful restart, iBGP, policies and communities,
// packing several prefixes into one UPDATE, weighted ECMP.
// Units: Time in ps (the simulator clock); counts are messages.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/EventHandler.h"
#include "sim/core/Simulator.h"
#include "sim/core/Time.h"
#include "sim/routing/AsnPlan.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class BgpControlPlane final : public EventHandler {
 public:
  /// ECMP group sizes over every (up switch, up leaf of its plane) pair, the leaf itself
  /// excluded.
  struct GroupSummary {
    uint64_t pairs = 0;
    uint64_t ports = 0;        ///< sum of the group sizes
    uint32_t minSize = 0;      ///< smallest group (0 when some pair has no route)
    uint64_t emptyGroups = 0;  ///< pairs without a route
    double mean() const { return pairs == 0 ? 0.0 : static_cast<double>(ports) / static_cast<double>(pairs); }
  };

  enum class EventKind : uint8_t { LinkDown, LinkUp, SwitchDown, SwitchUp };

  /// One failure or repair and what the control plane did about it. Messages and FIB changes
  /// are attributed to the most recent event.
  struct FailureStats {
    EventKind kind = EventKind::LinkDown;
    uint32_t element = kInvalid;   ///< LinkId or NodeId
    Time failed;                   ///< when the call was made
    Time detected;                 ///< failed + detection delay
    Time lastFibChange;            ///< last FIB change attributed to it (== failed when none)
    bool fibChanged = false;
    uint64_t updatesSent = 0;      ///< UPDATE messages sent since this event (until the next)
    uint64_t withdrawalsSent = 0;
    GroupSummary before;           ///< at the call
    GroupSummary after;            ///< when the control plane next became quiet (or at the next event)
    /// Convergence time: last FIB change minus the failure time.
    Time convergence() const { return lastFibChange - failed; }
  };

  /// Keeps references to all four; they must outlive the control plane. `fib` is written
  /// with setRoute only.
  BgpControlPlane(Simulator& sim, const Topology& topo, EcmpFib& fib, const BgpSpec& spec);

  /// Establishes every session and originates every leaf's prefix at sim.now(); the rest
  /// happens in simulator events. Call once.
  void start();

  /// Failure and repair notifications (the data plane is the caller's business). The control
  /// plane acts after the detection delay. Call after start().
  void linkDown(LinkId l);
  void linkUp(LinkId l);
  void switchDown(NodeId s);
  void switchUp(NodeId s);

  /// No message in flight or queued, no advertisement held by MRAI, no pending detection.
  bool converged() const { return pendingWork_ == 0; }
  /// Time of the last FIB change BGP made (zero when none).
  Time lastChange() const { return lastChange_; }
  uint64_t updatesSent() const { return updatesSent_; }
  uint64_t withdrawalsSent() const { return withdrawalsSent_; }
  uint64_t fibChanges() const { return fibChanges_; }
  const std::vector<FailureStats>& failureStats() const { return failures_; }
  /// Current ECMP group sizes (see GroupSummary).
  GroupSummary groupSummary() const;
  const AsnPlan& asnPlan() const { return asns_; }
  /// Detection delay implied by the spec.
  Time detectionDelay() const { return detection_; }
  /// True when the session on link `l` is established.
  bool sessionUp(LinkId l) const { return sessionUp_[l] != 0; }

  void onEvent(uint32_t tag) override;

 private:
  using Path = std::vector<Asn>;
  struct RibIn {
    bool valid = false;
    Path path;
  };
  struct RibOut {
    bool advertised = false;  ///< the peer holds our route (last message was an UPDATE)
    bool pending = false;     ///< an advertisement waits for MRAI
    bool hasLastAdv = false;
    Time lastAdv;
    Path lastSent;
  };
  struct LocRib {
    bool reachable = false;
    PortId bestPort = kInvalid;  ///< kInvalid for the leaf's own prefix
    Path path;                   ///< AS_PATH of the best route as received (empty: own prefix)
  };
  struct Message {
    NodeId leaf = kInvalid;
    uint32_t epoch = 0;
    bool withdraw = false;
    Path path;
  };
  struct Received {
    PortId port;  ///< receiving port
    Message msg;
  };
  struct Action {
    EventKind kind;
    uint32_t element;
  };

  enum Tag : uint32_t { kArrive = 1, kProcess = 2, kMrai = 3, kDetect = 4 };
  static constexpr uint32_t kTagBits = 3;
  static uint32_t tag(Tag kind, uint32_t index) { return (index << kTagBits) | kind; }

  bool isSessionPort(PortId p) const { return rowBase_[p] != kNoRow; }
  size_t leafCountOf(NodeId sw) const { return fib_.leavesOf(fib_.component(sw)).size(); }
  RibIn& ribIn(PortId p, uint32_t leafPos) { return ribIn_[rowBase_[p] + leafPos]; }
  RibOut& ribOut(PortId p, uint32_t leafPos) { return ribOut_[rowBase_[p] + leafPos]; }
  LocRib& locRib(NodeId sw, uint32_t leafPos) { return locRib_[locBase_[sw] + leafPos]; }

  void onArrive(PortId sendPort);
  void onProcess(NodeId sw);
  void onMrai(PortId port);
  void onDetect(uint32_t action);
  void apply(NodeId sw, PortId rxPort, const Message& m);
  void select(NodeId sw, uint32_t leafPos);
  void advertise(NodeId sw, uint32_t leafPos);
  void sendCurrent(PortId port, uint32_t leafPos);
  void send(PortId port, NodeId leaf, bool withdraw, Path path);
  void establish(LinkId l);
  void teardown(LinkId l);
  void clearSide(PortId p);
  void killSwitch(NodeId s);
  void bootSwitch(NodeId s);
  void setFib(NodeId sw, NodeId leaf, const std::vector<PortId>& ports);
  void record(EventKind kind, uint32_t element);
  void closeOpenRecord();

  static constexpr size_t kNoRow = static_cast<size_t>(-1);

  Simulator& sim_;
  const Topology& topo_;
  EcmpFib& fib_;
  BgpSpec spec_;
  AsnPlan asns_;
  Time detection_;
  bool started_ = false;

  std::vector<uint32_t> leafPos_;  // per node: index among its plane's leaves, or kInvalid
  std::vector<size_t> rowBase_;    // per directed port: row in ribIn_/ribOut_, kNoRow if no session
  std::vector<size_t> locBase_;    // per node: row in locRib_
  std::vector<RibIn> ribIn_;
  std::vector<RibOut> ribOut_;
  std::vector<LocRib> locRib_;

  std::vector<uint8_t> alive_;      // per node: switch control plane running
  std::vector<uint8_t> linkPhys_;   // per link: physically up
  std::vector<uint8_t> linkCp_;     // per link: up as far as the control plane knows
  std::vector<uint8_t> sessionUp_;  // per link
  std::vector<uint32_t> epoch_;     // per link: bumped at every session change

  std::vector<std::deque<Message>> inFlight_;  // per sending port
  std::vector<std::deque<Received>> rxQueue_;  // per node
  std::vector<Time> processAt_;                // per node: due time of the next processing, or max
  std::vector<std::vector<uint32_t>> mraiPending_;  // per sending port: leaf positions
  std::vector<Time> mraiAt_;                   // per sending port: due time of the timer, or max
  std::vector<Action> actions_;

  uint64_t pendingWork_ = 0;
  uint64_t updatesSent_ = 0;
  uint64_t withdrawalsSent_ = 0;
  uint64_t fibChanges_ = 0;
  Time lastChange_ = Time::zero();
  std::vector<FailureStats> failures_;
  bool recordOpen_ = false;  // the last record's `after` is still to be taken
  std::vector<PortId> scratch_;
};

}  // namespace fabricsim
