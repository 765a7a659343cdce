// PacketEpisodeModel: the efficiency of a congestion episode measured by the packet backend, for
// the hybrid backend (flow-level fabric, packet-level congestion points).
//
// Models: each episode the flow backend reports (F flows through K upstream ports converging on one
// switch egress of line rate C, each port able to bring its flows at rate A, the largest S bytes
// left to send and the others by their size quartiles, one-way path latency L) is replayed at
// packet level on the shape of converging traffic: K senders, one on each of K upstream switches,
// whose uplinks merge at one switch, whose egress of rate C is the episode's link; sender k holds
// its share of the F flows (as queue pairs of its own, each with its own congestion-control state,
// round-robin in the NIC), and each flow goes to its own receiver. Host links run at A, switch
// links at C, every link with latency L/4; the switches (buffer, ECN, PFC, credits), NICs and
// congestion control are exactly the topology file's (DCQCN, IB CC or none; RoCEv2 or InfiniBand).
// The queue pairs' congestion control starts at the real NICs' line rate N, not at A: a NIC's
// scheduler gives a QP only its share of the port, so the first cuts of a QP at line rate change
// nothing while the queue grows. The upstream switches do not queue (a port that would is an
// episode of its own at the flow level). Flows the link already holds to a pace (background B) are
// one more sender on an upstream switch of its own, cabled at B, with one queue pair per paced flow
// (Fb of them, at most 8) whose congestion control starts at B/Fb, sending for as long as the
// episode lasts: at packet level the new queue marks and cuts them too (one queue pair standing for
// them all would be cut as hard as one flow at B, where marks spread over Fb flows cut each less
// often). The flows start together, flow i (of F sorted by size) with its quartile's size (flows
// that were already sending when the others came have less left: at packet level a staggered
// collision is the synchronous one with those sizes); the efficiency is the shape's fluid makespan
// (the bytes through C - B, or the busiest sender's bytes through A, whichever is longer) over the
// time the last byte took beyond the unloaded path latency: what congestion control loses, not what
// the rates already impose. Each flow's own time gives its own efficiency (its bytes' time at its
// starting fluid share, the lower of (C - B)/F and A over the busiest sender's flows, over its
// time), pooled over the seeds and sorted by the flow's size, then efficiency: flowEfficiencies()
// and flowQuartiles(); with each, the state its queue pair's congestion control was left in at the
// end of its run (copied, on a clock starting when the flows did): flowStates(). The background's
// efficiency is the payload its queue pairs delivered by the episode's last byte (64 KiB messages
// posted at twice its rate: it never waits for data) over B times that time, over the seeds:
// backgroundEfficiency(). Episodes are quantized (K and F exact to 16, then 4 steps per octave, at
// most 128, F/K at most 8; C to the nearest eighth of N, at least one eighth; B to the nearest
// eighth of C, at most seven, Fb exact up to 8; A to the nearest eighth of C, raised by eighths
// where the quantized flows would no longer overload C: an episode's demand K A + B is never
// rounded down to C or below; S at two steps per octave; at most 1 GiB per episode; the size
// quartiles to the nearest quarter of S, at least one; L to 0.25 us; what other queues of the
// switch hold of its buffer to the nearest 32nd of it, at most 28). What those queues hold is
// taken out of the shape's switch buffer; the queue the episode itself builds (its link's mean
// queue as its arriving packets found it, queueBytes()) is what it holds of its switch's buffer
// for the others; where the episode's runs alone left more room under every dynamic threshold than
// that (Measured::bufferSlack), the held buffer changes no admission and the episode alone
// answers. Each distinct quantized
// episode is simulated with `episodes.seeds` seeds (the packet backend's random choices: ECN
// marking, drop victims, DCQCN's timers' phases; an outcome can be bimodal, e.g. two 16 MiB DCQCN
// flows at 400G take 1.04 or 1.88 times the fluid time as a CNP does or does not cut them), each
// run on its own simulator, the seeds on the machine's cores (setThreads; the runs are the same on
// any number of threads); where the first max(replicas, 3) runs give every flow the same time and keep no
// congestion-control state, the outcome does not depend on the seed and the rest are not run
// (seedDependent() counts the episodes that do). The
// answer is the fluid time over the seeds' mean packet time (the harmonic mean of their
// efficiencies: the capacity that gives the expected drain time). The cache is keyed by the
// quantized episode alone, so the answer does not depend on which raw episode, or in which order,
// first asked for it. A replica r (setReplica) answers from the r-th of `episodes.replicas` groups
// of the seeds (seed k in group k mod replicas) instead: the hybrid backend reruns the flow level
// once per group, and the groups' spread is the confidence interval of its results (batch means).
// The collectives of a training job repeat the same episodes on every rail, ring step and
// iteration. Leaves out: what couples congestion points in a real fabric: PFC pauses and credit
// stalls spreading to upstream switches and their victim flows, CNPs and ECN marks caused by other
// congestion points, flows joining or leaving in the middle of an episode (each episode starts
// synchronously), and, of the buffer other ports of the same switch hold, its timing (the flow
// level gives their mean queues over the episode's time). Units: Bytes, BitRate, Time
// (ps); wall time in seconds.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cc/CongestionControl.h"
#include "sim/config/TopologySpec.h"
#include "sim/flow/CongestionEpisodeModel.h"

