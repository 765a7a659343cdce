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
//    detection delay (bfd: bfdInterval x bfdMultiplier; los: 0). Messages on the wire of a link
//    when it fails are lost; a switch that is down processes nothing, forgets its state and its
//    FIB rows are emptied at the moment it fails. Sessions are torn down at detection (dropping
//    their Adj-RIB-In routes and the messages queued from them, re-running selection, sending
//    withdrawals and changes) and re-established at detection of the repair, with a full table
//    exchange.
//  - Attribution: every message carries the event that caused it (a failure or repair, or the
//    start). Processing a message works on behalf of its event, so the messages it provokes,
//    the FIB changes it makes and the withdrawals a detection sends belong to that event, and
//    overlapping events are each counted apart (FailureStats).
// start() takes the FIB as it finds it: a group is only rewritten when BGP's selection for
// it differs from what the FIB holds, so a run may start from converged static tables.
// Storage: AS_PATHs are interned (AsPathTable: a RIB row is a 4-byte reference); per switch,
// the Adj-RIB-In and Adj-RIB-Out rows of one prefix over all its sessions are contiguous (4 and
// 1 bytes per row); messages are shared records (BgpInbox). MRAI state (last advertisement
// time and path per row) is kept only when MRAI > 0.
// Leaves out: message contents beyond what routing needs (attributes other than AS_PATH, BGP
// message encoding, TCP, keepalive and hold timers: BFD or loss of light stands for them),
// route-flap damping, graceful restart, iBGP, policies and communities, packing several
// prefixes into one UPDATE, weighted ECMP.
// Units: Time in ps (the simulator clock); counts are messages; memory in bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/EventHandler.h"
#include "sim/core/Simulator.h"
#include "sim/core/Time.h"
#include "sim/routing/AsPathTable.h"
#include "sim/routing/AsnPlan.h"
#include "sim/routing/BgpInbox.h"
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

  /// One failure or repair and what the control plane did about it: the messages and FIB
  /// changes it caused (see Attribution in the header comment), overlapping events apart.
  struct FailureStats {
    EventKind kind = EventKind::LinkDown;
    uint32_t element = kInvalid;  ///< LinkId or NodeId
    Time failed;                  ///< when the call was made
    Time detected;                ///< failed + detection delay
    Time lastFibChange;           ///< last FIB change it caused (== failed when none)
    bool fibChanged = false;
    uint64_t updatesSent = 0;  ///< UPDATE messages it caused
    uint64_t withdrawalsSent = 0;
    GroupSummary before;  ///< at the call
    GroupSummary after;   ///< when its last message was processed (its work done)
    /// Convergence time: last FIB change minus the failure time.
    Time convergence() const { return lastFibChange - failed; }
  };

  /// What the initial convergence (start()) cost.
  struct StartStats {
    Time lastFibChange;  ///< last FIB change caused by the start
    Time quiet;          ///< when the start's last message was processed
    uint64_t updatesSent = 0;
    uint64_t withdrawalsSent = 0;
    uint64_t fibChanges = 0;
  };

  /// Keeps references to all four; they must outlive the control plane. `fib` is written
  /// with setRoute only.
  BgpControlPlane(Simulator& sim, const Topology& topo, EcmpFib& fib, const BgpSpec& spec);
  ~BgpControlPlane() override;

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
  const StartStats& startStats() const { return start_; }
  /// Current ECMP group sizes (see GroupSummary).
  GroupSummary groupSummary() const;
  const AsnPlan& asnPlan() const { return asns_; }
  /// Detection delay implied by the spec.
  Time detectionDelay() const { return detection_; }
  /// True when the session on link `l` is established.
  bool sessionUp(LinkId l) const { return sessionUp_[l] != 0; }
  /// Distinct AS_PATHs built so far.
  size_t distinctPaths() const { return paths_.size(); }
  /// Most messages on the wire or queued at one time.
  size_t peakQueuedMessages() const { return inbox_->peakQueued(); }
  /// Bytes held by the control plane's own state (RIBs, paths, queues; the FIB is EcmpFib's).
  size_t memoryBytes() const;

  void onEvent(uint32_t tag) override;

 private:
  using Ref = AsPathTable::Ref;
  struct LocRib {
    Ref path =
        AsPathTable::kNone;    ///< best route's AS_PATH as received; kEmpty: own prefix; kNone: unreachable
    uint32_t best = kInvalid;  ///< session index of the best route (kInvalid: own prefix or none)
  };
  /// Adj-RIB-Out flags of one (session, prefix).
  enum : uint8_t { kAdvertised = 1, kPending = 2 };
  struct Action {
    EventKind kind;
    uint32_t element;
    uint32_t cause;
  };
  struct Cause {
    uint64_t work = 0;  // messages queued, advertisements held by MRAI, detections pending
    bool open = false;
  };

  enum Tag : uint32_t { kProcess = 1, kMrai = 2, kDetect = 3 };
  static constexpr uint32_t kTagBits = 2;
  static uint32_t tag(Tag kind, uint32_t index) { return (index << kTagBits) | kind; }

  uint32_t sessions(NodeId sw) const { return static_cast<uint32_t>(sessBase_[sw + 1] - sessBase_[sw]); }
  PortId sessPort(NodeId sw, uint32_t i) const { return sessPort_[sessBase_[sw] + i]; }
  size_t row(NodeId sw, uint32_t pos) const { return ribBase_[sw] + static_cast<size_t>(pos) * sessions(sw); }
  const std::vector<NodeId>& leavesOf(NodeId sw) const { return fib_.leavesOf(fib_.component(sw)); }

  void onProcess(NodeId sw);
  void onMrai(uint32_t slot);
  void onDetect(uint32_t action);
  void apply(NodeId sw, uint32_t sess, const BgpInbox::Message& m);
  void select(NodeId sw, uint32_t leafPos);
  void advertise(NodeId sw, uint32_t leafPos);
  /// Sends the current route of (sw, pos) on session `i` if due. `shared`: the message record
  /// this announcement uses on every session (kInvalid until the first send creates it).
  void sendCurrent(NodeId sw, uint32_t i, uint32_t pos, uint32_t& shared);
  void post(NodeId sw, uint32_t i, uint32_t& shared, uint32_t pos, Ref path);
  void establish(LinkId l);
  void teardown(LinkId l);
  void clearSide(NodeId sw, uint32_t i);
  void killSwitch(NodeId s);
  void bootSwitch(NodeId s);
  void setFib(NodeId sw, NodeId leaf, const std::vector<PortId>& ports);
  uint32_t record(EventKind kind, uint32_t element);
  void addWork(uint32_t cause, int64_t n);
  void closeFinished();

  Simulator& sim_;
  const Topology& topo_;
  EcmpFib& fib_;
  BgpSpec spec_;
  AsnPlan asns_;
  Time detection_;
  bool started_ = false;
  bool mrai_ = false;

  std::vector<uint32_t> leafPos_;  // per node: index among its plane's leaves, or kInvalid
  std::vector<size_t> sessBase_;   // per node (+1): first session slot
  std::vector<PortId> sessPort_;   // per session slot: the switch's port
  std::vector<uint32_t> sessOf_;   // per directed port: session index at its switch, or kInvalid
  std::vector<uint8_t> slotUp_;    // per session slot: session established
  std::vector<size_t> ribBase_;    // per node: first row of its (prefix, session) block
  std::vector<size_t> locBase_;    // per node: first Loc-RIB row
  std::vector<Ref> ribIn_;         // Adj-RIB-In: per (switch, prefix, session), kNone = no route
  std::vector<uint8_t> ribOut_;    // Adj-RIB-Out flags, same rows
  std::vector<LocRib> locRib_;
  // MRAI only (empty when MRAI is 0), same rows as ribOut_:
  std::vector<Time> lastAdv_;                       // last advertisement (kNever: none)
  std::vector<Ref> lastSent_;                       // AS_PATH of the last advertisement
  std::vector<uint32_t> heldCause_;                 // cause of the advertisement MRAI holds
  std::vector<std::vector<uint32_t>> mraiPending_;  // per session slot: prefixes held
  std::vector<Time> mraiAt_;                        // per session slot: due time of the timer, or max

  AsPathTable paths_;
  std::unique_ptr<BgpInbox> inbox_;
  std::vector<TimerId> procTimer_;  // per node
  std::vector<Time> procAt_;        // per node: when the timer is armed for, or max

  std::vector<uint8_t> alive_;      // per node: switch control plane running
  std::vector<uint8_t> linkPhys_;   // per link: physically up
  std::vector<uint8_t> linkCp_;     // per link: up as far as the control plane knows
  std::vector<uint8_t> sessionUp_;  // per link
  std::vector<Action> actions_;

  uint64_t pendingWork_ = 0;
  uint64_t updatesSent_ = 0;
  uint64_t withdrawalsSent_ = 0;
  uint64_t fibChanges_ = 0;
  Time lastChange_ = Time::zero();
  StartStats start_;
  std::vector<FailureStats> failures_;  // cause c > 0 is failures_[c - 1]; cause 0 is the start
  std::vector<Cause> causes_;
  std::vector<uint32_t> openCauses_;
  uint32_t cause_ = 0;                 // the event the current work belongs to
  std::vector<PortId> scratch_;        // ports of the group being selected
  std::vector<uint32_t> scratchSess_;  // their session indices
};

}  // namespace fabricsim
