// PfcSpreading: fluid rates of flows in lossless classes without congestion control, where a
// congested switch egress pauses the ports feeding it (PFC, or InfiniBand credits) and the pause
// spreads upstream to the NICs, slowing the victim flows that queue behind the congested ones.
//
// Models: progressive filling (max-min water filling, as MaxMinSolver) over every flow and the
// resources (directed ports) it uses, with one rule added. When the fill saturates a switch
// egress `r` at share s and freezes there flows of a pausing class T (a lossless class: PFC on
// and T in pfc.classes, or any class on InfiniBand; and no congestion control, so senders push
// at line rate and only pauses hold them):
//   - the egress is a root of congestion: its queue grows until the ingress ports feeding it
//     pass XOFF, so every port upstream of `r` on each of those flows' paths is paused for T;
//   - a paused port is a FIFO per priority: while backlogged it serves its arrivals in their
//     proportion, so every flow of class T crossing it that is still unfrozen (it could go
//     faster) is slowed with the congested flows it queues with: it freezes at s as well (a
//     victim). A paused NIC uplink stops all the NIC's QPs of class T; its round-robin
//     scheduler then gives each of them the same rate as the congested QP: s again;
//   - each victim's own packets now back up at the paused port, so the ports upstream of it on
//     the victim's path are paused too, and so on to the NICs (transitively).
// Flows frozen earlier at a lower rate (limited elsewhere) do not spread a pause: their ingress
// share of the paused queue stays below the others' and their ingress does not reach XOFF.
// Lossy flows and flows of other classes take their max-min shares; capacity a paused flow
// leaves idle goes to them (the fill continues over the unfrozen flows). Without any pause the
// result is the max-min fair allocation.
// Leaves out: PFC's per-ingress-port sharing at a congested egress (each paused ingress ends up
// with an equal share of it, so flows arriving on a crowded ingress get less than max-min gives
// them; here the lossless flows at a root share it per flow); the pause dynamics (XOFF/XON
// cycles, pause frames, headroom, buffer occupancy and queueing delay); scheduling among
// traffic classes (each class takes its max-min share of a port); PFC storms and deadlocks;
// back-pressure under a congestion control (its converged rates keep queues below XOFF; the
// pauses of its transients are left out).
// Units: capacities and rates in bytes per picosecond (double); weights dimensionless.
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
  };
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
  void freeze(uint32_t f, double share);
  /// Pauses, for flow f's class, every port before hop `hop` on f's data path; freezes the
  /// victims there at `share` and spreads on from them.
  void spread(uint32_t f, uint32_t hop, double share);

  std::vector<Flow> flows_;
  std::vector<Hop> hops_;
  std::vector<Res> res_;
  std::vector<uint32_t> slotOf_;  ///< caller's flow id -> slot
  std::vector<uint32_t> localOf_, stamp_;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> userStart_;  ///< CSR of users per resource
  std::vector<User> users_;
  std::vector<uint32_t> cursor_;                     ///< scratch: filling users_
  std::vector<User> congested_;                      ///< scratch: pausing flows frozen at a root
  std::vector<std::pair<uint32_t, uint32_t>> work_;  ///< (flow slot, hop) whose upstream pauses
  struct HeapEntry {
    double share;
    uint32_t local;
  };
  std::vector<HeapEntry> heap_;
  uint32_t pausedPorts_ = 0;
  uint32_t victims_ = 0;
};

}  // namespace fabricsim
