// Experiment, part two: the results document, the warnings and the terminal summary of a run
// (what sim/runtime/Experiment.cpp's run produces, written out). Kept apart from the run itself,
// which builds and drives the simulation.
#include <algorithm>
#include <cmath>

#include "sim/config/SpecJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/core/QuantileSketch.h"
#include "sim/flow/PfcSpreading.h"
#include "sim/report/ResultsFile.h"
#include "sim/runtime/Experiment.h"
#include "sim/runtime/UnmodelledCounters.h"
#include "sim/workload/PatternWorkload.h"
#include "sim/workload/TraceFile.h"
#include "sim/workload/TrainingTraceBuilder.h"

namespace fabricsim {

nlohmann::json Experiment::buildResults() const {
  using nlohmann::json;
  json doc;
  doc["version"] = ResultsFile::version();
  doc["git"] = ResultsFile::gitDescribe();
  doc["seed"] = options_.seed;
  json workloads = json::array();
  for (const auto& w : workloadSpecs_) workloads.push_back(toJson(w));
  doc["spec"] = {{"topology", toJson(spec_)}, {"workloads", workloads}};
  doc["backend"] = fabric_->backendName();
  doc["status"] = connectionFailures_.empty() ? "completed" : "failed";
  json failures = json::array();
  for (const auto& f : connectionFailures_)
    failures.push_back({{"kind", TransferFailure::kindName(f.kind)},
                        {"at_s", f.at.seconds()},
                        {"source", f.source},
                        {"destination", f.destination},
                        {"src_nic", f.srcNic},
                        {"dst_nic", f.dstNic},
                        {"traffic_class", f.trafficClass},
                        {"qp", f.qpIndex},
                        {"retries", f.retries},
                        {"transfers_failed", f.transfers},
                        {"src_gpus", f.srcGpus},
                        {"dst_gpus", f.dstGpus},
                        {"message", f.message}});
  doc["failures"] = failures;
  if (episodes_) {
    doc["backend_model"] = {
        {"level", "hybrid"},
        {"rates",
         "max-min fair share of each flow's routed path; each congested switch link delivers the "
         "efficiency its congestion episode reached in a packet-level simulation with the fabric's "
         "congestion control"},
        {"not_modelled", PacketEpisodeModel::unmodelledEffects()}};
  } else if (flow_) {
    doc["backend_model"] = {
        {"level", "flow"},
        {"rates", "max-min fair share of each flow's routed path, recomputed when flows start or end"},
        {"not_modelled", FlowFabric::unmodelledEffects()}};
  } else {
    doc["backend_model"] = {{"level", "packet"}, {"not_modelled", json::array()}};
  }
  if ((episodes_ || flow_) && PfcSpreading::pausingClasses(spec_) != 0) {
    const std::string pfc =
        "; lossless classes without congestion control: a congested egress is shared per paused "
        "ingress port, pauses the ports upstream of it and slows the flows queued there (PFC or "
        "credit back-pressure)";
    doc["backend_model"]["rates"] = doc["backend_model"]["rates"].get<std::string>() + pfc;
  }
  doc["congestion_control"] = spec_.congestionControl.algorithm;
  doc["link_technology"] = spec_.links.technology;
  doc["pfc"] = spec_.sw.pfc.enabled && spec_.links.technology == "roce";

  const NetworkCounters net = fabric_->networkCounters();
  doc["summary"] = {{"sim_time_s", net.activeTime.seconds()},
                    {"sim_clock_end_s", sim_->now().seconds()},
                    {"wall_time_s", wallSeconds_},
                    {"setup_time_s", buildSeconds_},
                    {"events", sim_->eventsProcessed()},
                    {"packets", net.packetsSent},
                    {"link_transmissions", net.linkTransmissions},
                    {"peak_packets_in_flight", packet_ ? packet_->pool().peak() : 0},
                    {"peak_pending_events", sim_->peakPendingEvents()},
                    {"peak_rss_bytes", ResultsFile::peakRssBytes()},
                    {"memory_estimate",
                     {{"bytes", std::llround(memory_.estimate.total())},
                      {"fabric_bytes", std::llround(memory_.estimate.fabricBytes)},
                      {"workload_bytes", std::llround(memory_.estimate.workloadBytes)},
                      {"links", memory_.links},
                      {"ranks", memory_.ranks},
                      {"program_ranks", memory_.programRanks},
                      {"copies", memory_.copies},
                      {"limit_bytes", memory_.limit}}},
                    {"gpus", topo_->gpuCount()},
                    {"hosts", topo_->hostCount()},
                    {"switches", topo_->switchCount()}};
  if (flow_) {
    const MaxMinSolver& s = flow_->solver();
    doc["summary"]["flow_model"] = {
        {"flows", flow_->flowsStarted()},           {"recomputations", s.solves()},
        {"recomputation_repeats", s.repeats()},     {"flows_recomputed", s.flowsRecomputed()},
        {"peak_active_flows", s.peakActiveFlows()}, {"memory_bytes", flow_->memoryBytes()}};
  }
  if (episodes_) {
    doc["summary"]["hybrid_model"] = {{"episode_queries", runQueries_},
                                      {"episodes_simulated", episodes_->simulated()},
                                      {"paces_set", flow_->pacesSet()},
                                      {"background_cuts", flow_->backgroundCuts()},
                                      {"carried_holds", flow_->carriedHolds()},
                                      {"hold_refreshes", flow_->holdRefreshes()},
                                      {"carried_queue_pairs", flow_->carriedQueuePairs()},
                                      {"packet_wall_time_s", episodes_->packetWallSeconds()},
                                      {"seeds", episodes_->seeds()},
                                      {"replica_groups", episodes_->replicas()},
                                      {"replicas", replicas_.size()},
                                      {"replica_wall_time_s", replicaWallSeconds_},
                                      {"replicas_rerun", !replicasRepeated_},
                                      {"replica_threads", replicaThreads_},
                                      {"seed_dependent_episodes", episodes_->seedDependent()},
                                      {"episodes", episodes_->episodesJson(20)}};
    const FlowFabric::Coupling& c = flow_->coupling();
    doc["summary"]["hybrid_model"]["coupling"] = {
        {"tolerance", spec_.episodes.tolerance},
        {"max_rounds", spec_.episodes.maxRounds},
        {"recomputations", c.recomputations},
        {"rounds", c.rounds},
        {"max_rounds_used", c.maxRounds},
        {"unconverged", c.unconverged},
        {"stop_rule",
         "each recomputation runs rounds of a rate solve, the congestion episodes of the links it touched "
         "(all from that solve) and their flows held to their paces, until a round holds no new flow "
         "(episodes within tolerance of full efficiency whose flows none lose more than the tolerance hold "
         "none), or max_rounds rounds were run"}};
  }

  json jobs = json::array();
  for (size_t i = 0; i < jobs_.size(); ++i) {
    json j = jobJson(jobs_[i]);
    if (replicas_.size() >= 2 && j["finished"] == true) j["confidence"] = replicaInterval(i);
    jobs.push_back(std::move(j));
  }
  doc["jobs"] = jobs;

  // FCTs of every delivered transfer, and apart: network transfers (NIC to NIC) and NVLink ones
  // (inside a host), whose times differ by orders of magnitude and would hide each other. The
  // backends keep streaming statistics, not a record per transfer: counts, means and maxima are
  // exact, percentiles within QuantileSketch's relative accuracy (0.5%) of the exact ones.
  const TransferTable& transfers = fabric_->transfers();
  auto stats = [](const TransferStats::Category& c, bool nullWhenEmpty) {
    if (c.count() == 0 && nullWhenEmpty)
      return json{{"count", 0}, {"fct_us", nullptr}, {"slowdown", nullptr}};  // none: no figure
    const QuantileSketch &f = c.fctUs, &sl = c.slowdown;
    return json{{"count", c.count()},
                {"fct_us",
                 {{"p50", f.quantile(0.5)},
                  {"p90", f.quantile(0.9)},
                  {"p99", f.quantile(0.99)},
                  {"max", f.max()},
                  {"mean", f.mean()}}},
                {"slowdown", {{"p50", sl.quantile(0.5)}, {"p99", sl.quantile(0.99)}, {"max", sl.max()}}}};
  };
  json flows = stats(transfers.stats().all(), false);
  flows["count"] = transfers.started();
  flows["intra_host"] = transfers.stats().nvlink().count();
  flows["failed_transfers"] = transfers.failed();
  flows["undelivered_transfers"] = transfers.started() - transfers.delivered();
  flows["percentiles"] = {{"method", "nearest rank"},
                          {"relative_error_bound", transfers.stats().network().fctUs.alpha()}};
  flows["network"] = stats(transfers.stats().network(), true);
  flows["nvlink"] = stats(transfers.stats().nvlink(), true);
  doc["flows"] = flows;

  json tiers = json::object();
  for (const auto& t : net.perTier)
    tiers[t.name] = {{"links", t.links},
                     {"util_mean", t.utilMean},
                     {"util_max", t.utilMax},
                     {"max_queue_bytes", t.maxQueueBytes},
                     {"queue_bytes", {{"p50", t.queueP50}, {"p90", t.queueP90}, {"p99", t.queueP99}}},
                     {"packets_dropped", t.packetsDropped},
                     {"pfc_paused_us", t.pfcPausedUs},
                     {"ecn_marks", t.ecnMarks},
                     {"wire_bytes", t.wireBytes}};
  json pausedPorts = json::array();
  for (const auto& p : net.mostPausedPorts)
    pausedPorts.push_back({{"node", p.node},
                           {"port", p.port},
                           {"peer", p.peer},
                           {"paused_us", p.pausedUs},
                           {"pause_frames", p.pauseFrames}});
  json topQueues = json::array();
  for (const auto& q : net.topQueues)
    topQueues.push_back({{"node", q.node},
                         {"port", q.port},
                         {"peer", q.peer},
                         {"p50_bytes", q.p50},
                         {"p99_bytes", q.p99},
                         {"max_bytes", q.max},
                         {"samples", q.samples}});
  json byClass = json::array();
  for (const auto& q : net.queueByClass)
    byClass.push_back({{"class", q.tc},
                       {"p50", q.p50},
                       {"p90", q.p90},
                       {"p99", q.p99},
                       {"max", q.max},
                       {"samples", q.samples}});
  json headroom = json::array();
  for (const auto& h : net.headroomPeaks)
    headroom.push_back({{"node", h.node},
                        {"port", h.port},
                        {"peer", h.peer},
                        {"peak_bytes", h.peak},
                        {"headroom_bytes", h.headroom}});
  json violations = json::array();
  for (const auto& v : net.losslessViolations)
    violations.push_back({{"node", v.node},
                          {"port", v.port},
                          {"peer", v.peer},
                          {"class", v.tc},
                          {"drops", v.drops},
                          {"first_s", v.first.seconds()}});
  json warnings = json::array();
  for (const auto& w : warnings_(net)) warnings.push_back(w);
  if (spec_.episodes.given && !episodes_)
    warnings.push_back("episodes.* (" + spec_.file +
                       ") configure the hybrid backend's congestion episodes; this run uses the " +
                       fabric_->backendName() + " backend, which has none");
  doc["warnings"] = warnings;
  json routing = {{"algorithm", spec_.routing.algorithm},
                  {"control_plane", spec_.routing.controlPlane},
                  {"bytes_blackholed", net.blackholedBytes},
                  {"packets_blackholed", net.blackholedPackets},
                  {"packets_ttl_expired", net.ttlExpiredPackets},
                  {"bytes_lost_dead_links", net.deadLinkBytes},
                  {"packets_lost_dead_links", net.deadLinkPackets},
                  {"last_route_loss_s",
                   net.lastRouteLoss >= Time::zero() ? json(net.lastRouteLoss.seconds()) : json(nullptr)}};
  if (ibSm_)
    routing["ib_sm"] = {{"engine", ibSm_->engine()},
                        {"lmc", ibSm_->lids().lmc()},
                        {"adaptive", ibSm_->adaptive()},
                        {"reroute_delay_s", ibSm_->rerouteDelay().seconds()},
                        {"sweeps", ibSm_->sweeps()},
                        {"last_sweep_s", ibSm_->sweeps() > 0 ? json((ibSm_->lastSweep() - origin_).seconds())
                                                             : json(nullptr)},
                        {"lft_bytes", ibSm_->memoryBytes()},
                        {"compute_s", ibSm_->computeSeconds()}};
  if (bgp_) {
    routing["bgp_updates_sent"] = bgp_->updatesSent();
    routing["bgp_withdrawals_sent"] = bgp_->withdrawalsSent();
    routing["initial_convergence_s"] = origin_.seconds();
    // BGP's own cost and behaviour. Simulated times are from the start of the run (BGP starts
    // at 0); wall and CPU times are the host's, for the initial convergence only.
    const BgpControlPlane::StartStats& st = bgp_->startStats();
    routing["bgp"] = {{"start_wall_s", bgpStartWallSeconds_},
                      {"start_cpu_s", bgpStartCpuSeconds_},
                      {"start_last_fib_change_s", st.lastFibChange.seconds()},
                      {"start_quiet_s", st.quiet.seconds()},
                      {"start_updates_sent", st.updatesSent},
                      {"start_withdrawals_sent", st.withdrawalsSent},
                      {"start_fib_changes", st.fibChanges},
                      {"updates_sent", bgp_->updatesSent()},
                      {"withdrawals_sent", bgp_->withdrawalsSent()},
                      {"fib_changes", bgp_->fibChanges()},
                      {"detection_delay_s", bgp_->detectionDelay().seconds()},
                      {"as_paths", bgp_->distinctPaths()},
                      {"peak_queued_messages", bgp_->peakQueuedMessages()},
                      {"memory_bytes", bgp_->memoryBytes()}};
  }
  if (failures_) routing["failures"] = failureEvents();
  doc["routing"] = routing;
  if (!probes_.empty()) {
    json probes = json::array();
    for (const auto& p : probes_) probes.push_back(p->toJson());
    doc["probes"] = probes;
  }
  doc["network"] = {
      {"bytes_sent", net.bytesSent},
      {"bytes_delivered", net.bytesDelivered},
      {"bytes_dropped", net.bytesDropped},
      {"goodput_bytes", net.goodputBytes},
      {"packets_sent", net.packetsSent},
      {"packets_dropped", net.packetsDropped},
      {"retransmitted_bytes", net.retransmittedBytes},
      {"retransmit_timeouts", net.retransmitTimeouts},
      {"nic_failovers", net.nicFailovers},
      {"nacks", net.nacksSent},
      {"out_of_order_packets", net.outOfOrderPackets},
      {"ecn_marks", net.ecnMarks},
      {"cnps", net.cnps},
      {"becns", net.becns},
      {"pfc_pause_frames", net.pfcPauseFrames},
      {"pfc_resume_frames", net.pfcResumeFrames},
      {"pfc_pause_propagated", net.pfcPausePropagated},
      {"pfc_paused_us", net.pfcPausedUs},
      {"lossless_drops", net.losslessDrops},
      {"lossless_violations", violations},
      {"pfc_watchdog", {{"storms", net.pfcStorms}, {"packets_dropped", net.pfcStormDrops}}},
      {"pfc_max_headroom_used_bytes", net.pfcMaxHeadroomUsed},
      {"pfc_headroom_peaks", headroom},
      {"min_credit_bytes", net.minCreditBytes},
      {"credits_outstanding_bytes", net.creditsOutstanding},
      {"max_queue_bytes", net.maxQueueBytes},
      {"queue_bytes",
       {{"p50", net.queueP50}, {"p90", net.queueP90}, {"p99", net.queueP99}, {"max", net.maxQueueBytes}}},
      {"queue_bytes_by_class", byClass},
      {"top_queues", topQueues},
      {"pfc_paused_ports", net.pausedPorts},
      {"pfc_most_paused_ports", pausedPorts},
      {"link_util", {{"mean", net.linkUtilMean}, {"max", net.linkUtilMax}}},
      {"per_tier", tiers}};
  // What this backend does not model: null, never 0, and listed under `unmodelled`.
  UnmodelledCounters::apply(net.modelled, doc);
  return doc;
}

nlohmann::json Experiment::failureEvents() const {
  using nlohmann::json;
  auto groups = [](const BgpControlPlane::GroupSummary& g) {
    return json{{"pairs", g.pairs}, {"mean", g.mean()}, {"min", g.minSize}, {"empty", g.emptyGroups}};
  };
  const LocalFailover* lf = failures_->localFailover();
  json events = json::array();
  for (const FailureInjector::Event& e : failures_->events()) {
    if (!e.spec.host.empty()) continue;  // PFC storms: no routing event
    if (e.at > sim_->now()) continue;    // the run ended first
    const bool down = e.spec.action == "down";
    std::string target, kind = "link_";
    if (e.nic != kInvalid) {
      target = e.spec.nicHost + "/" + std::to_string(e.spec.nicIndex);
      kind = "nic_";
    } else if (e.node != kInvalid) {
      target = topo_->node(e.node).name;
      kind = "switch_";
    } else {
      const LinkInfo& l = topo_->link(e.links.front());
      target = topo_->node(l.a).name + "--" + topo_->node(l.b).name;
    }
    json j = {{"event", kind + (down ? "down" : "up")}, {"target", target}, {"at_s", e.at.seconds()}};
    // Local fast failover: when the switches at the ends applied it, and how many changed.
    j["local_failover_s"] = nullptr;
    j["local_failover_switches"] = nullptr;
    if (lf && e.failoverRecord != kInvalid) {
      const LocalFailover::Record& r = lf->record(e.failoverRecord);
      if (r.applied != Time::max()) {
        j["local_failover_s"] = (r.applied - r.changed).seconds();
        j["local_failover_switches"] = r.switchesChanged;
      }
    }
    // BGP: the entries this event caused (one per link of a link event), taken together.
    j["detected_s"] = nullptr;
    j["last_fib_change_s"] = nullptr;
    j["convergence_time_s"] = nullptr;
    if (bgp_ && e.bgpEnd > e.bgpFirst) {
      const auto& stats = bgp_->failureStats();
      Time detected = Time::max(), last = e.at;
      uint64_t updates = 0, withdrawals = 0;
      for (uint32_t i = e.bgpFirst; i < e.bgpEnd; ++i) {
        detected = std::min(detected, stats[i].detected);
        last = std::max(last, stats[i].lastFibChange);
        updates += stats[i].updatesSent;
        withdrawals += stats[i].withdrawalsSent;
      }
      j["detected_s"] = detected.seconds();
      j["last_fib_change_s"] = last.seconds();
      j["convergence_time_s"] = (last - e.at).seconds();
      j["updates_sent"] = updates;
      j["withdrawals_sent"] = withdrawals;
      j["ecmp_groups_before"] = groups(stats[e.bgpFirst].before);
      j["ecmp_groups_after"] = groups(stats[e.bgpEnd - 1].after);
    }
    events.push_back(std::move(j));
  }
  return events;
}

std::vector<std::string> Experiment::warnings_(const NetworkCounters& net) {
  std::vector<std::string> w;
  for (const auto& v : net.losslessViolations)
    w.push_back("lossless class " + std::to_string(v.tc) + " dropped " + std::to_string(v.drops) +
                " packets at " + v.node + " port " + std::to_string(v.port) + " (from " + v.peer +
                "), first at " + formatTime(Time::ps(v.first.picos())) +
                ": its PFC headroom is too small for the link (switch.pfc.headroom; leave it unset for the "
                "IEEE 802.1Qbb budget)");
  return w;
}

std::vector<std::string> Experiment::warnings() const {
  const nlohmann::json& doc = results();
  std::vector<std::string> w;
  for (const auto& x : doc["warnings"]) w.push_back(x.get<std::string>());
  return w;
}

void Experiment::printSummary(std::FILE* out) const {
  const nlohmann::json& r = results();
  const auto& s = r["summary"];
  const auto& f = r["flows"];
  const auto& n = r["network"];
  std::fprintf(out, "fabricsim %s | topology %s (%zu GPUs, %zu switches) | backend %s | seed %llu\n",
               ResultsFile::version().c_str(), spec_.name.c_str(), topo_->gpuCount(), topo_->switchCount(),
               fabric_->backendName().c_str(), static_cast<unsigned long long>(options_.seed));
  std::fprintf(out, "\n%-24s %-10s %12s %12s %12s %12s %10s\n", "job", "kind", "JCT", "iteration", "compute",
               "exposed comm", "bytes");
  for (const auto& j : r["jobs"]) {
    auto t = [](const nlohmann::json& s) {
      return s.is_number() ? formatTime(Time::ps(static_cast<int64_t>(s.get<double>() * 1e12 + 0.5)))
                           : std::string("failed");
    };
    const auto& its = j["iterations"];
    const std::string iter = its.empty() ? std::string("-") : t(its.back()["time_s"]);
    std::fprintf(out, "%-24s %-10s %12s %12s %12s %12s %10s\n", j["name"].get<std::string>().c_str(),
                 j["kind"].get<std::string>().c_str(), t(j["jct_s"]).c_str(), iter.c_str(),
                 t(j["compute_s"]).c_str(), t(j["exposed_comm_s"]).c_str(),
                 formatBytes(j["bytes"].get<Bytes>()).c_str());
  }
  for (const auto& job : jobs_) {
    if (!job.workload->finished()) continue;  // the failures below say why
    if (job.sweep) {
      std::fprintf(out, "\n");
      job.sweep->printTable(out);
    }
    if (job.executor) {
      const JobExecutor& e = *job.executor;
      const Time jct = e.finishTime() - e.startTime();
      const Time compute = e.computePerIteration() * e.trace().iterations;
      const Time idle = std::max(Time::zero(), job.computeOnly - compute);
      const Time exposed = std::max(Time::zero(), jct - job.computeOnly);
      std::fprintf(
          out, "\n%s: JCT %s = compute %s + pipeline bubble and other idle %s + exposed communication %s\n",
          job.spec->name.c_str(), formatTime(jct).c_str(), formatTime(compute).c_str(),
          formatTime(idle).c_str(), formatTime(exposed).c_str());
      if (e.messages() > 0)
        std::fprintf(out, "  point-to-point: %llu messages, mean %s from the later post to delivery\n",
                     static_cast<unsigned long long>(e.messages()),
                     formatTime(e.messageTime() / static_cast<int64_t>(e.messages())).c_str());
      const auto sums = e.collectiveSummaries();
      if (sums.empty()) continue;
      std::fprintf(out, "  collectives (time per call, from the last member's arrival to completion):\n");
      std::fprintf(out, "  %-18s %-15s %10s %6s %-13s %8s %11s %9s %9s\n", "label", "op", "bytes", "ranks",
                   "algorithm", "calls", "time", "algbw", "busbw");
      size_t shown = 0;
      for (const auto& c : sums) {
        if (++shown > 12) break;
        const double mean = c.mean().seconds();
        const double algbw = mean > 0 ? static_cast<double>(c.bytes) / mean * 1e-9 : 0.0;
        std::fprintf(out, "  %-18s %-15s %10s %6u %-13s %8llu %11s %7.1f GB/s %5.1f GB/s\n", c.label.c_str(),
                     toString(c.op), formatBytes(c.bytes).c_str(), c.ranks, toString(c.algorithm),
                     static_cast<unsigned long long>(c.count), formatTime(c.mean()).c_str(), algbw,
                     algbw * CollectiveEngine::busBandwidthFactor(c.op, c.ranks));
      }
      if (sums.size() > 12) std::fprintf(out, "  ... %zu more kinds in the results JSON\n", sums.size() - 12);
    }
  }
  std::fprintf(
      out, "\nflows %llu | FCT us p50 %.2f p90 %.2f p99 %.2f max %.2f | slowdown p50 %.3f p99 %.3f\n",
      f["count"].get<unsigned long long>(), f["fct_us"]["p50"].get<double>(),
      f["fct_us"]["p90"].get<double>(), f["fct_us"]["p99"].get<double>(), f["fct_us"]["max"].get<double>(),
      f["slowdown"]["p50"].get<double>(), f["slowdown"]["p99"].get<double>());
  // Counters the backend does not model are null in the results: "n/m" here, never 0.
  auto bytes = [](const nlohmann::json& v) {
    return v.is_null() ? std::string("n/m") : formatBytes(v.get<Bytes>());
  };
  const std::string droppedPackets = n["packets_dropped"].is_null()
                                         ? std::string("n/m")
                                         : std::to_string(n["packets_dropped"].get<uint64_t>());
  std::fprintf(out,
               "network: sent %s delivered %s dropped %s (%s pkts) retransmitted %s | max queue %s | "
               "link util mean %.1f%% max %.1f%%\n",
               bytes(n["bytes_sent"]).c_str(), bytes(n["bytes_delivered"]).c_str(),
               bytes(n["bytes_dropped"]).c_str(), droppedPackets.c_str(),
               bytes(n["retransmitted_bytes"]).c_str(), bytes(n["max_queue_bytes"]).c_str(),
               n["link_util"]["mean"].get<double>() * 100, n["link_util"]["max"].get<double>() * 100);
  std::fprintf(out, "simulated %s in %.2f s wall (%.2f M events, %.2f M events/s, %.1f MiB peak RSS)\n",
               formatTime(fabric_->networkCounters().activeTime).c_str(), wallSeconds_,
               s["events"].get<double>() * 1e-6,
               wallSeconds_ > 0 ? s["events"].get<double>() * 1e-6 / wallSeconds_ : 0.0,
               static_cast<double>(s["peak_rss_bytes"].get<long long>()) / (1024.0 * 1024.0));
  if (episodes_) {
    std::fprintf(
        out,
        "hybrid backend: %llu flows, %llu rate recomputations, %zu congestion episodes simulated at packet "
        "level (%.2f s), %llu uses; not modelled: coupling between congestion points, fabric-wide packet "
        "counters (results: backend_model, unmodelled)\n",
        static_cast<unsigned long long>(flow_->flowsStarted()),
        static_cast<unsigned long long>(flow_->solver().solves()), episodes_->simulated(),
        episodes_->packetWallSeconds(), static_cast<unsigned long long>(runQueries_));
  } else if (flow_) {
    std::fprintf(
        out,
        "flow backend: %llu flows, %llu rate recomputations; not modelled: queueing, ECN/PFC/credits, "
        "CC transients, drops other than at failures (results: backend_model, unmodelled)\n",
        static_cast<unsigned long long>(flow_->flowsStarted()),
        static_cast<unsigned long long>(flow_->solver().solves()));
  }
  if (!connectionFailures_.empty())
    std::fprintf(out, "\nRUN FAILED: %zu connection(s) failed, %llu transfer(s) not delivered; first: %s\n",
                 connectionFailures_.size(), f["failed_transfers"].get<unsigned long long>(),
                 connectionFailures_.front().message.c_str());
}

}  // namespace fabricsim
