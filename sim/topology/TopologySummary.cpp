#include "sim/topology/TopologySummary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>

namespace fabricsim {
namespace {

bool isLeafSpineShape(const TopologySpec& spec) {
  return spec.kind == TopologyKind::LeafSpine ||
         (spec.kind == TopologyKind::RailOptimized && spec.rail.railKind == TopologyKind::LeafSpine);
}

const char* switchRole(bool leafSpine, int tier) {
  if (leafSpine) return tier == 1 ? "leaf" : "spine";
  return tier == 1 ? "edge" : tier == 2 ? "agg" : "core";
}

const char* linkRole(bool leafSpine, int tier) {
  if (leafSpine) return tier == 0 ? "host-leaf" : "leaf-spine";
  return tier == 0 ? "host-edge" : tier == 1 ? "edge-agg" : "agg-core";
}

std::string ratioText(double ratio) {
  char buf[64];
  if (ratio >= 1.0)
    std::snprintf(buf, sizeof buf, "%.3g:1", ratio);
  else
    std::snprintf(buf, sizeof buf, "1:%.3g", 1.0 / ratio);
  return buf;
}

std::string rateText(double bps) {
  char buf[64];
  if (bps >= 1e15) std::snprintf(buf, sizeof buf, "%.4g Pb/s", bps * 1e-15);
  else if (bps >= 1e12) std::snprintf(buf, sizeof buf, "%.4g Tb/s", bps * 1e-12);
  else std::snprintf(buf, sizeof buf, "%.4g Gb/s", bps * 1e-9);
  return buf;
}

// Eccentricity of host `src` over hosts: BFS that never expands a host other than the source.
int hostEccentricity(const Topology& topo, NodeId src, std::vector<int32_t>& dist) {
  const auto& g = topo.graph();
  std::fill(dist.begin(), dist.end(), -1);
  std::vector<NodeId> queue;
  queue.reserve(topo.nodeCount());
  dist[src] = 0;
  queue.push_back(src);
  for (size_t head = 0; head < queue.size(); ++head) {
    const NodeId v = queue[head];
    if (v != src && topo.isHost(v)) continue;
    auto [it, end] = boost::adjacent_vertices(v, g);
    for (; it != end; ++it) {
      const NodeId u = static_cast<NodeId>(*it);
      if (dist[u] >= 0) continue;
      dist[u] = dist[v] + 1;
      queue.push_back(u);
    }
  }
  int ecc = 0;
  for (NodeId h = 0; h < topo.hostCount(); ++h) {
    if (dist[h] < 0) return -1;
    ecc = std::max(ecc, dist[h]);
  }
  return ecc;
}

}  // namespace

int hostDiameter(const Topology& topo) {
  if (topo.hostCount() == 0) return 0;
  std::vector<int32_t> dist(topo.nodeCount(), -1);
  const int a = hostEccentricity(topo, 0, dist);
  if (a < 0 || topo.hostCount() == 1) return a;
  const int b = hostEccentricity(topo, static_cast<NodeId>(topo.hostCount() - 1), dist);
  return b < 0 ? -1 : std::max(a, b);
}

TopologySummary summarizeTopology(const TopologySpec& spec, const Topology& topo) {
  TopologySummary s;
  const bool ls = isLeafSpineShape(spec);
  s.name = spec.name;
  s.kind = toString(spec.kind);
  if (spec.kind == TopologyKind::RailOptimized) {
    s.railKind = toString(spec.rail.railKind);
    s.rails = spec.rail.rails;
    s.sharedSpines = spec.rail.sharedSpines;
  }
  s.technology = spec.links.technology;
  s.hosts = topo.hostCount();
  s.gpus = topo.gpuCount();
  s.nics = topo.nicCount();
  s.switches = topo.switchCount();
  s.links = topo.linkCount();
  s.mtu = spec.links.mtu;
  s.switchBuffer = spec.sw.buffer;
  s.linkLatency = spec.links.latency;

  const int tiers = topo.tiers();
  std::vector<size_t> switchesPerTier(static_cast<size_t>(tiers) + 1, 0);
  for (NodeId n = static_cast<NodeId>(topo.hostCount()); n < topo.nodeCount(); ++n)
    ++switchesPerTier[topo.node(n).tier];
  for (int t = 1; t <= tiers; ++t)
    s.switchTiers.push_back({t, switchRole(ls, t), switchesPerTier[static_cast<size_t>(t)]});

  std::vector<LinkTierSummary> lt(static_cast<size_t>(std::max(tiers, 1)));
  for (size_t t = 0; t < lt.size(); ++t) {
    lt[t].tier = static_cast<int>(t);
    lt[t].role = linkRole(ls, static_cast<int>(t));
    lt[t].rate = spec.tierSpeed(static_cast<int>(t));
  }
  for (LinkId l = 0; l < topo.linkCount(); ++l) {
    const LinkInfo& li = topo.link(l);
    if (li.tier >= lt.size()) continue;
    auto& x = lt[li.tier];
    ++x.links;
    x.capacityBps += static_cast<double>(li.rate.bitsPerSecond());
  }
  s.linkTiers = lt;

  s.bisectionBps = std::numeric_limits<double>::infinity();
  for (const auto& x : lt)
    if (x.links > 0) s.bisectionBps = std::min(s.bisectionBps, x.capacityBps / 2);
  if (!std::isfinite(s.bisectionBps)) s.bisectionBps = 0;

  for (size_t t = 1; t < lt.size(); ++t) {
    OversubscriptionSummary o;
    o.tier = static_cast<int>(t);
    o.role = switchRole(ls, static_cast<int>(t));
    o.downlinkBps = lt[t - 1].capacityBps;
    o.uplinkBps = lt[t].capacityBps;
    if (o.uplinkBps <= 0) continue;
    o.ratio = o.downlinkBps / o.uplinkBps;
    o.text = ratioText(o.ratio);
    s.oversubscription.push_back(o);
  }
  s.diameter = hostDiameter(topo);
  return s;
}

nlohmann::json TopologySummary::toJson() const {
  nlohmann::json j;
  j["name"] = name;
  j["kind"] = kind;
  if (!railKind.empty()) {
    j["rail_kind"] = railKind;
    j["rails"] = rails;
    j["shared_spines"] = sharedSpines;
  }
  j["technology"] = technology;
  j["hosts"] = hosts;
  j["gpus"] = gpus;
  j["nics"] = nics;
  nlohmann::json st = nlohmann::json::array();
  for (const auto& t : switchTiers) st.push_back({{"tier", t.tier}, {"role", t.role}, {"count", t.switches}});
  j["switches"] = {{"total", switches}, {"tiers", st}};
  nlohmann::json ltj = nlohmann::json::array();
  for (const auto& t : linkTiers)
    ltj.push_back({{"tier", t.tier},
                   {"role", t.role},
                   {"count", t.links},
                   {"rate_bps", t.rate.bitsPerSecond()},
                   {"capacity_bps", t.capacityBps}});
  j["links"] = {{"total", links}, {"tiers", ltj}};
  j["bisection_bps"] = bisectionBps;
  nlohmann::json os = nlohmann::json::array();
  for (const auto& o : oversubscription)
    os.push_back({{"tier", o.tier},
                  {"role", o.role},
                  {"downlink_bps", o.downlinkBps},
                  {"uplink_bps", o.uplinkBps},
                  {"ratio", o.ratio},
                  {"text", o.text}});
  j["oversubscription"] = os;
  j["diameter_links"] = diameter;
  j["mtu_bytes"] = mtu;
  j["switch_buffer_bytes"] = switchBuffer;
  j["link_latency_ps"] = linkLatency.picos();
  return j;
}

std::string TopologySummary::toText() const {
  std::string out;
  char buf[256];
  const auto line = [&](const char* label, const std::string& value) {
    std::snprintf(buf, sizeof buf, "  %-18s %s\n", label, value.c_str());
    out += buf;
  };
  out += name + " (" + kind;
  if (!railKind.empty())
    out += ", " + std::to_string(rails) + " " + railKind + " rails" + (sharedSpines ? ", shared top tier" : "");
  out += ")\n";
  line("hosts", std::to_string(hosts) + " (" + std::to_string(gpus) + " GPUs, " + std::to_string(nics) + " NICs)");
  std::string sw = std::to_string(switches);
  for (size_t i = 0; i < switchTiers.size(); ++i)
    sw += (i == 0 ? ": " : ", ") + std::to_string(switchTiers[i].switches) + " " + switchTiers[i].role + " (tier " +
          std::to_string(switchTiers[i].tier) + ")";
  line("switches", sw);
  line("links", std::to_string(links));
  for (const auto& t : linkTiers) {
    std::snprintf(buf, sizeof buf, "    %-16s %zu x %s\n", t.role.c_str(), t.links, formatRate(t.rate).c_str());
    out += buf;
  }
  line("bisection", rateText(bisectionBps));
  std::string os;
  for (const auto& o : oversubscription) os += (os.empty() ? "" : ", ") + o.role + " " + o.text;
  line("oversubscription", os.empty() ? "none (single tier)" : os);
  line("diameter", diameter < 0 ? std::string("disconnected") : std::to_string(diameter) + " links host to host");
  line("technology", technology);
  line("mtu", std::to_string(mtu) + " B");
  line("link latency", formatTime(linkLatency));
  line("switch buffer", formatBytes(switchBuffer));
  return out;
}

}  // namespace fabricsim
