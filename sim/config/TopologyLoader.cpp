#include "sim/config/TopologyLoader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/config/DcqcnPresets.h"
#include "sim/config/IbSmSectionReader.h"
#include "sim/config/MemoryEstimate.h"
#include "sim/config/NicSectionReader.h"
#include "sim/config/RunSectionsReader.h"
#include "sim/config/SetOverride.h"
#include "sim/config/SwitchSectionReader.h"
#include "sim/config/TopologySize.h"
#include "sim/config/YamlReader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

using YAML::Node;

// The largest fabric fabricsim is built for has 100K GPUs (the 98,304-GPU rail-optimized
// fabric: 12,288 hosts, 294,912 links; a k=64 fat-tree, 65,536 hosts, builds its routes in 5 s).
// The limits leave 2.6x (GPUs, hosts) and 14x (links) of room; beyond them a fabric took minutes
// and gigabytes before failing (a k=128 fat-tree; a 45M-link leaf-spine ran out of memory).
constexpr int64_t kMaxGpusTotal = 262'144;
constexpr int64_t kMaxHostsTotal = 262'144;
constexpr int64_t kMaxLinksTotal = 4'194'304;

bool readKind(YamlReader& r, const Node& m, const std::string& p, TopologyKind& out, bool railLevel) {
  std::string s;
  if (!YamlReader::has(m, "kind")) {
    r.require(m, p, "kind");
    return false;
  }
  const Node v = m["kind"];
  const std::string kp = YamlReader::join(p, "kind");
  if (!v.IsScalar()) {
    r.error(v, kp, "expected a topology kind, found " + YamlReader::describe(v));
    return false;
  }
  s = v.Scalar();
  if (s == "leaf-spine")
    out = TopologyKind::LeafSpine;
  else if (s == "fat-tree")
    out = TopologyKind::FatTree;
  else if (s == "rail-optimized" && !railLevel)
    out = TopologyKind::RailOptimized;
  else {
    const std::string supported =
        railLevel ? "leaf-spine | fat-tree" : "leaf-spine | fat-tree | rail-optimized";
    if (s == "explicit" || s == "multi-plane")
      r.error(v, kp, "kind '" + s + "' is not supported yet; supported: " + supported);
    else
      r.error(v, kp, "expected one of " + supported + ", found '" + s + "'");
    return false;
  }
  return true;
}

void readLeafSpine(YamlReader& r, const Node& m, const std::string& p, LeafSpineShape& s) {
  r.read(m, p, "leaves", s.leaves);
  r.read(m, p, "spines", s.spines);
  r.read(m, p, "hosts_per_leaf", s.hostsPerLeaf);
  r.read(m, p, "links_per_spine", s.linksPerSpine);
}

void readFatTree(YamlReader& r, const Node& m, const std::string& p, FatTreeShape& s) {
  int radix = 0;
  if (r.read(m, p, "radix", radix)) {
    if (radix % 2 != 0) {
      r.error(m["radix"], YamlReader::join(p, "radix"),
              "expected an even radix (a k-ary fat-tree splits each switch's k ports in half), found " +
                  std::to_string(radix));
    } else {
      s.radix = radix;
      s.pods = radix;
      s.hostsPerEdge = radix / 2;
    }
  }
  int pods = 0;
  if (r.read(m, p, "pods", pods)) {
    if (s.radix > 0 && pods > s.radix)
      r.error(m["pods"], YamlReader::join(p, "pods"),
              "expected at most radix (" + std::to_string(s.radix) + ") pods, one per core port, found " +
                  std::to_string(pods));
    else
      s.pods = pods;
  }
  r.read(m, p, "hosts_per_edge", s.hostsPerEdge);
}

