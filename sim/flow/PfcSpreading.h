// PfcSpreading: fluid rates of flows in lossless classes without congestion control, where a
// congested switch egress pauses the ports feeding it (PFC, or InfiniBand credits) and the pause
// spreads upstream to the NICs, slowing the victim flows that queue behind the congested ones.
//
// Models: progressive filling (max-min water filling, as MaxMinSolver) over every flow and the
// resources (directed ports) it uses, with PFC's rules added. When the fill saturates a switch
// egress `r` holding unfrozen flows of a pausing class T (a lossless class: PFC on and T in
// pfc.classes, or any class on InfiniBand; and no congestion control, so senders push at line
// rate and only pauses hold them), `r` is a root of congestion:
//   - its queue grows until the ingress ports feeding it pass XOFF; each paused ingress then
//     holds about XOFF in the queue, so the FIFO serves the paused ingress ports equally. The
//     class's capacity left at `r` is shared per ingress port (the hop before `r`), each
//     ingress's share again per ingress of that upstream port, and so on to the NICs, whose
//     round robin shares per QP: a hierarchical water fill, where a flow can take the fair
//     share of its resources other than the switch ports between its NIC and `r` (its NIC's,
//     and downstream ones'), a port upstream at most the capacity it has left, and an ingress
//     offering less than an equal share keeps what it offers;
//   - ties: when a switch egress downstream of `r` on such a flow's path saturates at the same
//     share, the queue builds there (r only feeds it): the last of them is the root;
//   - a flow held below what its NIC offers is paused: every port upstream of the root on its
//     path is paused for T;
//   - victims: a paused port is a FIFO per priority. A paused switch port serves its paused
//     ingress ports equally, so the flows of class T arriving there on another ingress than the
//     held flows get together at most what a held ingress passes (its held flows, and its other
//     flows of the class, slowed with them upstream, at the held flows' mean); a flow arriving
//     on the same ingress as held flows is judged at that upstream port (paused too). A paused NIC stops all
//     its QPs of class T, and its round robin then sends each no faster than the held QP;
//   - each victim's packets back up at the paused port, so the ports upstream of it on its
//     path are paused in turn, and so on to the NICs (transitively).
// A flow held below the root's share elsewhere (frozen before) does not pause anything: its
// ingress's share of the queue stays below the others' and never reaches XOFF. Lossy flows and
// flows of other classes take their max-min shares; capacity a paused flow leaves idle goes to
// them (the fill continues over the unfrozen flows). Without any pause the result is max-min.
// Leaves out: the pause dynamics (XOFF/XON cycles, pause frames, headroom, buffer occupancy and
// queueing delay); the ingress structure of split flows (spray, adaptive: each is a group of its
// own at a root, and only its NIC is taken as upstream); a port paused a second time by another
// root (its victims were judged at the first); scheduling among traffic classes (each class
// takes its max-min share of a port); PFC storms and deadlocks; back-pressure under a
// congestion control (its converged rates keep queues below XOFF; the pauses of its transients
// are left out).
// Units: capacities and rates in bytes per picosecond (double); weights dimensionless.
// Cost: a fill from scratch over the flows given, O(F H log R) plus the sorting of each root's
// ingress tree. The fill decomposes over connected components (flows sharing a resource): FlowFabric
// gives it, at each recomputation, only the components that changed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/flow/MaxMinSolver.h"

namespace fabricsim {

class PfcSpreading {
 public:
  /// Classes whose flows pause upstream (bit per traffic class) under `spec`: the PFC classes
  /// of a RoCEv2 fabric with PFC on, every data class of an InfiniBand fabric (credits); none
  /// with a congestion control or on a lossy fabric.
  static uint8_t pausingClasses(const TopologySpec& spec);

  /// Starts a new fill over resources with ids below `resources`.
  void clear(size_t resources);
  /// Adds flow `id` (ids need not be dense) over `hops` (the resources it uses, each once, with
  /// weights in (0, 1]), of which the first `dataHops` carry its data in path order (the rest,
  /// e.g. its ACKs' share, only consume capacity); `pausing`: its class pauses upstream.
  /// `ordered` false: the data hops after the first are a split over parallel paths in no
  /// order (spray, adaptive); only the first (its NIC uplink) is taken as upstream of the others.
  void addFlow(uint32_t id, std::span<const MaxMinSolver::Hop> hops, uint32_t dataHops, uint8_t tc,
               bool pausing, bool ordered = true);
  /// Runs the fill: `capacity(r)` gives resource r's capacity (bytes/ps, > 0), `canRoot(r)` whether
  /// r is a switch egress (a queue that can fill and pause; NIC uplinks are not). Returns true if
  /// any port was paused (else the rates are the max-min fair ones).
  template <class Capacity, class CanRoot>
  bool solve(Capacity&& capacity, CanRoot&& canRoot) {
    for (uint32_t l = 0; l < res_.size(); ++l) {
      res_[l].remaining = capacity(res_[l].id);
      res_[l].root = canRoot(res_[l].id);
    }
    return fill();
  }
  /// Rate of flow `id` after solve() (bytes/ps).
  double rate(uint32_t id) const { return flows_[slotOf_[id]].rate; }
  /// Ports paused by the last solve (per class) and flows frozen there as victims.
  uint32_t pausedPorts() const { return pausedPorts_; }
  uint32_t victims() const { return victims_; }