namespace fabricsim {

class PacketEpisodeModel final : public CongestionEpisodeModel {
 public:
  /// `spec`: the fabric whose switches, NICs and congestion control the episodes use (copied);
  /// its `episodes.seeds` is the number of seeds per episode. `seed`: the run's seed (the first
  /// of the episode seeds).
  PacketEpisodeModel(const TopologySpec& spec, uint64_t seed);

  /// Over every seed (replica 0), or over replica r's group of seeds.
  double efficiency(const CongestionEpisode& episode) override;
  /// Pooled over the same seeds as efficiency() answered from.
  std::span<const double> flowEfficiencies() const override { return last_.flows; }
  /// Aligned with flowEfficiencies(): each flow's queue pair as its run left it.
  std::span<const QueuePairState> flowStates() const override { return last_.states; }
  std::span<const uint32_t> flowQuartiles() const override { return last_.quartiles; }
  /// Over the same seeds: the background's delivered bytes over its rate times the episode's time.
  double backgroundEfficiency() const override { return last_.background; }
  /// Over the same seeds: the mean queue the episode's arriving packets found at its link.
  double queueBytes() const override { return last_.queue; }
  /// 0: answer from every seed; 1..replicas(): from that group of the seeds.
  void setReplica(int replica);

  class View;
  /// What one run of the flow level asks: the model's measurements (shared, simulated on demand)
  /// answered from one replica's group of seeds (0: every seed), with answers of its own. The
  /// views of one model may ask from different threads at once; the model outlives them.
  std::unique_ptr<View> view(int replica);
  int seeds() const { return seeds_; }
  int replicas() const { return replicas_; }
  /// Every episode's queue pairs carry congestion-control state out of it (the fabric has
  /// congestion control): every episode then counts as seed-dependent (seedDependent()).
  bool carriesState() const { return spec_.congestionControl.algorithm != "none"; }

  /// The episode actually simulated for `episode` (quantized), on switches of `buffer` bytes
  /// (0: what other queues hold of it is left out).
  static CongestionEpisode quantize(const CongestionEpisode& episode, Bytes buffer = 0);