void readTopologySection(YamlReader& r, const Node& t, TopologySpec& spec, bool& kindOk) {
  const std::string p = "topology";
  kindOk = false;
  if (!r.expectMap(t, p)) return;
  kindOk = readKind(r, t, p, spec.kind, false);
  r.checkKeys(t, p);  // the keys of the kind given, or of every kind when it is not valid
  if (!kindOk) return;
  switch (spec.kind) {
    case TopologyKind::LeafSpine:
      readLeafSpine(r, t, p, spec.leafSpine);
      break;
    case TopologyKind::FatTree:
      readFatTree(r, t, p, spec.fatTree);
      break;
    case TopologyKind::RailOptimized: {
      r.read(t, p, "rails", spec.rail.rails);
      r.read(t, p, "shared_spines", spec.rail.sharedSpines);
      if (!r.require(t, p, "rail")) break;
      const Node rail = t["rail"];
      const std::string rp = "topology.rail";
      if (!r.expectMap(rail, rp)) break;
      const bool railKindOk = readKind(r, rail, rp, spec.rail.railKind, true);
      r.checkKeys(rail, rp);
      if (!railKindOk) {
        kindOk = false;
        break;
      }
      if (spec.rail.railKind == TopologyKind::LeafSpine)
        readLeafSpine(r, rail, rp, spec.rail.leafSpine);
      else
        readFatTree(r, rail, rp, spec.rail.fatTree);
      break;
    }
  }
}

void readHosts(YamlReader& r, const Node& root, TopologySpec& spec) {
  const std::string p = "hosts";
  const bool rail = spec.kind == TopologyKind::RailOptimized;
  const int rails = spec.rail.rails;
  if (rail && rails > 0) {
    spec.hosts.gpusPerHost = rails;
    spec.hosts.nicsPerHost = rails;
  }
  Node h;
  if (YamlReader::has(root, "hosts")) {
    h = root["hosts"];
    if (!r.expectMap(h, p)) return;
    r.checkKeys(h, p);
    const bool gpusGiven = r.read(h, p, "gpus_per_host", spec.hosts.gpusPerHost);
    const bool nicsGiven = r.read(h, p, "nics_per_host", spec.hosts.nicsPerHost);
    if (!nicsGiven && !rail && gpusGiven) spec.hosts.nicsPerHost = spec.hosts.gpusPerHost;
    if (YamlReader::has(h, "nvlink")) {
      const Node nv = h["nvlink"];
      const std::string np = "hosts.nvlink";
      if (r.expectMap(nv, np)) {
        r.checkKeys(nv, np);
        r.read(nv, np, "bandwidth", spec.hosts.nvlinkBandwidth);
        r.read(nv, np, "latency", spec.hosts.nvlinkLatency);
      }
    }
  }
  const int g = spec.hosts.gpusPerHost;
  const int n = spec.hosts.nicsPerHost;
  const Node at = YamlReader::has(h, "nics_per_host") ? h["nics_per_host"] : (h.IsDefined() ? h : root);
  const std::string atKey = YamlReader::has(h, "nics_per_host") ? "hosts.nics_per_host" : "hosts";
  if (rail && rails > 0 && n != rails) {
    r.error(at, atKey,
            "a rail-optimized host has one NIC per rail: expected nics_per_host = rails (" +
                std::to_string(rails) + "), found " + std::to_string(n));
  } else if (n > g || g % n != 0) {
    r.error(at, atKey,
            "expected nics_per_host to divide gpus_per_host (" + std::to_string(g) + "), found " +
                std::to_string(n));
  }
}

void readLinks(YamlReader& r, const Node& root, TopologySpec& spec, int switchTiers) {
  if (!YamlReader::has(root, "links")) return;
  const Node l = root["links"];
  const std::string p = "links";
  if (!r.expectMap(l, p)) return;
  r.checkKeys(l, p);
  r.read(l, p, "technology", spec.links.technology);
  r.read(l, p, "host_speed", spec.links.hostSpeed);
  r.read(l, p, "fabric_speed", spec.links.fabricSpeed);
  if (YamlReader::has(l, "tier_speeds")) {
    const Node ts = l["tier_speeds"];
    const std::string tp = "links.tier_speeds";
    if (r.expectSequence(ts, tp)) {
      const size_t maxLen = switchTiers > 1 ? static_cast<size_t>(switchTiers - 1) : 2;
      if (ts.size() > maxLen) {
        r.error(ts, tp,
                "expected at most " + std::to_string(maxLen) + " rates (one per switch-to-switch tier: " +
                    (maxLen == 1 ? std::string("leaf-spine") : std::string("edge-agg, agg-core")) +
                    "), found " + std::to_string(ts.size()));
      } else {
        std::vector<BitRate> rates;
        bool ok = true;
        for (size_t i = 0; i < ts.size(); ++i) {
          BitRate b;
          ok = r.asRate(ts[i], YamlReader::index(tp, i), b) && ok;
          rates.push_back(b);
        }
        if (ok) spec.links.tierSpeeds = std::move(rates);
      }
    }
  }
  r.read(l, p, "latency", spec.links.latency);
  r.read(l, p, "mtu", spec.links.mtu);
}

