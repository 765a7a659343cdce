// Experiment: one `fabricsim run`: topology, routing, backend and workloads bound together,
// simulated to completion, and turned into the results document of DESIGN.md section 7.
//
// Models: loading and validating every input before anything runs (all problems reported as
// InputError), building the fabric, running the simulation until the last transfer has been
// delivered and the network has drained, and summarising jobs, flows and the network. A run that
// cannot complete (a connection exhausted its retries, or the queue drained with transfers that
// nothing can recover) ends there: its results carry status "failed", the failures, and null
// completion times for the jobs that did not finish.
// Jobs of every kind share the fabric: patterns on their GPU ranges, collective sweeps,
// training jobs and trace replays on GPUs from a GpuAllocator. For jobs that run a JobTrace
// the results add iteration times, compute, exposed communication (JCT minus the JCT of the
// same trace with zero-time communication, i.e. compute plus pipeline bubble) and a table of
// the collectives.
// Hybrid runs with episodes.replicas >= 2 have one replica per group of the episode seeds (the
// same run with every episode's efficiency from that group alone), on threads of their own
// beside the run where its episodes carry congestion-control state (all of them then depend on
// the seed), else after it and only if some episode did; the jobs' JCT, iteration time and
// exposed communication get a 95% confidence interval from the replicas' spread (Student's t
// over the groups: batch means).
// The backend is the packet-level one (the reference for fidelity), the flow-level one (max-min
// fair fluid rates, for scale) or the hybrid (flow level, with each congested link's efficiency
// from a packet-level simulation of its congestion episode under the fabric's congestion
// control); the results say which and what it leaves out.
// Leaves out: sweeps (runtime/SweepRunner runs one Experiment per point in its own process).
// Units: results in seconds, microseconds and bytes as their key names say.
#pragma once

#include <cstdio>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/MemoryEstimate.h"
#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/flow/FlowFabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/report/TimelineWriter.h"
#include "sim/routing/BgpControlPlane.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/runtime/FailureInjector.h"
#include "sim/runtime/GpuAllocator.h"
#include "sim/runtime/PacketEpisodeModel.h"
#include "sim/runtime/Probe.h"
#include "sim/runtime/RunOptions.h"
#include "sim/runtime/TimelineRecorder.h"
#include "sim/topology/Topology.h"
#include "sim/workload/CollectiveSweep.h"
#include "sim/workload/JobExecutor.h"
#include "sim/workload/JobTrace.h"
#include "sim/workload/Workload.h"

namespace fabricsim {

class Experiment {
 public:
  /// Reads and validates every input; throws InputError on bad input.
  explicit Experiment(RunOptions options);
  /// A replica of a hybrid run: the same inputs, sharing `episodes` (its cache of packet-level
  /// measurements), whose congestion episodes answer with seed `replica`'s measurement.
  Experiment(RunOptions options, std::shared_ptr<PacketEpisodeModel> episodes, int replica);
  ~Experiment();

  /// The hybrid backend's episode model (its cache of packet-level measurements), for replicas;
  /// null on other backends.
  std::shared_ptr<PacketEpisodeModel> episodeModel() const { return episodes_; }
  /// Runs the simulation to completion, or until a connection fails (failed()).
  void run();
  /// A connection gave up (transport retries exhausted) or the run stalled with transfers
  /// outstanding: the workloads did not complete. The results say so (status, failures).
  bool failed() const { return !connectionFailures_.empty(); }
  const std::vector<TransferFailure>& failures() const { return connectionFailures_; }
  /// The results document (valid after run()).
  const nlohmann::json& results() const;
  /// One line for `run --check`: what was built and the run's estimated peak memory.
  std::string checkSummary() const;
  /// A short human-readable table of the results.
  /// Problems the run found that do not stop it (lossless drops, with the port), one line each.
  std::vector<std::string> warnings() const;
  void printSummary(std::FILE* out) const;
  /// Writes the --timeline file (after run()); no-op without --timeline.
  void writeTimeline() const;
  /// Reads the process's peak RSS again into the results' summary.peak_rss_bytes (after run());
  /// call it once every output has been written, so the figure includes writing them.
  void refreshPeakRss();

  /// One job on the fabric and what the results need to know about it.
  struct Job {
    const WorkloadSpec* spec = nullptr;
    Workload* workload = nullptr;
    JobExecutor* executor = nullptr;   ///< training and trace jobs
    CollectiveSweep* sweep = nullptr;  ///< collective jobs
    std::shared_ptr<const JobTrace> trace;
    std::vector<uint32_t> gpus;
    CollectiveTuning tuning;  ///< what its collectives use
    Time computeOnly;         ///< JCT with zero-time communication (executor jobs)
  };
  const std::vector<Job>& jobs() const { return jobs_; }