  /// What one simulated episode measured.
  struct Measured {
    double efficiency = 1;
    double packetTimeS = 0;  ///< last byte's time beyond the unloaded path latency
    double fluidTimeS = 0;
    std::vector<double> flowTimesS;  ///< each flow's last byte beyond the unloaded path latency
    std::vector<double> flowFluidS;  ///< each flow's bytes at its fluid share when the flows start
    double backgroundBytes = 0;      ///< payload the background delivered by the episode's last byte
    double backgroundIdeal = 0;      ///< what it would have delivered at its rate in packetTimeS
    /// Mean queue at the episode's link as its arriving data packets found it (bytes; within
    /// the 19% of QueueHistogram's buckets).
    double queueBytes = 0;
    /// How much smaller every switch's shared pool could have been without changing one
    /// admission of the run (bytes): its peak queues, added up per switch, left that much room
    /// under every dynamic threshold. 0 with PFC (its thresholds are per ingress) or credits.
    double bufferSlack = 0;
    uint64_t ecnMarks = 0;
    uint64_t packetsDropped = 0;
    uint64_t pfcPauseFrames = 0;
    /// Each flow's queue pair (QP i: flow i) as the run left it, on a clock starting when the
    /// flows did; null without congestion control.
    std::shared_ptr<const CongestionControl> queuePairs;
  };
  /// Simulates `episode` as given (not quantized) on the packet backend with `seed`.
  Measured simulate(const CongestionEpisode& episode, uint64_t seed) const;
  /// The seed of run `k` (0-based) of every episode.
  uint64_t episodeSeed(int k) const;
  /// Threads an episode's seeds run on (default: the machine's cores). The runs, and so every
  /// answer, are the same on any number.
  void setThreads(int threads);
  int threads() const { return threads_; }

  /// What the hybrid backend leaves out, for the results.
  static std::vector<std::string> unmodelledEffects();

  // The counters and the episodes, read under the cache's lock (replicas may be asking).
  uint64_t queries() const { return locked(queries_); }
  /// Simulated episodes whose outcome depends on the seed. None: every replica's rerun of the
  /// flow level would repeat the run (each answer it would get is the run's), so none is needed.
  uint64_t seedDependent() const { return locked(seedDependent_); }
  size_t simulated() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return cache_.size();
  }
  double packetWallSeconds() const { return locked(wallSeconds_); }
  /// The simulated episodes, most used first (at most `limit`), for the results.
  nlohmann::json episodesJson(size_t limit) const;