/// "0", "0bps", "0.0Gbps": a rate of zero (a rate key's "off"), which parseBitRate refuses.
bool isZeroRate(const Node& v) {
  if (!v.IsScalar()) return false;
  const std::string& s = v.Scalar();
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || x != 0) return false;
  const std::string unit(end);
  return unit.empty() || parseBitRate("1" + unit).value.has_value();
}

void readDcqcnOverrides(YamlReader& r, const Node& m, const std::string& p, const TopologySpec& topo,
                        DcqcnSpec& d) {
  if (!r.expectMap(m, p)) return;
  r.checkKeys(m, p);
  // The preset implied a variant (dcqcn-paper: paper, connectx: mlx); an explicit one wins.
  r.read(m, p, "variant", d.variant);
  r.read(m, p, "g", d.g);
  r.read(m, p, "initial_alpha", d.initialAlpha);
  r.read(m, p, "alpha_timer", d.alphaTimer);
  r.read(m, p, "rate_increase_timer", d.rateIncreaseTimer);
  if (YamlReader::has(m, "byte_counter")) {  // a size, or 0 / off: rate increase by the timer alone
    const Node v = m["byte_counter"];
    if (v.IsScalar() && (v.Scalar() == "0" || v.Scalar() == "off"))
      d.byteCounter = 0;
    else
      r.asBytes(v, YamlReader::join(p, "byte_counter"), d.byteCounter, false, 0);
  }
  r.read(m, p, "fast_recovery_stages", d.fastRecoveryStages);
  r.read(m, p, "additive_increase", d.additiveIncrease);
  r.read(m, p, "hyper_increase", d.hyperIncrease);
  BitRate minRate;
  if (r.read(m, p, "min_rate", minRate)) {
    if (minRate > topo.links.hostSpeed)
      r.error(m["min_rate"], YamlReader::join(p, "min_rate"),
              "expected a rate at most links.host_speed (" + formatRate(topo.links.hostSpeed) + "), found " +
                  formatRate(minRate));
    else
      d.minRate = minRate;
  }
  const bool intervalGiven = r.read(m, p, "rate_reduce_interval", d.rateReduceInterval);
  const std::string ip = YamlReader::join(p, "rate_reduce_interval");
  if (d.variant == "paper") {
    if (intervalGiven && d.rateReduceInterval > Time::zero())
      r.error(m["rate_reduce_interval"], ip,
              "expected 0 with variant paper (its reaction point cuts on every CNP; the ConnectX "
              "decrease grid is variant: mlx), found " +
                  m["rate_reduce_interval"].Scalar());
    else
      d.rateReduceInterval = Time::zero();  // e.g. preset connectx with variant: paper
  } else if (d.rateReduceInterval <= Time::zero()) {
    if (intervalGiven)
      r.error(m["rate_reduce_interval"], ip,
              "expected a positive rate_reduce_interval with variant mlx (its cuts wait for ticks of this "
              "period; ConnectX: 4us), found 0");
    else  // variant mlx over a preset without a decrease grid (dcqcn-paper)
      r.error(YamlReader::has(m, "variant") ? m["variant"] : m, YamlReader::join(p, "variant"),
              "variant mlx needs a positive rate_reduce_interval (its cuts wait for ticks of that period; "
              "ConnectX: 4us) and the preset has none: set congestion_control.dcqcn.rate_reduce_interval");
  }
  r.read(m, p, "max_decrease_fraction", d.maxDecreaseFraction);
  r.read(m, p, "clamp_target_rate", d.clampTargetRate);
  r.read(m, p, "clamp_target_rate_after_time_increase", d.clampTargetRateAfterTimeIncrease);
  if (YamlReader::has(m, "rate_on_first_cnp")) {
    const Node v = m["rate_on_first_cnp"];
    const std::string vp = YamlReader::join(p, "rate_on_first_cnp");
    BitRate first;
    if (isZeroRate(v)) {
      d.rateOnFirstCnp = BitRate::bps(0);
    } else if (r.asRate(v, vp, first)) {
      if (first > topo.links.hostSpeed)
        r.error(v, vp,
                "expected 0 (off) or a rate at most links.host_speed (" + formatRate(topo.links.hostSpeed) +
                    "), found " + formatRate(first));
      else
        d.rateOnFirstCnp = first;
    }
  }
  r.read(m, p, "cnp_interval", d.cnpInterval);
}

