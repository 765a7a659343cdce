// MaxMinSolver: max-min fair rates of fluid flows sharing capacitated resources.
//
// Models: the rate allocation that an ideal congestion control converges to: every flow gets
// the same rate as every other flow on its bottleneck, and no flow can be given more without
// taking from one that has no more (max-min fairness), computed by progressive filling
// ("water filling"): repeatedly saturate the resource with the smallest fair share, freeze its
// flows at that share, and subtract them from the other resources on their paths.
// A flow may use a resource with a weight w > 0: it then consumes w x its rate there (a sprayed
// flow spreading evenly over parallel links uses each with weight 1/links; a pipeline moved as
// one flow, FlowFabric::sendGroup, crosses a port once per member that does, w up to their count).
// Recomputation is incremental and exact. A change can only move the flows bottlenecked where
// it happens, and through them, transitively, the flows bottlenecked where those run. A solve
// therefore starts from the flows added since the last one and the saturated resources a flow
// left. At each saturated resource it reaches it takes in the flows bottlenecked there (those
// whose last solve gave them that resource's share; a flow tied at several resources is held
// by the one that froze it), and it carries on through their resources. After a capacity
// change it takes in every flow at the resource's top rate. Every resource it touches is
// a constraint on which flows outside the set keep their rates (their use is subtracted from
// the capacity). If a touched resource becomes a bottleneck of the set below the rate of an
// outside flow on it, that flow joins the set and the solve is repeated. Everything else keeps
// its rates, which max-min leaves unchanged: their bottlenecks were not touched.
// Leaves out: per-flow rate caps other than the resources, weighted (non-equal) fairness,
// and everything transient: rates jump to the fair share at once.
// Units: capacities and rates in bytes per picosecond (double); weights dimensionless.
// Cost of a solve: O((F H + R) log R) for the F flows with H hops on the R resources of the
// dirty components.
#pragma once

#include <bit>

#include <cstdint>
#include <span>
#include <vector>

namespace fabricsim {

class MaxMinSolver {
 public:
  struct Hop {
    uint32_t resource;
    float weight;  ///< share of the flow's rate this resource carries, > 0
  };

  /// Adds a resource of `capacity` bytes/ps; returns its id (ids are dense from 0).
  uint32_t addResource(double capacity);
  size_t resources() const { return res_.size(); }
  double capacity(uint32_t r) const { return res_[r].capacity; }
  /// Changes the capacity of `r` (bytes/ps, > 0); its flows are recomputed at the next solve.
  void setCapacity(uint32_t r, double capacity);

  /// Adds a flow over `hops` (each resource at most once); its rate is 0 until the next solve.
  /// Returns its id; ids of removed flows are reused.
  uint32_t addFlow(std::span<const Hop> hops);
  /// Removes flow `f`; its resources are recomputed at the next solve.
  void removeFlow(uint32_t f);

  /// Recomputes the rates of every flow connected to a resource touched since the last solve
  /// and calls `changed(f, oldRate)` for each flow whose rate differs from before.
  template <class Changed>
  void solve(Changed&& changed) {
    if (expand_.empty() && newFlows_.empty()) return;
    ++solves_;
    while (!collectAndFill()) ++repeats_;
    commit();
    for (uint32_t f : compFlows_) {
      Flow& fl = flows_[f];
      if (fl.next != fl.rate) {
        const double old = fl.rate;
        fl.rate = fl.next;
        changed(f, old);
      }
    }
  }
  bool pending() const { return !expand_.empty() || !newFlows_.empty(); }
  /// Turns on (or off) a log of the resources each change reaches: a flow's, when it is added or
  /// removed, and a resource whose capacity changes. A component of flows sharing resources none
  /// of whose flows or capacities is in the log is the same as when the log was last cleared, and
  /// so are its max-min rates: a caller whose own results decompose by component (FlowFabric's
  /// PfcSpreading) redoes only the components the log reaches. Off by default.
  void logChanges(bool on) {
    logChanges_ = on;
    changed_.clear();
  }
  std::span<const uint32_t> changedResources() const { return changed_; }
  void clearChanges() { changed_.clear(); }
  /// True when the committed rates on `r` use its whole capacity (a bottleneck).
  bool saturated(uint32_t r) const { return res_[r].usage >= res_[r].capacity * (1 - kSaturation); }
  /// Sum of rate x weight of the flows on `r` at the last solve.
  double usage(uint32_t r) const { return res_[r].usage; }
  /// The resources the last solve recomputed or checked (valid until the next solve).
  std::span<const uint32_t> touchedResources() const { return compRes_; }
  /// The flows on `r`, each with the slot of its hop on `r` (hopIndex gives the index within
  /// the flow's hops).
  struct User {
    uint32_t flow;
    uint32_t slot;  ///< the hop's position in the solver's hop table
  };
  std::span<const User> users(uint32_t r) const { return users_[r]; }
  /// Index of `u`'s hop among its flow's hops.
  uint32_t hopIndex(const User& u) const { return u.slot - flows_[u.flow].offset; }

