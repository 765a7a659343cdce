#include "sim/runtime/Experiment.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>

#include "sim/config/SpecJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/TopologySize.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/report/ProgressReporter.h"
#include "sim/report/ResultsFile.h"
#include "sim/runtime/MachineMemory.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/PatternWorkload.h"
#include "sim/workload/TraceFile.h"
#include "sim/workload/TrainingTraceBuilder.h"
#include "sim/workload/chakra/ChakraReader.h"

namespace fabricsim {

Experiment::Experiment(RunOptions options) : Experiment(std::move(options), nullptr, 0) {}

Experiment::Experiment(RunOptions options, std::shared_ptr<PacketEpisodeModel> episodes, int replica)
    : options_(std::move(options)), episodes_(std::move(episodes)), replica_(replica) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> sets = options_.sets;
  if (!options_.routing.empty()) sets.push_back("routing.algorithm=" + options_.routing);
  if (!options_.cc.empty()) sets.push_back("congestion_control.algorithm=" + options_.cc);
  spec_ = loadTopologyFile(options_.topologyPath, sets);
  if (options_.backend != "packet" && options_.backend != "flow" && options_.backend != "hybrid")
    throw InputError("", 0, 0, "--backend",
                     "expected 'packet', 'flow' or 'hybrid', found '" + options_.backend + "'");
  checkSupported();