void readIbCc(YamlReader& r, const Node& m, const std::string& p, IbCcSpec& ib) {
  if (!r.expectMap(m, p)) return;
  r.checkKeys(m, p);
  // IBTA A10: the CC table has at most 16384 entries (CCTI_Limit is a 14-bit index).
  r.read(m, p, "ccti_increase", ib.cctiIncrease);
  r.read(m, p, "ccti_limit", ib.cctiLimit);
  r.read(m, p, "ccti_timer", ib.cctiTimer);
  r.read(m, p, "cct_scale", ib.cctScale);
  r.read(m, p, "becn_interval", ib.becnInterval);
}

/// `congestion_control`: the algorithm, the DCQCN preset plus per-key overrides, IB CC parameters.
/// The dcqcn and ibcc maps are read whatever the algorithm (so a sweep over algorithms can share
/// one file); the algorithm must suit links.technology (dcqcn: roce, ibcc: infiniband).
void readCongestionControl(YamlReader& r, const Node& root, TopologySpec& spec) {
  CongestionControlSpec& cc = spec.congestionControl;
  const std::string p = "congestion_control";
  Node m;
  std::string preset = "dcqcn-paper";  // the preset that reproduces DCQCN's published behaviour here (README)
  if (YamlReader::has(root, p)) {
    m = root[p];
    if (!r.expectMap(m, p)) m = Node();
  }
  if (m.IsDefined()) {
    r.checkKeys(m, p);
    r.read(m, p, "algorithm", cc.algorithm);
    r.read(m, p, "preset", preset);
  }
  applyDcqcnPreset(preset, cc.dcqcn);
  if (!m.IsDefined()) return;
  if (YamlReader::has(m, "dcqcn")) readDcqcnOverrides(r, m["dcqcn"], p + ".dcqcn", spec, cc.dcqcn);
  if (YamlReader::has(m, "ibcc")) readIbCc(r, m["ibcc"], p + ".ibcc", cc.ibcc);
  const std::string& tech = spec.links.technology;
  const std::string ap = p + ".algorithm";
  if (cc.algorithm == "dcqcn" && tech != "roce")
    r.error(m["algorithm"], ap,
            "dcqcn is RoCEv2 congestion control: it needs links.technology: roce, found '" + tech +
                "' (InfiniBand uses ibcc)");
  if (cc.algorithm == "ibcc" && tech != "infiniband")
    r.error(m["algorithm"], ap,
            "ibcc is InfiniBand congestion control: it needs links.technology: infiniband, found '" + tech +
                "' (RoCEv2 uses dcqcn)");
}

/// adaptive and spray send one flow's packets over several paths, so they arrive out of order;
/// a strict (go-back-N) receiver answers every gap with a NACK and the sender resends from there
/// (a retransmission storm, README "Routing"): the pair is refused, at nic.reorder if the file
/// sets it, else at routing.algorithm.
void checkReorderTolerance(YamlReader& r, const Node& root, const TopologySpec& spec) {
  const std::string& algo = spec.routing.algorithm;
  if ((algo != "adaptive" && algo != "spray") || spec.nic.reorder != "strict") return;
  const auto has = [&](const char* section, const char* key) {
    return YamlReader::has(root, section) && root[section].IsMap() && YamlReader::has(root[section], key);
  };
  const bool set = has("nic", "reorder");
  r.error(set                           ? root["nic"]["reorder"]
          : has("routing", "algorithm") ? root["routing"]["algorithm"]
                                        : root,
          "nic.reorder",
          "routing.algorithm '" + algo +
              "' sends the packets of a flow over several paths, so they arrive out " +
              "of order, and a strict NIC (go-back-N" +
              (set ? std::string() : ", the default for links.technology 'roce'") +
              ") answers each gap with a NACK and a retransmission: set nic.reorder: tolerant (a NIC that " +
              "places out-of-order packets, as InfiniBand HCAs and Spectrum-X SuperNICs do), or use " +
              "routing.algorithm ecmp or flowlet");
}

