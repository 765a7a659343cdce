// Experiment, part three: each job's entry in the results (completion, iterations, compute,
// exposed communication, collectives, nccl-tests rows) and, on the hybrid backend, its interval
// from the replicas.
#include <algorithm>

#include "sim/config/SpecJson.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/report/MeanInterval.h"
#include "sim/runtime/Experiment.h"
#include "sim/workload/CollectiveEngine.h"
#include "sim/workload/TrainingTraceBuilder.h"

namespace fabricsim {

nlohmann::json Experiment::replicaInterval(size_t job) const {
  // The run's own figure (every seed) with the interval of a mean of the replicas' groups of
  // seeds (batch means): their sample standard deviation, Student's t at n - 1 degrees of freedom.
  const ReplicaJob own = replicaFigures(jobs_[job]);
  auto interval = [&](double own, double ReplicaJob::*field) {
    std::vector<double> xs;
    for (const auto& r : replicas_) xs.push_back(r[job].*field);
    const MeanInterval mi = MeanInterval::of(xs);
    return nlohmann::json{{"value", own},
                          {"ci95", {own - mi.halfWidth, own + mi.halfWidth}},
                          {"replica_mean", mi.mean},
                          {"replicas", xs}};
  };
  return {{"level", 0.95},
          {"replicas", replicas_.size()},
          {"jct_s", interval(own.jct, &ReplicaJob::jct)},
          {"iteration_time_s", interval(own.iteration, &ReplicaJob::iteration)},
          {"exposed_comm_s", interval(own.exposed, &ReplicaJob::exposed)}};
}

nlohmann::json Experiment::jobJson(const Job& job) const {
  using nlohmann::json;
  const Workload& w = *job.workload;
  const double jct = (w.finishTime() - w.startTime()).seconds();
  const bool done = w.finished();  // false when a failure ended the run first
  json j = {{"name", w.name()},
            {"finished", done},
            {"kind", job.spec->kind},
            {"jct_s", jct},
            {"start_s", w.startTime().seconds()},
            {"finish_s", w.finishTime().seconds()},
            {"bytes", w.bytesRequested()},
            {"iterations", json::array()},
            {"compute_s", 0.0},
            {"exposed_comm_s", jct},
            {"collectives", json::array()}};
  if (!job.gpus.empty()) {
    std::vector<uint32_t> head(job.gpus.begin(),
                               job.gpus.begin() + static_cast<long>(std::min<size_t>(job.gpus.size(), 64)));
    j["gpus"] = {{"count", job.gpus.size()},
                 {"placement", toString(job.spec->placement.policy)},
                 {"first_ranks", head}};
  }
  if (job.sweep) {
    const CollectiveSweep& c = *job.sweep;
    json rows = json::array();
    json colls = json::array();
    for (const auto& r : c.rows()) {
      rows.push_back({{"size_bytes", r.size},
                      {"count", r.count},
                      {"time_us", r.time.micros()},
                      {"algbw_GBps", r.algbwGBps},
                      {"busbw_GBps", r.busbwGBps},
                      {"algorithm", toString(r.algorithm)},
                      {"protocol", toString(r.protocol)},
                      {"nccl_model_us", r.ncclModelUs ? json(*r.ncclModelUs) : json(nullptr)}});
      colls.push_back({{"op", toString(c.sweep().op)},
                       {"bytes", r.size},
                       {"ranks", c.ranks()},
                       {"algorithm", toString(r.algorithm)},
                       {"protocol", toString(r.protocol)},
                       {"time_s", r.time.seconds()},
                       {"algbw_GBps", r.algbwGBps},
                       {"busbw_GBps", r.busbwGBps},
                       {"count", c.sweep().iterations}});
    }
    j["collectives"] = colls;
    j["nccl_tests"] = {{"op", toString(c.sweep().op)},
                       {"ranks", c.ranks()},
                       {"data_type", c.sweep().dataType},
                       {"warmup", c.sweep().warmup},
                       {"iterations", c.sweep().iterations},
                       {"rows", rows},
                       {"avg_busbw_GBps", c.averageBusBandwidth()}};
  }
  if (job.executor) {
    const JobExecutor& e = *job.executor;
    const JobTrace& t = e.trace();
    json its = json::array();
    Time prev = w.startTime();
    for (Time end : e.iterationEnds()) {
      its.push_back({{"time_s", (end - prev).seconds()}, {"end_s", end.seconds()}});
      prev = end;
    }
    j["iterations"] = its;
    const double compute = (e.computePerIteration() * t.iterations).seconds();
    j["compute_s"] = compute;
    j["compute_only_jct_s"] = job.computeOnly.seconds();
    j["exposed_comm_s"] = std::max(0.0, jct - job.computeOnly.seconds());
    j["idle_s"] = std::max(0.0, job.computeOnly.seconds() - compute);
    j["generator"] = t.generator;
    j["ranks"] = t.ranks;
    if (t.microbatches > 0) {
      // Uniform stages: (p - 1) (t_f + t_b) / v of idle in (m + (p - 1) / v)(t_f + t_b).
      const double p = t.pipelineStages;
      const double m = t.microbatches;
      const double v = std::max(1, t.virtualStages);
      j["pipeline"] = {{"stages", t.pipelineStages},
                       {"virtual_stages", t.virtualStages},
                       {"microbatches", t.microbatches},
                       {"bubble_fraction", (p - 1) / (v * m + p - 1)},
                       {"microbatch_forward_s", t.microbatchForward.seconds()},
                       {"microbatch_backward_s", t.microbatchBackward.seconds()}};
    }
    json colls = json::array();
    for (const auto& c : e.collectiveSummaries()) {
      const double mean = c.mean().seconds();
      const double algbw = mean > 0 ? static_cast<double>(c.bytes) / mean * 1e-9 : 0.0;
      colls.push_back({{"label", c.label},
                       {"op", toString(c.op)},
                       {"bytes", c.bytes},
                       {"ranks", c.ranks},
                       {"algorithm", toString(c.algorithm)},
                       {"protocol", toString(c.protocol)},
                       {"count", c.count},
                       {"time_s", mean},
                       {"min_time_s", c.min.seconds()},
                       {"max_time_s", c.max.seconds()},
                       {"total_time_s", c.total.seconds()},
                       {"algbw_GBps", algbw},
                       {"busbw_GBps", algbw * CollectiveEngine::busBandwidthFactor(c.op, c.ranks)}});
    }
    j["collectives"] = colls;
    j["p2p"] = {{"messages", e.messages()},
                {"mean_time_s",
                 e.messages() ? (e.messageTime() / static_cast<int64_t>(e.messages())).seconds() : 0.0}};
  }
  if (!done)  // an unfinished job has no completion time: null, never a number
    for (const char* k : {"jct_s", "finish_s", "exposed_comm_s"}) j[k] = nullptr;
  return j;
}

}  // namespace fabricsim