 private:
  struct Flow {
    uint32_t offset = 0;  ///< first hop in hops_
    uint32_t count = 0;
    uint32_t dataHops = 0;
    uint8_t tc = 0;
    bool pausing = false;
    bool ordered = true;
    bool frozen = false;
    double rate = 0;
    double cap = kNoCap;  ///< victim's cap from a paused port (bytes/ps)
    uint32_t capHop = 0;  ///< the hop of that port
  };
  static constexpr double kNoCap = 1e300;
  static constexpr uint32_t kCapBit = 0x80000000u;  ///< heap ids: a flow's cap, not a resource
  static constexpr uint32_t kNoKey = UINT32_MAX;
  struct Hop {
    uint32_t local;  ///< dense resource index
    float weight;
  };
  struct Res {
    uint32_t id = 0;         ///< the caller's resource id
    double remaining = 0;    ///< capacity left to unfrozen flows
    double weight = 0;       ///< unfrozen weight on it
    uint8_t pausedMask = 0;  ///< classes paused here
    bool root = false;
    bool done = false;
  };
  struct User {
    uint32_t flow;  ///< slot in flows_
    uint32_t hop;   ///< index among the flow's hops
  };
  bool fill();
  /// Freezes flow slot f at `rate`; above the fill's level, the shares of its resources shrink
  /// and go back on the heap.
  void freeze(uint32_t f, double rate);
  void push(double share, uint32_t id);
  /// Root `l` saturated at per-flow share `share`: its flows' hierarchical shares, then pauses.
  void rootEvent(uint32_t l, double share);
  /// Shares `amount` among cand_[idx] per ingress `depth` hops upstream of the root (xs_ out).
  void allocate(std::vector<uint32_t> idx, uint32_t depth, double amount);
  /// What the candidates idx, which share their key at `depth`, can take there: a flow its
  /// cap; a port the sum over its ingress groups, within the capacity it has left.
  double demandOf(std::vector<uint32_t> idx, uint32_t depth);
  /// Key of candidate i at `depth`: the port `depth` hops before the root on its path, or a
  /// key of its own (a leaf).
  uint32_t keyOf(uint32_t i, uint32_t depth) const;
  /// Pauses the ports upstream of the frozen flows in work_ (each with the hop it is held at),
  /// caps or freezes the victims there, and goes on from those frozen, at fill level `level`.
  void spread(double level);
  void capVictim(uint32_t g, uint32_t hop, double cap, double level);

  std::vector<Flow> flows_;
  std::vector<Hop> hops_;
  std::vector<Res> res_;
  std::vector<uint32_t> slotOf_;  ///< caller's flow id -> slot
  std::vector<uint32_t> localOf_, stamp_;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> userStart_;  ///< CSR of users per resource
  std::vector<User> users_;
  std::vector<uint32_t> cursor_;             ///< scratch: filling users_
  std::vector<User> cand_;                   ///< scratch: pausing flows at a root
  std::vector<double> caps_, offered_, xs_;  ///< their caps, what they offer, their shares
  struct Acc {
    uint8_t tc;
    uint32_t port, key;  ///< a paused port and the ingress (hop before it) of a held flow
    double rate;
  };
  std::vector<Acc> acc_;
  struct Victim {
    uint32_t ingress, flow, hop;
  };
  std::vector<Victim> vic_;
  std::vector<std::pair<uint32_t, uint32_t>> next_;
  double level_ = 0;                                 ///< the fill's current level (bytes/ps)
  std::vector<std::pair<uint32_t, uint32_t>> work_;  ///< (flow slot, hop) whose upstream pauses
  struct HeapEntry {
    double share;
    uint32_t id;  ///< a resource's dense index, or kCapBit | a flow slot
  };
  std::vector<HeapEntry> heap_;
  uint32_t pausedPorts_ = 0;
  uint32_t victims_ = 0;
};

}  // namespace fabricsim