/// routing.hash_fields, seeds, resilient_hashing (true | false | {buckets: N}) and wcmp.
void readEcmpHashing(YamlReader& r, const Node& m, RoutingSpec& routing) {
  if (YamlReader::has(m, "hash_fields")) {
    const Node f = m["hash_fields"];
    const std::string fp = "routing.hash_fields";
    if (r.expectSequence(f, fp)) {
      if (f.size() == 0)
        r.error(f, fp, "expected at least one header field (src_ip, dst_ip, protocol, src_port, dst_port)");
      std::vector<std::string> fields;
      for (size_t i = 0; i < f.size(); ++i) {
        std::string name;
        if (!r.asString(f[i], YamlReader::index(fp, i), name)) continue;
        if (name != "src_ip" && name != "dst_ip" && name != "protocol" && name != "src_port" &&
            name != "dst_port") {
          r.error(f[i], YamlReader::index(fp, i),
                  "unknown header field '" + name +
                      "'; expected one of: src_ip, dst_ip, protocol, src_port, dst_port");
        } else if (std::find(fields.begin(), fields.end(), name) != fields.end()) {
          r.error(f[i], YamlReader::index(fp, i), "header field '" + name + "' listed twice");
        } else {
          fields.push_back(name);
        }
      }
      if (!fields.empty()) routing.hashFields = fields;
    }
  }
  r.read(m, "routing", "seeds", routing.seeds);
  if (YamlReader::has(m, "resilient_hashing")) {
    const Node v = m["resilient_hashing"];
    const std::string vp = "routing.resilient_hashing";
    bool on = false;
    if (v.IsMap()) {
      r.checkKeys(v, vp);
      routing.resilientBuckets = 256;
      r.read(v, vp, "buckets", routing.resilientBuckets);
    } else if (v.IsScalar() && YAML::convert<bool>::decode(v, on)) {
      routing.resilientBuckets = on ? 256 : 0;
    } else {
      r.error(v, vp,
              "expected true, false or {buckets: N} (N from 64 to 4096), found " + YamlReader::describe(v));
    }
  }
  r.read(m, "routing", "wcmp", routing.wcmp);
}

void readRoutingNicCc(YamlReader& r, const Node& root, TopologySpec& spec) {
  if (YamlReader::has(root, "routing")) {
    const Node m = root["routing"];
    if (r.expectMap(m, "routing")) {
      r.checkKeys(m, "routing");
      r.read(m, "routing", "algorithm", spec.routing.algorithm);
      r.read(m, "routing", "control_plane", spec.routing.controlPlane);
      r.read(m, "routing", "hash_seed", spec.routing.hashSeed);
      r.read(m, "routing", "flowlet_gap", spec.routing.flowletGap);
      r.read(m, "routing", "adaptive_bias", spec.routing.adaptiveBias);
      r.read(m, "routing", "adaptive_quantum", spec.routing.adaptiveQuantum);
      r.read(m, "routing", "spray", spec.routing.spray);
      readEcmpHashing(r, m, spec.routing);
      r.read(m, "routing", "local_failover", spec.routing.localFailover);
      r.read(m, "routing", "failover_delay", spec.routing.failoverDelay);
      if (YamlReader::has(m, "bgp")) {
        const Node b = m["bgp"];
        const std::string bp = "routing.bgp";
        if (r.expectMap(b, bp)) {
          r.checkKeys(b, bp);
          BgpSpec& g = spec.routing.bgp;
          r.read(b, bp, "asn_scheme", g.asnScheme);
          r.read(b, bp, "update_delay", g.updateDelay);
          r.read(b, bp, "mrai", g.mrai);
          r.read(b, bp, "detection", g.detection);
          r.read(b, bp, "bfd_interval", g.bfdInterval);
          r.read(b, bp, "bfd_multiplier", g.bfdMultiplier);
        }
      }
    }
  }
  // `algorithm: bgp` (DESIGN.md's spelling) means ECMP hashing over BGP-derived tables.
  if (spec.routing.algorithm == "bgp") {
    spec.routing.algorithm = "ecmp";
    spec.routing.controlPlane = "bgp";
  }
  readNicSection(r, root, spec);
  readIbSmSection(r, root, spec);
  checkReorderTolerance(r, root, spec);
  readCongestionControl(r, root, spec);
}

}  // namespace