  double rate(uint32_t f) const { return flows_[f].rate; }
  std::span<const Hop> hops(uint32_t f) const { return {&hops_[flows_[f].offset], flows_[f].count}; }
  /// Sum of the weights of the flows on resource `r` (the load an adaptive router compares);
  /// kept only while load tracking is on (the default).
  double load(uint32_t r) const { return weightSum_[r]; }
  /// Turns the upkeep of load() on or off (off saves a memory access per hop when flows come
  /// and go); only before the first flow.
  void trackLoad(bool on);
  size_t activeFlows() const { return active_; }
  size_t peakActiveFlows() const { return peakActive_; }

  uint64_t solves() const { return solves_; }
  /// Rounds repeated because an edge resource had to join the set.
  uint64_t repeats() const { return repeats_; }
  /// Flows whose rate was recomputed, summed over solves (the work done).
  uint64_t flowsRecomputed() const { return flowsRecomputed_; }
  /// Bytes held by the solver's tables.
  size_t memoryBytes() const;

 private:
  static constexpr double kSaturation = 1e-9;
  struct Flow {
    uint32_t offset = 0;  ///< first hop in hops_
    uint32_t count = 0;
    double rate = 0;
    double next = 0;                    ///< rate being computed by the current solve
    uint32_t bottleneck = kNoResource;  ///< the resource whose share it got at its last solve
    bool alive = false;
  };
  static constexpr uint32_t kNoResource = UINT32_MAX;
  /// expand_ entries with this bit: join the flows at the resource's top rate (a capacity
  /// change), not only those bottlenecked there.
  static constexpr uint32_t kByTopRate = 0x80000000u;
  /// One round: collects the set and fills it; false when an edge resource must join the set.
  bool collectAndFill();
  void expandResource(uint32_t r, bool byTopRate);
  void commit();

  // Per resource, what every solve and every flow arrival and departure reads: 24 bytes, so
  // the table of a 100K-GPU fabric's ports stays within the last-level cache (the set search
  // visits resources in no order).
  struct Res {
    double capacity = 0;
    double usage = 0;    ///< sum of committed rate x weight
    uint32_t stamp = 0;  ///< epoch of the round that last touched it
    uint32_t slot = 0;   ///< its index in compRes_ (and scr_) in that round
  };
  // Per resource the round touched (dense, parallel to compRes_): the fill's scratch.
  struct Scratch {
    double remaining = 0;   ///< capacity left to the set
    double weight = 0;      ///< the set's unfrozen weight here
    double setUsage = 0;    ///< old rate x weight of the set's flows here
    double popShare = 0;    ///< the share it froze its flows at (when a bottleneck)
    uint32_t setUsers = 0;  ///< the set's flows here
    uint8_t kind = 0;       ///< 1 all its flows in the set, 2 unsaturated edge, 3 its top flows in the set
    uint8_t done = 0;
    uint8_t bottleneck = 0;  ///< froze at least one flow in this fill
  };
  /// Marks `r` touched in this round with `kind`; returns its scratch.
  Scratch& touch(uint32_t r, uint8_t kind);
  Scratch& scr(uint32_t r) { return scr_[res_[r].slot]; }
  std::vector<Res> res_;
  std::vector<double> weightSum_;  ///< sum of the weights of its flows (adaptive routing's load)
  bool trackLoad_ = true;
  std::vector<std::vector<User>> users_;
  std::vector<Flow> flows_;
  std::vector<Hop> hops_;
  std::vector<uint32_t> hopSlot_;                ///< per hop slot: its index in the resource's users list
  /// Free hop blocks by class: exact sizes up to kExactBlock hops (paths), powers of two
  /// beyond (a pipeline's group flow spans many paths, each of its own length: blocks of exact
  /// sizes would rarely be reused and the table would grow with every group).
  std::vector<std::vector<uint32_t>> freeHops_;
  static constexpr uint32_t kExactBlock = 64;
  static uint32_t blockSize(uint32_t n) { return n <= kExactBlock ? n : std::bit_ceil(n); }
  static uint32_t blockClass(uint32_t n) {
    return n <= kExactBlock ? n : kExactBlock + static_cast<uint32_t>(std::bit_width(n - 1));
  }
  std::vector<uint32_t> freeFlows_;
  std::vector<uint32_t> expand_;      ///< resources the next solve must expand
  std::vector<uint32_t> newFlows_;    ///< flows added since the last solve
  std::vector<uint32_t> extraFlows_;  ///< flows a round found above a new bottleneck's share
  bool logChanges_ = false;
  std::vector<uint32_t> changed_;  ///< the change log (logChanges), resources may repeat
  size_t active_ = 0;
  size_t peakActive_ = 0;
  uint64_t solves_ = 0;
  uint64_t repeats_ = 0;
  uint64_t flowsRecomputed_ = 0;

  // Scratch of one solve, indexed by resource or flow; stamped so nothing is cleared.
  uint32_t epoch_ = 0;
  std::vector<uint32_t> flowStamp_;
  std::vector<uint32_t> compRes_;
  std::vector<Scratch> scr_;
  std::vector<uint32_t> compFlows_;
  std::vector<uint8_t> frozen_;
  std::vector<uint32_t> nextBottleneck_;  ///< per flow: the bottleneck the current fill gave it
  struct HeapEntry {
    double share;
    uint32_t resource;
    uint32_t slot;
  };
  std::vector<HeapEntry> heap_;
};

}  // namespace fabricsim
