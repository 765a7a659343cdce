// The flow backend's bookkeeping of its flows (FlowFabric's state, split out of FlowFabric.h):
// an active flow in the max-min solver, a group flow (a pipeline's network edges as one fluid
// flow, FlowFabric::sendGroup) and its members, one passage of a flow or member through a link
// (the hybrid mode's view of a flow in a congestion episode), and a flow stalled by a failure.
// Plain data: FlowFabric keeps them consistent with its solver.
// Leaves out: everything they do (FlowFabric*.cpp). Units: bytes, bytes per ps (rates), Time (ps).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"
#include "sim/flow/MaxMinSolver.h"

namespace fabricsim::flowstate {

inline constexpr uint32_t kNoPace = UINT32_MAX;    ///< a flow without a pace resource (flow mode)
inline constexpr uint32_t kNoGroup = UINT32_MAX;   ///< a flow of its own, not a group flow
inline constexpr uint32_t kNoSlot = UINT32_MAX;    ///< no carried congestion-control state
inline constexpr uint32_t kNoMember = UINT32_MAX;  ///< not a group's member (a flow's own passage)

/// A flow in the max-min solver: what it has left, its rate, and (hybrid mode) its pace and
/// carried congestion-control state.
struct Active {
  double remaining = 0;  ///< bytes not yet through the bottleneck at `last`
  double rate = 0;       ///< bytes per ps
  Time last;
  Time latency;  ///< fixed delay added after the fluid part
  uint32_t record = 0;
  uint32_t dataHops = 0;    ///< hops before the ACK share
  Bytes burst = 0;          ///< the request's burst (its bytes if it has none): an episode's size
  uint64_t flowletKey = 0;  ///< flowlet routing: its queue pair's entry in flowlets_ (0: none)
  uint8_t tc = 0;
  uint16_t qp = 0;
  uint64_t orderKey = 0;  ///< in-order transfer: its connection's key in ordered_ + 1 (0: none)
  bool live = false;  ///< in the solver (not finished, not stalled)
  /// Hybrid mode: the flow's own resource in the solver (its pace), and while it is held to
  /// the pace of a congestion episode it took part in, the bytes left at which that ends.
  uint32_t pace = kNoPace;
  bool paced = false;
  uint32_t pacedSlot = 0;  ///< its place in paced_ while paced
  double paceUntil = 0;
  Time pacedAt;  ///< when its pace was set
  /// Hybrid mode: its queue pair's slot in qpCc_ (kNoSlot: never in an episode), and whether
  /// that state's rate holds it (its pace resource's capacity) while it is not paced.
  uint32_t ccSlot = kNoSlot;
  bool held = false;
  uint32_t heldSlot = 0;  ///< its place in held_ while held
  /// A held group flow: the member whose queue pair's state holds it (its NIC and share).
  uint32_t holdMember = kNoMember;
  uint32_t group = kNoGroup;  ///< a group flow (sendGroup): its members in groups_
};
/// A group flow's members: their transfers' records, path latencies and queue pairs; the
/// flow's bytes are those of the largest member (`most`).
struct GroupMember {
  uint32_t record = 0;
  Time latency;
  uint16_t qp = 0;
  double share = 1;  ///< its bytes over the largest member's: it moves share x the group's rate
  Bytes burst = 0;   ///< its request's burst (its bytes if it has none)
  uint32_t pathBegin = 0, pathEnd = 0;  ///< hybrid mode: its data hops in Group::paths
};
/// A group flow: its members, the largest member's bytes, and (hybrid mode) their paths.
struct Group {
  std::vector<GroupMember> members;
  double most = 0;
  /// Hybrid mode: each member's data hops in path order (NIC uplink first): an episode at a
  /// link sees each member crossing it as a flow of its own (its upstream port, its NIC).
  std::vector<MaxMinSolver::Hop> paths;
  /// Hybrid mode: the members crossing each of the group's merged hops (the solver's hop
  /// index h: crossings[crossBegin[h], crossBegin[h + 1]), each (member, its hop in its path),
  /// by member), so an episode finds a link's members without scanning every path.
  std::vector<uint32_t> crossBegin;
  std::vector<std::pair<uint32_t, uint32_t>> crossings;
};
/// One flow's, or one group member's, passage through a link (the episodes' view of a flow).
struct Crossing {
  std::span<const MaxMinSolver::Hop> path;  ///< its data hops in path order, NIC uplink first
  uint32_t hop = 0;                         ///< the link's place in `path`
  double share = 1;                         ///< its bytes per byte of the solver's flow
  Bytes burst = 0;
  Time latency;
  uint32_t record = 0;
  uint16_t qp = 0;
  uint32_t member = kNoMember;  ///< a group's member, by index
};

/// A flow that lost packets at a failure and waits to resend them.
struct Stalled {
  uint32_t record = 0;              ///< its transfer's slot (not to be read once ackOnly: delivered)
  uint32_t srcGpu = 0, dstGpu = 0;  ///< its transfer's, kept for the ACK-only wait
  Bytes bytes = 0;
  double remaining = 0;  ///< bytes to (re)send, the lost ones included
  double rate = 0;       ///< its rate when it stalled (bytes/ps): how fast it kept sending
  double lost = 0;       ///< bytes it had in flight when it stalled
  Bytes burst = 0;
  uint8_t tc = 0;
  uint16_t qp = 0;
  uint32_t timeouts = 0;   ///< consecutive retransmission timeouts without progress
  Time since;              ///< when it stalled
  Time due = Time::max();  ///< its pending event (NAK recovery or timer), or max
  bool nak = false;        ///< the pending event is a NAK-triggered resend
  bool blackhole = false;  ///< lost to a switch without a route (else to a dead link)
  /// Delivered, but its ACKs are lost (their path is broken): the sender retransmits at
  /// each timeout until an ACK gets through or the retry limit fails the connection.
  bool ackOnly = false;
  bool used = false;
};

}  // namespace fabricsim::flowstate