const char* toString(TopologyKind k) {
  switch (k) {
    case TopologyKind::LeafSpine:
      return "leaf-spine";
    case TopologyKind::FatTree:
      return "fat-tree";
    case TopologyKind::RailOptimized:
      return "rail-optimized";
  }
  return "unknown";
}

std::string readInputFile(const std::string& path) {
  // Only a regular file: a FIFO would block until a writer came, a device such as /dev/zero
  // never ends. And one that fits in memory with room to spare (the largest inputs, traces of
  // 100K ranks, are a few hundred MiB).
  constexpr uintmax_t kMaxBytes = uintmax_t{4} << 30;
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) throw InputError(path, 0, 0, "", "cannot open file: no such file");
  if (std::filesystem::is_directory(st)) throw InputError(path, 0, 0, "", "is a directory, expected a file");
  if (!std::filesystem::is_regular_file(st))
    throw InputError(path, 0, 0, "", "is not a regular file (a device, FIFO or socket); expected a file");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxBytes)
    throw InputError(path, 0, 0, "",
                     "is " + std::to_string(size >> 20) + " MiB; expected an input file of at most " +
                         std::to_string(kMaxBytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "", "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, 0, "", "cannot read file");
  return ss.str();
}

TopologySpec loadTopologyFile(const std::string& path, const std::vector<std::string>& setOverrides) {
  return parseTopologyYaml(readInputFile(path), path, setOverrides);
}

TopologySpec parseTopologyYaml(const std::string& yamlText, const std::string& file,
                               const std::vector<std::string>& setOverrides) {
  Node root;
  try {
    root = YAML::Load(yamlText);
  } catch (const YAML::Exception& e) {
    throw InputError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                     "", "invalid YAML: " + e.msg);
  }
  YamlReader r(file);
  r.useSchema(topologySchema(), root);
  for (const auto& a : setOverrides) {
    try {
      applySetOverride(root, a);
    } catch (const InputError& e) {
      std::vector<Diagnostic> d = e.diagnostics();
      for (auto& x : d) x.file = file;
      throw InputError(std::move(d));
    }
    r.addOverride(parseSetAssignment(a).keyPath, a);
  }

  TopologySpec spec;
  spec.file = file;
  spec.setOverrides = setOverrides;
  spec.name = std::filesystem::path(file).stem().string();
  if (!root.IsMap()) {
    r.error(root, "",
            "expected a map of topology keys (name, topology, hosts, links, ...), found " +
                YamlReader::describe(root));
    r.throwIfErrors();
  }
  r.checkKeys(root, "");
  r.read(root, "", "name", spec.name);

  bool kindOk = false;
  if (r.require(root, "", "topology")) readTopologySection(r, root["topology"], spec, kindOk);
  readHosts(r, root, spec);
  const TopologySize size = kindOk ? topologySize(spec) : TopologySize{};
  readLinks(r, root, spec, size.switchTiers);
  readSwitch(r, root, spec);
  readRoutingNicCc(r, root, spec);

  std::string workload;
  if (r.read(root, "", "workload", workload)) {
    const std::filesystem::path w(workload);
    spec.workload = w.is_absolute()
                        ? w.lexically_normal().string()
                        : (std::filesystem::path(file).parent_path() / w).lexically_normal().string();
  }
  readFailures(r, root, spec);
  readWatchdog(r, root, spec);
  readEpisodes(r, root, spec);

  if (kindOk && !r.hasErrors()) {
    const int64_t gpus = size.gpus;
    if (gpus > kMaxGpusTotal || size.hosts > kMaxHostsTotal || size.links > kMaxLinksTotal) {
      r.error(root["topology"], "topology",
              "the fabric is too large to build: " + std::to_string(gpus) + " GPUs on " +
                  std::to_string(size.hosts) + " hosts and about " + std::to_string(size.links) +
                  " links (limits: " + std::to_string(kMaxGpusTotal) + " GPUs, " +
                  std::to_string(kMaxHostsTotal) + " hosts, " + std::to_string(kMaxLinksTotal) +
                  " links: 2.6 times the 100K-GPU fabrics it is built for); it would need about " +
                  formatMemory(estimateMemory(size, "flow", size.gpus).total()) +
                  " of memory on the flow backend alone");
    }
  }
  r.throwIfErrors();
  return spec;
}

}  // namespace fabricsim