  std::vector<std::string> paths = options_.workloadPaths;
  if (paths.empty()) {
    if (spec_.workload.empty())
      throw InputError(
          spec_.file, 0, 0, "workload",
          "no workload: pass --workload FILE or name a default `workload:` in the topology file");
    paths.push_back(spec_.workload);
  }
  std::vector<Diagnostic> diags;
  for (const auto& p : paths) {
    try {
      workloadSpecs_.push_back(loadWorkloadFile(p, options_.workloadSets));
    } catch (const InputError& e) {
      diags.insert(diags.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  if (!diags.empty()) throw InputError(std::move(diags));
  checkMemory();

  topo_ = buildTopology(spec_);
  sim_ = std::make_unique<Simulator>(options_.seed);
  fib_ = std::make_unique<EcmpFib>(*topo_, spec_.routing.hashSeed ^ options_.seed,
                                   EcmpFib::optionsFor(spec_.routing));
  if (options_.backend == "flow" || options_.backend == "hybrid") {
    auto f = std::make_unique<FlowFabric>(*sim_, *topo_, spec_, *fib_);
    flow_ = f.get();
    fabric_ = std::move(f);
    if (options_.backend == "hybrid") {
      if (!episodes_) episodes_ = std::make_shared<PacketEpisodeModel>(spec_, options_.seed);
      episodeView_ = episodes_->view(replica_);  // this run's answers; the measurements are shared
      flow_->setEpisodeModel(episodeView_.get());
    }
  } else {
    auto p = std::make_unique<PacketFabric>(*sim_, *topo_, spec_, *fib_);
    packet_ = p.get();
    fabric_ = std::move(p);
  }
  fabric_->keepFlowRecords(options_.keepFlowRecords);
  if (spec_.routing.controlPlane == "bgp") {
    // Tables start empty: every route the run uses comes from BGP's RIBs.
    for (NodeId s = static_cast<NodeId>(topo_->hostCount()); s < topo_->nodeCount(); ++s)
      for (NodeId leaf : fib_->leavesOf(fib_->component(s)))
        if (leaf != s) fib_->setRoute(s, leaf, {});
    bgp_ = std::make_unique<BgpControlPlane>(*sim_, *topo_, *fib_, spec_.routing.bgp);
  }
  if (spec_.routing.algorithm == "ib-sm") {
    ibSm_ = std::make_unique<IbSubnetManager>(*sim_, *topo_, spec_, fib_.get());
    if (packet_)
      packet_->setSubnetManager(*ibSm_);
    else
      flow_->setSubnetManager(*ibSm_);
  }
  if (bgp_ || !spec_.failures.empty()) {
    // The live tables change during the run: ideal times and unloaded latencies come from
    // tables of the intact fabric (same seed, so the same hashed paths).
    referenceFib_ = std::make_unique<EcmpFib>(*topo_, spec_.routing.hashSeed ^ options_.seed,
                                              EcmpFib::optionsFor(spec_.routing));
    if (packet_) packet_->setReferenceTables(*referenceFib_);
    if (flow_) flow_->setReferenceTables(*referenceFib_);
  }
  if (!spec_.failures.empty())
    failures_ = std::make_unique<FailureInjector>(*sim_, *topo_, *fabric_, packet_, bgp_.get(), ibSm_.get(),
                                                  ibSm_ ? nullptr : fib_.get(), spec_);
  createJobs();
  if (!options_.probes.empty() && !packet_)
    throw InputError("", 0, 0, "--probe",
                     "probes sample queues and congestion-control rates, which only the packet backend has");
  if (!options_.probes.empty()) {
    const auto interval = parseTime(options_.probeInterval);
    if (!interval.value) throw InputError("", 0, 0, "--probe-interval", interval.error);
    auto done = [this] {
      for (const auto& w : workloads_)
        if (!w->finished()) return false;
      return true;
    };
    for (const auto& p : options_.probes)
      probes_.push_back(std::make_unique<Probe>(p, *interval.value, *sim_, *topo_, *packet_, done));
  }
  buildSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Experiment::checkMemory() {
  const TopologySize size = topologySize(spec_);
  memory_.links = size.links;
  for (const auto& w : workloadSpecs_) {
    const int64_t r = estimatedRanks(w, size);
    memory_.ranks += r;
    if (runsPrograms(w)) memory_.programRanks += r;
  }
  if (options_.backend == "hybrid" && spec_.episodes.replicas >= 2)
    memory_.copies = 1 + spec_.episodes.replicas;
  memory_.estimate = estimateMemory(size, options_.backend, memory_.programRanks, memory_.copies);
  memory_.limit = options_.maxMemory > 0 ? options_.maxMemory : machineMemoryLimit();
  // A replica of a hybrid run is part of the run that checked it.
  if (replica_ != 0 || memory_.limit == 0 || memory_.estimate.total() <= static_cast<double>(memory_.limit))
    return;
  std::string what =
      std::string(toString(spec_.kind)) + ", " + std::to_string(size.hosts) + " hosts, " +
      std::to_string(size.links) + " links; " + std::to_string(memory_.ranks) + " ranks in " +
      std::to_string(workloadSpecs_.size()) + (workloadSpecs_.size() == 1 ? " job" : " jobs") + "; the " +
      options_.backend + " backend" +
      (memory_.copies > 1 ? " (" + std::to_string(memory_.copies) + " flow-level runs at once)" : "");
  throw InputError(spec_.file, 0, 0, "--max-memory",
                   "the run needs about " + formatMemory(memory_.estimate.total()) + " of memory (" + what +
                       "), more than the limit of " + formatMemory(static_cast<double>(memory_.limit)) +
                       (options_.maxMemory > 0 ? " set by --max-memory"
                                               : ", this machine's (--max-memory sets another)"));
}

std::string Experiment::checkSummary() const {
  std::string s = "ok: " + spec_.name + " (" + std::to_string(topo_->gpuCount()) + " GPUs, " +
                  std::to_string(topo_->switchCount()) + " switches, " + std::to_string(topo_->linkCount()) +
                  " links), " + std::to_string(jobs_.size()) + (jobs_.size() == 1 ? " job" : " jobs") +
                  " on the " + options_.backend + " backend; estimated peak memory " +
                  formatMemory(memory_.estimate.total());
  if (memory_.limit > 0) s += " (limit " + formatMemory(static_cast<double>(memory_.limit)) + ")";
  return s;
}

/// The replicas in progress: each a run of its own on a thread of its own, sharing nothing
/// with the run that started them but the episode model (thread-safe); each figure is a
/// function of its replica's episodes alone, so the figures do not depend on which thread
/// simulated an episode first; they are kept in replica order.
struct Experiment::ReplicaRuns {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::vector<std::optional<std::vector<ReplicaJob>>> figures;
  std::vector<std::exception_ptr> errors;
  std::vector<std::jthread> threads;  ///< joined when done, or when this goes
};

Experiment::~Experiment() = default;

void Experiment::createJobs() {
  GpuAllocator alloc(topo_->gpuCount(), topo_->gpusPerHost(), options_.seed);
  if (!options_.timelinePath.empty()) timeline_ = std::make_unique<TimelineWriter>();
  std::vector<Diagnostic> diags;
  for (const auto& w : workloadSpecs_) {
    try {
      Job job;
      job.spec = &w;
      if (w.kind == "pattern") {
        auto p = std::make_unique<PatternWorkload>(*sim_, *fabric_, w, topo_->gpuCount());
        job.workload = p.get();
        workloads_.push_back(std::move(p));
      } else if (w.kind == "collective") {
        const auto& c = w.collective;
        uint32_t ranks = c.ranks;
        if (c.hosts > 0) {
          const int gph = c.gpusPerHost > 0 ? c.gpusPerHost : topo_->gpusPerHost();
          if (gph > topo_->gpusPerHost())
            throw InputError(w.file, 0, 0, "gpus_per_host",
                             "expected at most the topology's " + std::to_string(topo_->gpusPerHost()) +
                                 " GPUs per host, found " + std::to_string(gph));
          // hosts x gpus_per_host: the first gph GPUs of each of `hosts` hosts.
          PlacementSpec hostsOnly = w.placement;
          const auto all = alloc.allocate(hostsOnly, static_cast<uint32_t>(c.hosts * topo_->gpusPerHost()),
                                          nullptr, w.file);
          for (uint32_t h = 0; h < c.hosts; ++h)
            for (int g = 0; g < gph; ++g)
              job.gpus.push_back(all[h * topo_->gpusPerHost() + static_cast<uint32_t>(g)]);
        } else {
          if (ranks == 0) ranks = static_cast<uint32_t>(alloc.freeGpus());
          job.gpus = alloc.allocate(w.placement, ranks, nullptr, w.file);
        }
        auto sweep = std::make_unique<CollectiveSweep>(*sim_, *fabric_, w, job.gpus, topo_->gpusPerHost());
        job.sweep = sweep.get();
        job.workload = sweep.get();
        workloads_.push_back(std::move(sweep));
      } else if (w.kind == "training" || w.kind == "trace" || w.kind == "chakra") {
        std::shared_ptr<JobTrace> trace;
        bool communication = true;
        if (w.kind == "training") {
          try {
            trace = std::make_shared<JobTrace>(buildTrainingTrace(w.training, w.tuning, w.name));
          } catch (const InputError& e) {
            // The generator names the job; the user needs the file.
            std::vector<Diagnostic> d = e.diagnostics();
            for (auto& x : d) x.file = w.file;
            throw InputError(std::move(d));
          }
          trace->tuning = w.tuning;
          const ParallelismSpec& par = w.training.parallelism;
          if (trace->ranks > topo_->gpuCount()) {
            throw InputError(w.file, par.line, 0, "parallelism",
                             "tp " + std::to_string(par.tp) + " x cp " + std::to_string(par.cp) + " x ep " +
                                 std::to_string(par.ep) + " x dp " + std::to_string(par.dp) + " x pp " +
                                 std::to_string(par.pp) + " = " + std::to_string(trace->ranks) +
                                 " GPUs, the fabric has " + std::to_string(topo_->gpuCount()));
          }
          // The rail-aligned order knows tp, dp and pp; with context or expert parallelism the
          // job keeps Megatron's order (its CP and EP peers next to its TP group).
          const ParallelLayout layout{par.tp, par.dp, par.pp};
          job.gpus = alloc.allocate(w.placement, trace->ranks, par.cp * par.ep == 1 ? &layout : nullptr, w.file);
          communication = w.training.communication;
        } else if (w.kind == "chakra") {
          ChakraInput in;
          in.prefix = w.chakra.prefix;
          in.commGroups = w.chakra.commGroups;
          in.ranks = w.chakra.ranks;
          in.iterations = w.chakra.iterations;
          in.name = w.name;
          in.source = w.file;
          trace = ChakraReader::read(in);
          trace->tuning = w.tuning;
          job.gpus = alloc.allocate(w.placement, trace->ranks, nullptr, w.file);
        } else {
          std::error_code ec;
          if (!std::filesystem::is_regular_file(w.trace.path, ec))
            throw InputError(
                w.file, 0, 0, "trace",
                "cannot read the trace file '" + w.trace.path +
                    "' (paths are relative to the workload file; write one with `fabricsim trace`)");
          trace = readTraceFile(w.trace.path);
          if (!trace->placement.empty() && !w.placement.explicitRange) {
            alloc.reserve(trace->placement, w.file);
            job.gpus = trace->placement;
          } else {
            job.gpus = alloc.allocate(w.placement, trace->ranks, nullptr, w.file);
          }
        }
        trace->placement = job.gpus;
        job.trace = trace;
        job.tuning = w.kind == "trace" && !w.tuningExplicit ? trace->tuning : w.tuning;
        auto exec = std::make_unique<JobExecutor>(*sim_, fabric_.get(), trace, job.gpus, topo_->gpusPerHost(),
                                                  job.tuning, w.name, w.start, communication);
        if (!options_.freeCommunicators.empty()) {
          std::vector<bool> free(trace->communicators.size(), false);
          for (const auto& name : options_.freeCommunicators)
            if (const int c = trace->communicatorIndex(name); c >= 0) free[static_cast<size_t>(c)] = true;
          exec->setFreeCommunicators(std::move(free));
        }
        if (timeline_) {
          recorders_.push_back(std::make_unique<TimelineRecorder>(
              *timeline_, static_cast<uint32_t>(jobs_.size()), w.name, options_.timelineRanks, job.gpus));
          exec->setObserver(recorders_.back().get());
        }
        job.executor = exec.get();
        job.workload = exec.get();
        workloads_.push_back(std::move(exec));
      } else {
        throw InputError(w.file, 0, 0, "kind", "unknown workload kind '" + w.kind + "'");
      }
      jobs_.push_back(std::move(job));
    } catch (const InputError& e) {
      diags.insert(diags.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  if (!diags.empty()) throw InputError(std::move(diags));
}

void Experiment::checkSupported() const {
  std::vector<Diagnostic> d;
  auto unsupported = [&](const std::string& key, const std::string& what) {
    d.push_back(Diagnostic{spec_.file, 0, 0, key, what});
  };
  const std::string& cc = spec_.congestionControl.algorithm;
  if ((cc == "dcqcn" || cc == "ibcc") && !spec_.sw.ecn.enabled)
    unsupported("switch.ecn", "congestion_control.algorithm '" + cc +
                                  "' reacts to ECN/FECN marks: set switch.ecn {kmin, kmax, pmax}");
  if (cc == "dcqcn" && spec_.links.technology != "roce")
    unsupported("congestion_control.algorithm", "dcqcn runs on RoCEv2 links; use ibcc on InfiniBand");
  if (cc == "ibcc" && spec_.links.technology != "infiniband")
    unsupported("congestion_control.algorithm", "ibcc runs on InfiniBand links; use dcqcn on RoCEv2");
  if (spec_.links.technology == "infiniband" && spec_.sw.pfc.enabled)
    unsupported("switch.pfc.enabled",
                "InfiniBand links use credit-based flow control, not PFC; set it to false");
  if (!d.empty()) throw InputError(std::move(d));
}

void Experiment::run() {
  SIM_CHECK(!ran_, "Experiment::run called twice");
  ran_ = true;
  ProgressReporter progress(options_.progress);
  Bytes requested = 0;
  if (bgp_) {
    // Initial convergence: BGP alone runs until quiet; the workloads start then.
    const auto w0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    bgp_->start();
    sim_->run();
    SIM_CHECK(bgp_->converged(), "BGP did not converge");
    bgpStartCpuSeconds_ = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    bgpStartWallSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    origin_ = sim_->now();
  }
  if (flow_) {
    fib_->onChange([this](NodeId) { flow_->routesChanged(); });
    if (ibSm_) ibSm_->setSweepListener([this] { flow_->routesChanged(); });
  }
  for (auto& w : workloads_) w->start(origin_);
  if (failures_) failures_->start(origin_);
  for (auto& p : probes_) p->start();
  for (auto& w : workloads_) requested += w->bytesRequested();
  if (progress.enabled()) {
    sim_->setProgressCallback([&](const Simulator& s) {
      Bytes delivered = 0;
      for (auto& w : workloads_) delivered += w->bytesDelivered();
      progress.update(s.now(), s.eventsProcessed(),
                      requested > 0 ? static_cast<double>(delivered) / static_cast<double>(requested) : -1);
    });
  }
  // Compute-only reference of each trace-driven job: the same programs with zero-time
  // communication, alone on an idle machine (gives compute plus pipeline bubble). It shares
  // nothing mutable with the main simulation (its own simulator, the immutable trace), so it
  // runs on a second thread meanwhile: at 100K GPUs it is a replay of every rank.
  auto reference = std::async(std::launch::async, [this] {
    std::vector<Time> computeOnly(jobs_.size(), Time::zero());
    for (size_t i = 0; i < jobs_.size(); ++i) {
      const auto& job = jobs_[i];
      if (!job.executor) continue;
      Simulator ref(options_.seed);
      JobExecutor exec(ref, nullptr, job.trace, job.gpus, topo_->gpusPerHost(), job.tuning, job.spec->name,
                       Time::zero(), false);
      exec.start(Time::zero());
      ref.run();
      SIM_CHECK(exec.finished(), "compute-only reference of '" + job.spec->name + "' did not finish");
      computeOnly[i] = exec.finishTime() - exec.startTime();
    }
    return computeOnly;
  });
  if (episodes_ && replica_ == 0 && episodes_->replicas() >= 2 && episodes_->carriesState()) startReplicas();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    sim_->run();
  } catch (...) {
    reference.wait();  // the thread reads the jobs: let it finish before they go
    replicaRuns_.reset();  // joins the replicas
    throw;
  }
  wallSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.finish();
  const std::vector<Time> computeOnly = reference.get();  // rethrows the reference's error
  for (size_t i = 0; i < jobs_.size(); ++i)
    if (jobs_[i].executor) jobs_[i].computeOnly = computeOnly[i];
  // A connection that ran out of retries stopped the run; a queue that drained with transfers
  // outstanding is a connection that nothing can recover (no timer): both are the run's failure.
  connectionFailures_ = fabric_->failures();
  const bool unfinished =
      std::any_of(workloads_.begin(), workloads_.end(), [](const auto& w) { return !w->finished(); });
  if (connectionFailures_.empty() && unfinished && packet_ && packet_->failStalledConnections() > 0)
    connectionFailures_ = fabric_->failures();
  if (connectionFailures_.empty())
    for (auto& w : workloads_)
      SIM_CHECK(w->finished(),
                "workload '" + w->name() + "' did not finish although the event queue drained");
  finished_ = true;
  // The buffers of the run's empty queues, wires, event lanes and packet pool go back before the
  // results are built, which then reuse them rather than adding to the peak memory.
  if (packet_) packet_->releaseIdleMemory();
  sim_->releaseIdleMemory();
  if (episodeView_) runQueries_ = episodeView_->queries();
  finishReplicas();
}

Experiment::ReplicaJob Experiment::replicaFigures(const Job& job) const {
  const Workload& w = *job.workload;
  ReplicaJob r;
  r.jct = (w.finishTime() - w.startTime()).seconds();
  r.exposed = job.executor ? std::max(0.0, r.jct - job.computeOnly.seconds()) : r.jct;
  r.iteration = r.jct;
  if (job.executor && !job.executor->iterationEnds().empty())
    r.iteration = r.jct / static_cast<double>(job.executor->iterationEnds().size());
  return r;
}

void Experiment::startReplicas() {
  // Each replica is the same run with one group of seeds' episode measurements (in the shared
  // cache already, or simulated on demand with every seed), quiet, without side outputs. All of
  // them at once, each on its own thread (the machine's cores share them; the episodes' seeds
  // run on threads of their own): a replica's memory is the flow level's.
  const int n = episodes_->replicas();
  replicaRuns_ = std::make_unique<ReplicaRuns>();
  ReplicaRuns& runs = *replicaRuns_;
  runs.figures.resize(static_cast<size_t>(n));
  runs.errors.resize(static_cast<size_t>(n));
  RunOptions o = options_;
  o.progress = false;
  o.timelinePath.clear();
  o.probes.clear();
  for (int r = 1; r <= n; ++r)
    runs.threads.emplace_back([&runs, o, episodes = episodes_, r] {
      const auto i = static_cast<size_t>(r - 1);
      try {
        Experiment replica(o, episodes, r);
        replica.run();
        if (replica.failed()) return;  // a replica whose episodes fail the run adds no figure
        std::vector<ReplicaJob> f;
        for (const auto& job : replica.jobs_) f.push_back(replica.replicaFigures(job));
        runs.figures[i] = std::move(f);
      } catch (...) {
        runs.errors[i] = std::current_exception();
      }
    });
  replicaThreads_ = static_cast<unsigned>(n);
}

void Experiment::finishReplicas() {
  if (!episodes_ || replica_ != 0 || episodes_->replicas() < 2) return;
  if (!replicaRuns_) {
    if (!connectionFailures_.empty()) return;
    if (episodes_->seedDependent() == 0) {
      // Every episode this run asked for answers every replica as it answered the run, so a
      // rerun would ask the same episodes in the same order and repeat the run exactly.
      std::vector<ReplicaJob> figures;
      for (const auto& job : jobs_) figures.push_back(replicaFigures(job));
      replicas_.assign(static_cast<size_t>(episodes_->replicas()), figures);
      replicasRepeated_ = true;
      return;
    }
    startReplicas();
  }
  for (std::jthread& t : replicaRuns_->threads) t.join();
  for (const std::exception_ptr& e : replicaRuns_->errors)
    if (e) std::rethrow_exception(e);
  replicaWallSeconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - replicaRuns_->t0).count();
  if (connectionFailures_.empty())
    for (auto& f : replicaRuns_->figures)
      if (f) replicas_.push_back(std::move(*f));
  replicaRuns_.reset();
}

void Experiment::writeTimeline() const {
  if (timeline_) timeline_->write(options_.timelinePath);
}

void Experiment::refreshPeakRss() {
  results();  // built (once, for a completed run) before the figure is read
  if (!finished_) return;
  (*results_)["summary"]["peak_rss_bytes"] = ResultsFile::peakRssBytes();
}

const nlohmann::json& Experiment::results() const {
  // After a completed run the document is built once and every caller reads that one copy (a
  // second copy of a large fabric's document would be part of the peak memory the run reports).
  if (results_) return *results_;
  auto doc = std::make_shared<nlohmann::json>(buildResults());
  (finished_ ? results_ : partial_) = std::move(doc);
  return finished_ ? *results_ : *partial_;
}

}  // namespace fabricsim