 private:
  // K, F, A, S, C, L, N, B, Fb, the size quartiles in quarters of S (4 bits each, smallest first),
  // the buffer held by other queues in 32nds of the switch's
  using Key = std::tuple<uint32_t, uint32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, uint32_t,
                         uint32_t, uint32_t>;
  /// Quartile q's size in quarters of the largest, of a quantized episode.
  static uint32_t sizeLevel(const CongestionEpisode& q, uint32_t quartile);
  /// The quartile of flow i (0-based) of n flows sorted by size.
  static uint32_t quartileOf(uint32_t i, uint32_t n) { return 4 * i / n; }
  struct Entry {
    std::vector<Measured> runs;  ///< one per seed
    double mean = 1;             ///< efficiency over every run (fluid time / mean packet time)
    std::vector<double> groups;  ///< the same over each replica's group of runs
    /// The flows' efficiencies (fluid makespan / flow time), ascending: [0] over every run,
    /// [r] over replica r's group.
    std::vector<std::vector<double>> flows;
    std::vector<std::vector<QueuePairState>> states;  ///< aligned with `flows`
    std::vector<std::array<uint32_t, 8>> quartiles;   ///< flowQuartiles() of each of `flows`
    double halfWidth = 0;                             ///< 95% confidence half-width of `mean` from the groups
    /// The background's efficiency (delivered over ideal bytes): [0] over every run, [r] over
    /// replica r's group.
    std::vector<double> background;
    std::vector<double> queue;  ///< the runs' mean queueBytes: [0] over every run, [r] over replica r's group
    double bufferSlack = 0;     ///< the least of the runs' bufferSlack
    /// Its first runs were identical (no state to carry): the other seeds were not run, and
    /// every replica group answers with them all.
    bool seedIndependent = false;
    uint64_t uses = 0;  ///< times the flow backend asked for it
    double wallS = 0;   ///< wall time its packet runs took, seconds
  };
  TopologySpec spec_;
  uint64_t seed_;
  int seeds_;
  int replicas_;
  int threads_;
  int replica_ = 0;
  /// The per-flow answers about the last episode asked for.
  struct Answer {
    std::span<const double> flows;           ///< flowEfficiencies()
    std::span<const QueuePairState> states;  ///< flowStates()
    std::span<const uint32_t> quartiles;     ///< flowQuartiles()
    double background = 1;                   ///< backgroundEfficiency()
    double queue = 0;                        ///< queueBytes()
  };
  Answer last_;
  /// The cache's entry for quantized episode `q` (key `key`), simulated first (outside `lock`,
  /// which holds mutex_) if no thread has; waits for a thread simulating it.
  Entry& entry(const Key& key, const CongestionEpisode& q, std::unique_lock<std::mutex>& lock);
  static Key keyOf(const CongestionEpisode& q, Bytes buffer);
  /// The episode's efficiency from replica `replica`'s seeds, its per-flow answers into `out`
  /// (simulated first if new). Thread-safe.
  double answer(const CongestionEpisode& episode, int replica, Answer& out);
  friend class View;
  mutable std::mutex mutex_;  ///< guards the cache, its counters and inFlight_
  std::set<Key> inFlight_;    ///< episodes being simulated (outside the lock)
  std::condition_variable simulated_;  ///< notified as one enters the cache
  /// Simulates quantized episode q with every seed (or the first, where they agree) and pools
  /// its answers. Thread-safe: touches nothing shared.
  Entry measure(const CongestionEpisode& q) const;
  template <class T>
  T locked(const T& x) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return x;
  }
  /// Runs `q` with the seeds from..to-1 (episodeSeed), on up to threads_ threads, in seed order.
  std::vector<Measured> runSeeds(const CongestionEpisode& q, int from, int to) const;
  /// Fluid time over mean packet time of runs[k] for k % groups == group.
  static double harmonic(const std::vector<Measured>& runs, int group, int groups);
  /// The background's delivered over ideal bytes over runs[k] for k % groups == group.
  static double backgroundKept(const std::vector<Measured>& runs, int group, int groups);
  /// Every run gave every flow the same time and the background the same bytes, and none kept
  /// congestion-control state.
  static bool identical(const std::vector<Measured>& runs);
  /// Sum of num over sum of den over runs[k] for k % groups == group, in [1e-3, 1] (1 when den is 0).
  static double ratio(const std::vector<Measured>& runs, int group, int groups, double Measured::*num,
                      double Measured::*den);
  std::map<Key, Entry> cache_;
  uint64_t queries_ = 0;
  uint64_t seedDependent_ = 0;
  double wallSeconds_ = 0;
};

/// One run's questions to a PacketEpisodeModel (see view()), counted.
class PacketEpisodeModel::View final : public CongestionEpisodeModel {
 public:
  View(PacketEpisodeModel& model, int replica);
  double efficiency(const CongestionEpisode& episode) override {
    ++queries_;
    return model_.answer(episode, replica_, last_);
  }
  std::span<const double> flowEfficiencies() const override { return last_.flows; }
  std::span<const QueuePairState> flowStates() const override { return last_.states; }
  std::span<const uint32_t> flowQuartiles() const override { return last_.quartiles; }
  double backgroundEfficiency() const override { return last_.background; }
  /// Over the same seeds: the mean queue the episode's arriving packets found at its link.
  double queueBytes() const override { return last_.queue; }
  /// Episodes this view was asked about.
  uint64_t queries() const { return queries_; }

 private:
  PacketEpisodeModel& model_;
  int replica_;
  Answer last_;
  uint64_t queries_ = 0;
};

}  // namespace fabricsim
