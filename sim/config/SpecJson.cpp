#include "sim/config/SpecJson.h"

#include "sim/config/WorkloadLoader.h"

namespace fabricsim {
namespace {

nlohmann::json leafSpineJson(const LeafSpineShape& s) {
  return {{"leaves", s.leaves}, {"spines", s.spines}, {"hosts_per_leaf", s.hostsPerLeaf},
          {"links_per_spine", s.linksPerSpine}};
}

nlohmann::json fatTreeJson(const FatTreeShape& s) {
  return {{"radix", s.radix}, {"pods", s.pods}, {"hosts_per_edge", s.hostsPerEdge}};
}

}  // namespace

nlohmann::json toJson(const TopologySpec& spec) {
  nlohmann::json j;
  j["file"] = spec.file;
  j["name"] = spec.name;
  nlohmann::json topo;
  topo["kind"] = toString(spec.kind);
  switch (spec.kind) {
    case TopologyKind::LeafSpine:
      topo.update(leafSpineJson(spec.leafSpine));
      break;
    case TopologyKind::FatTree:
      topo.update(fatTreeJson(spec.fatTree));
      break;
    case TopologyKind::RailOptimized: {
      topo["rails"] = spec.rail.rails;
      topo["shared_spines"] = spec.rail.sharedSpines;
      nlohmann::json rail = spec.rail.railKind == TopologyKind::LeafSpine ? leafSpineJson(spec.rail.leafSpine)
                                                                          : fatTreeJson(spec.rail.fatTree);
      rail["kind"] = toString(spec.rail.railKind);
      topo["rail"] = rail;
      break;
    }
  }
  j["topology"] = topo;
  j["hosts"] = {{"gpus_per_host", spec.hosts.gpusPerHost},
                {"nics_per_host", spec.hosts.nicsPerHost},
                {"nvlink",
                 {{"bandwidth_bps", spec.hosts.nvlinkBandwidth.bitsPerSecond()},
                  {"latency_ps", spec.hosts.nvlinkLatency.picos()}}}};
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& t : spec.links.tierSpeeds) tiers.push_back(t.bitsPerSecond());
  j["links"] = {{"technology", spec.links.technology},
                {"host_speed_bps", spec.links.hostSpeed.bitsPerSecond()},
                {"fabric_speed_bps", spec.links.fabricSpeed.bitsPerSecond()},
                {"tier_speeds_bps", tiers},
                {"latency_ps", spec.links.latency.picos()},
                {"mtu_bytes", spec.links.mtu}};
  j["switch"] = {{"buffer_bytes", spec.sw.buffer},
                 {"latency_ps", spec.sw.latency.picos()},
                 {"dt_alpha", spec.sw.dtAlpha},
                 {"ecn",
                  {{"enabled", spec.sw.ecn.enabled},
                   {"kmin_bytes", spec.sw.ecn.kmin},
                   {"kmax_bytes", spec.sw.ecn.kmax},
                   {"pmax", spec.sw.ecn.pmax}}},
                 {"pfc",
                  {{"enabled", spec.sw.pfc.enabled},
                   {"xoff_bytes", spec.sw.pfc.xoff},
                   {"xon_bytes", spec.sw.pfc.xon}}}};
  j["routing"] = {{"algorithm", spec.routing.algorithm}, {"hash_seed", spec.routing.hashSeed}};
  j["nic"] = {{"reorder", spec.nic.reorder},
              {"retransmit_timeout_ps", spec.nic.retransmitTimeout.picos()},
              {"ack_every", spec.nic.ackEvery},
              {"window_bytes", spec.nic.window}};
  j["congestion_control"] = {{"algorithm", spec.congestionControl.algorithm}};
  j["workload"] = spec.workload;
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : spec.failures) {
    nlohmann::json e = {{"at_ps", f.at.picos()}, {"action", f.action}};
    if (!f.link.empty()) e["link"] = f.link;
    if (!f.node.empty()) e["switch"] = f.node;
    failures.push_back(e);
  }
  j["failures"] = failures;
  return j;
}

nlohmann::json toJson(const WorkloadSpec& spec) {
  const PatternSpec& p = spec.pattern;
  nlohmann::json j = {{"file", spec.file},
                      {"name", spec.name},
                      {"kind", spec.kind},
                      {"pattern", toString(p.pattern)},
                      {"message_size_bytes", p.messageSize},
                      {"start_ps", p.start.picos()},
                      {"repetitions", p.repetitions},
                      {"gap_ps", p.gap.picos()},
                      {"traffic_class", p.trafficClass},
                      {"gpus", {{"first", p.firstGpu}, {"count", p.gpus}}},
                      {"qps_per_pair", p.qpsPerPair}};
  if (p.pattern == PatternKind::Incast) j["incast"] = {{"senders", p.incastSenders}, {"receiver", p.incastReceiver}};
  return j;
}

}  // namespace fabricsim
