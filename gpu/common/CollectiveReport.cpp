#include "gpu/common/CollectiveReport.h"

#include <string>

#include "gpu/common/NcclTestsTable.h"

namespace fabricsim::gpu {

nlohmann::json CollectiveReport::measurementJson(const CollectiveMeasurement& m) {
  nlohmann::json j = {{"time_us", m.timeUs}, {"algbw_GBps", m.algBwGBps}, {"busbw_GBps", m.busBwGBps}};
  j["wrong"] = m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json CollectiveReport::toJson(const CollectiveSweepParams& p,
                                        const std::vector<CollectiveRow>& rows,
                                        const nlohmann::json& system) {
  const std::string redop = isReduction(p.collective) ? std::string(reduceOpName(p.op)) : "none";
  const int root = hasRoot(p.collective) ? p.root : -1;
  nlohmann::json j;
  j["tool"] = kTool;
  j["schema"] = kSchema;
  j["op"] = std::string(collectiveName(p.collective));
  j["nccl_tests_name"] = NcclTestsTable::programName(p.collective);
  j["ranks"] = p.ranks;
  j["processes"] = p.processes;
  j["gpus_per_process"] = p.gpusPerProcess;
  // The keys calibrate reads, from the system description.
  auto field = [&](const char* key) {
    return system.is_object() && system.contains(key) ? system[key] : nlohmann::json();
  };
  nlohmann::json hosts = nlohmann::json::array();
  if (field("hosts").is_array())
    for (const auto& h : system["hosts"])
      if (h.is_object() && h.contains("hostname")) hosts.push_back(h["hostname"]);
  j["hosts"] = hosts;
  j["gpus_per_host"] = field("gpus_per_host");
  j["gpu"] = {{"model", field("gpu_model")}, {"count", field("gpu_count")}};
  j["nccl"] = {{"version", field("nccl_version")},
               {"env", field("nccl_env").is_object() ? field("nccl_env") : nlohmann::json::object()}};
  j["datatype"] = std::string(dataTypeName(p.type));
  j["redop"] = redop;
  j["root"] = root;
  j["params"] = {{"min_bytes", p.minBytes},   {"max_bytes", p.maxBytes},       {"step_factor", p.stepFactor},
                 {"step_bytes", p.stepBytes}, {"warmup_iters", p.warmupIters}, {"iters", p.iters},
                 {"check", p.checkIters},     {"average", p.average}};
  j["system"] = system;
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : rows) {
    results.push_back({{"size_bytes", r.bytes},
                       {"count", r.count},
                       {"type", std::string(dataTypeName(p.type))},
                       {"redop", redop},
                       {"root", root},
                       {"out_of_place", measurementJson(r.outOfPlace)},
                       {"in_place", measurementJson(r.inPlace)},
                       {"nccl", r.nccl ? nlohmann::json{{"algorithm", r.nccl->algorithm},
                                                        {"protocol", r.nccl->protocol},
                                                        {"channels", r.nccl->channels}}
                                       : nlohmann::json(nullptr)}});
  }
  j["results"] = results;
  j["avg_busbw_GBps"] = NcclTestsTable::averageBusBandwidth(rows);
  j["failed_checks"] = NcclTestsTable::failedChecks(rows);
  return j;
}

}  // namespace fabricsim::gpu