  const Topology& topology() const { return *topo_; }
  const TopologySpec& topologySpec() const { return spec_; }
  Simulator& simulator() { return *sim_; }
  Fabric& fabric() { return *fabric_; }
  /// The packet backend, or nullptr when the run uses another.
  PacketFabric* packetFabric() { return packet_; }
  /// The flow backend, or nullptr when the run uses another.
  FlowFabric* flowFabric() { return flow_; }

 private:
  static std::vector<std::string> warnings_(const NetworkCounters& net);
  void checkSupported() const;
  void createJobs();
  nlohmann::json jobJson(const Job& job) const;
  /// jobs[i].confidence: the job's figures with their interval from the replicas.
  nlohmann::json replicaInterval(size_t job) const;

  RunOptions options_;
  TopologySpec spec_;
  std::vector<WorkloadSpec> workloadSpecs_;
  /// The run's estimated peak memory (links, ranks, copies at once) and the limit it was held to.
  struct MemoryCheck {
    MemoryEstimate estimate;
    int64_t links = 0, ranks = 0;
    int64_t programRanks = 0;  ///< ranks of jobs that run programs (runsPrograms), what the estimate counts
    int copies = 1;
    uint64_t limit = 0;  ///< bytes; 0: unknown (not checked)
  };
  MemoryCheck memory_;
  /// Estimates the run's memory from its specs and refuses it (InputError) when it exceeds
  /// --max-memory or, by default, the machine's memory.
  void checkMemory();
  std::unique_ptr<Topology> topo_;
  std::unique_ptr<Simulator> sim_;
  std::unique_ptr<EcmpFib> fib_;
  std::unique_ptr<EcmpFib> referenceFib_;  ///< the intact fabric's tables, when the live ones change
  std::unique_ptr<Fabric> fabric_;
  PacketFabric* packet_ = nullptr;                ///< fabric_ when the backend is packet
  FlowFabric* flow_ = nullptr;                    ///< fabric_ when the backend is flow or hybrid
  std::shared_ptr<PacketEpisodeModel> episodes_;  ///< hybrid: congestion episodes at packet level
  std::unique_ptr<PacketEpisodeModel::View> episodeView_;  ///< what this run's flow level asks
  int replica_ = 0;                               ///< hybrid: 0 for the run, 1..episodes.replicas for its replicas
  /// Per replica, per job: JCT, mean iteration time and exposed communication (s; NaN: none).
  struct ReplicaJob {
    double jct = 0, iteration = 0, exposed = 0;
  };
  std::vector<std::vector<ReplicaJob>> replicas_;
  double replicaWallSeconds_ = 0;
  /// No episode depended on its seed: the replicas are this run's figures, not reruns.
  bool replicasRepeated_ = false;
  unsigned replicaThreads_ = 0;  ///< threads the replicas ran on
  uint64_t runQueries_ = 0;  ///< episode queries of the run itself (the replicas' not counted)
  /// The replicas of a hybrid run in progress, each on a thread of its own (ReplicaRuns).
  struct ReplicaRuns;
  std::unique_ptr<ReplicaRuns> replicaRuns_;
  /// Starts the replicas of a hybrid run: with the run itself where its episodes carry
  /// congestion-control state (so every one depends on the seed), else after it.
  void startReplicas();
  /// Waits for them and keeps their figures (none if the run itself failed).
  void finishReplicas();
  /// The job's figures for the replica table.
  ReplicaJob replicaFigures(const Job& job) const;
  std::vector<std::unique_ptr<Workload>> workloads_;
  std::vector<Job> jobs_;
  std::unique_ptr<TimelineWriter> timeline_;
  std::vector<std::unique_ptr<TimelineRecorder>> recorders_;
  std::vector<std::unique_ptr<Probe>> probes_;
  std::unique_ptr<BgpControlPlane> bgp_;
  std::unique_ptr<IbSubnetManager> ibSm_;  ///< InfiniBand subnet-manager routing (ib-sm)
  std::unique_ptr<FailureInjector> failures_;
  Time origin_;  ///< when the workloads start (after BGP's initial convergence)
  double wallSeconds_ = 0;
  double buildSeconds_ = 0;
  double bgpStartWallSeconds_ = 0;  // initial BGP convergence, host wall clock
  double bgpStartCpuSeconds_ = 0;   // and host CPU time of this process
  nlohmann::json buildResults() const;
  nlohmann::json failureEvents() const;  ///< routing.failures: one entry per link or switch event
  std::vector<TransferFailure> connectionFailures_;
  bool ran_ = false;
  bool finished_ = false;                                  ///< run() completed: the results no longer change
  mutable std::shared_ptr<nlohmann::json> results_;        ///< computed once after run()
  /// The document of an unfinished run (rebuilt on every call: the run may still change it).
  mutable std::shared_ptr<nlohmann::json> partial_;
};

}  // namespace fabricsim
