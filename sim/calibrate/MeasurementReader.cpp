#include "sim/calibrate/MeasurementReader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "sim/calibrate/HarnessJson.h"
#include "sim/calibrate/NcclTestsParser.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

// A one-GPU run (the gpu/ harness on a single GPU, nccl-tests with -g 1) times only the launch
// and a local copy: there is no peer, so nothing of NVLink, NICs or the network to fit or compare.
constexpr const char* kOneRank =
    "expected at least 2 ranks: a collective on one GPU has no peer, so it measures no NVLink or "
    "network time (found 1)";

using Diags = std::vector<Diagnostic>;

/// key=value pairs of the '# fabricsim:' comment lines of `text`.
std::map<std::string, std::string> metaLines(const std::string& text) {
  std::map<std::string, std::string> out;
  static const std::regex line("#\\s*fabricsim:\\s*(.*)");
  static const std::regex kv("([A-Za-z_]+)=(\"[^\"]*\"|\\S+)");
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    const std::string body = m[1].str();
    for (auto it = std::sregex_iterator(body.begin(), body.end(), kv); it != std::sregex_iterator(); ++it) {
      std::string v = (*it)[2].str();
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      out[(*it)[1].str()] = v;
    }
  }
  return out;
}

uint32_t positive(const std::string& file, const std::string& key, const std::string& v) {
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || x <= 0 || x > 10'000'000)
    throw InputError(file, 0, 0, key, "expected a positive whole number, found '" + v + "'");
  return static_cast<uint32_t>(x);
}

/// Applies the '# fabricsim:' metadata, then the overrides, and checks what the fit needs.
void finish(Measurement& m, const std::map<std::string, std::string>& meta,
            const MeasurementReader::Overrides& o, bool opKnown) {
  Diags d;
  if (auto it = meta.find("op"); it != meta.end()) {
    if (auto op = parseCollectiveOp(it->second)) {
      m.op = *op;
      opKnown = true;
    } else {
      d.push_back({m.file, 0, 0, "fabricsim: op",
                   "expected all_reduce, all_gather, reduce_scatter, alltoall, "
                   "broadcast or sendrecv, found '" +
                       it->second + "'"});
    }
  }
  if (auto it = meta.find("ranks"); it != meta.end())
    m.ranks = positive(m.file, "fabricsim: ranks", it->second);
  if (auto it = meta.find("hosts"); it != meta.end())
    m.hosts = positive(m.file, "fabricsim: hosts", it->second);
  if (auto it = meta.find("gpu"); it != meta.end()) m.gpuModel = it->second;
  if (auto it = meta.find("algorithm"); it != meta.end()) m.algorithm = it->second;
  if (auto it = meta.find("protocol"); it != meta.end()) m.protocol = it->second;
  if (o.op) {
    m.op = *o.op;
    opKnown = true;
  }
  if (o.ranks > 0) m.ranks = o.ranks;
  if (o.gpusPerHost > 0 && m.ranks > 0) m.hosts = std::max<uint32_t>(1, m.ranks / o.gpusPerHost);
  if (!opKnown)
    d.push_back({m.file, 0, 0, "op",
                 "the file does not say which collective it measured: add a line "
                 "'# fabricsim: op=all_reduce ranks=8 hosts=1' or pass --op"});
  if (m.ranks == 0)
    d.push_back({m.file, 0, 0, "ranks",
                 "the file does not say how many ranks ran: add 'ranks=N hosts=H' to a "
                 "'# fabricsim:' line or pass --ranks and --gpus-per-host"});
  if (m.hosts == 0) m.hosts = 1;
  if (m.ranks > 0 && m.ranks % m.hosts != 0)
    d.push_back({m.file, 0, 0, "hosts",
                 "expected ranks (" + std::to_string(m.ranks) + ") to divide evenly over " +
                     std::to_string(m.hosts) + " hosts"});
  if (m.points.empty()) d.push_back({m.file, 0, 0, "", "expected measured rows, found none"});
  if (!d.empty()) throw InputError(std::move(d));
  m.gpusPerHost = m.ranks / m.hosts;
  std::sort(m.points.begin(), m.points.end(), [](const Measurement::Point& a, const Measurement::Point& b) {
    return a.sizeBytes < b.sizeBytes;
  });
}

double csvNumber(const std::string& file, int line, const std::string& col, const std::string& v) {
  if (v == "N/A" || v.empty()) return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(x >= 0))
    throw InputError(file, line, 0, col, "expected a non-negative number or 'N/A', found '" + v + "'");
  return x;
}

/// A whole number in [least, 2^53] (exact in a double; sizes and counts of real runs are far
/// below): 'N/A', a fraction or anything beyond is an error, never cast.
double csvWhole(const std::string& file, int line, const std::string& col, const std::string& v, double least,
                const char* what) {
  const double x = csvNumber(file, line, col, v);
  if (!(x >= least) || x > 0x1p53 || x != std::floor(x))
    throw InputError(file, line, 0, col,
                     std::string("expected ") + what + " from " + std::to_string(static_cast<int>(least)) +
                         " to 2^53, found '" + v + "'");
  return x;
}

std::vector<Measurement> parseCsv(const std::string& text, const std::string& file,
                                  const MeasurementReader::Overrides& o) {
  Measurement m;
  m.file = m.label = file;
  std::vector<std::string> header;
  std::istringstream in(text);
  std::string l;
  int lineNo = 0;
  auto split = [](const std::string& s) {
    std::vector<std::string> f;
    std::string cur;
    std::istringstream ss(s);
    while (std::getline(ss, cur, ',')) f.push_back(cur);
    if (!s.empty() && s.back() == ',') f.emplace_back();
    return f;
  };
  while (std::getline(in, l)) {
    ++lineNo;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (l.empty() || l[0] == '#') continue;
    const auto f = split(l);
    if (header.empty()) {
      header = f;
      if (std::find(header.begin(), header.end(), "size_bytes") == header.end() &&
          std::find(header.begin(), header.end(), "size_bytes_assumed") == header.end())
        throw InputError(
            file, lineNo, 0, "",
            "expected a CSV header row with a size_bytes (or size_bytes_assumed) column, found '" + l + "'");
      continue;
    }
    if (f.size() != header.size())
      throw InputError(file, lineNo, 0, "",
                       "expected " + std::to_string(header.size()) +
                           " comma-separated fields as in the header, found " + std::to_string(f.size()));
    Measurement::Point p;
    p.line = lineNo;
    for (size_t i = 0; i < f.size(); ++i) {
      const std::string& c = header[i];
      if (c == "size_bytes" || c == "size_bytes_assumed") {
        p.sizeBytes = static_cast<int64_t>(csvWhole(file, lineNo, c, f[i], 1, "a whole number of bytes"));
      } else if (c == "count") {
        p.count = static_cast<uint64_t>(csvWhole(file, lineNo, c, f[i], 0, "a whole element count"));
      } else if (c == "type") {
        m.dataType = f[i];
      } else if (c == "oop_time_us") {
        p.oopTimeUs = csvNumber(file, lineNo, c, f[i]);
      } else if (c == "oop_algbw_GBps") {
        p.oopAlgbwGBps = csvNumber(file, lineNo, c, f[i]);
      } else if (c == "oop_busbw_GBps") {
        p.oopBusbwGBps = csvNumber(file, lineNo, c, f[i]);
      } else if (c == "ip_time_us") {
        p.ipTimeUs = csvNumber(file, lineNo, c, f[i]);
      } else if (c == "ip_algbw_GBps") {
        p.ipAlgbwGBps = csvNumber(file, lineNo, c, f[i]);
      } else if (c == "ip_busbw_GBps" || c == "busbw_GBps_inplace") {
        p.ipBusbwGBps = csvNumber(file, lineNo, c, f[i]);
      } else if (c == "oop_wrong" || c == "ip_wrong") {
        const double w = csvNumber(file, lineNo, c, f[i]);
        (c == "oop_wrong" ? p.oopWrong : p.ipWrong) = std::isfinite(w) ? static_cast<int64_t>(w) : -1;
      }
    }
    m.points.push_back(p);
  }
  finish(m, metaLines(text), o, false);
  return {m};
}

std::vector<Measurement> parseYamlTables(const std::string& text, const std::string& file,
                                         const MeasurementReader::Overrides& o) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                     "", "invalid YAML: " + e.msg);
  }
  auto at = [&](const YAML::Node& n, const std::string& key, const std::string& what) {
    return InputError(file, n.Mark().is_null() ? 0 : n.Mark().line + 1,
                      n.Mark().is_null() ? 0 : n.Mark().column + 1, key, what);
  };
  if (!root.IsMap() || !root["tables"] || !root["tables"].IsSequence())
    throw at(root, "tables", "expected a list `tables:` of {id, nodes, gpus_per_node, ranks, rows}");
  const auto meta = metaLines(text);
  std::vector<Measurement> out;
  int t = 0;
  for (const auto& tab : root["tables"]) {
    const std::string key = "tables[" + std::to_string(t++) + "]";
    if (!tab.IsMap() || !tab["rows"] || !tab["rows"].IsSequence())
      throw at(tab, key,
               "expected a map with `rows:` (a list of [size, count, oop_time_us, oop_algbw, oop_busbw, "
               "ip_time_us, ip_algbw, ip_busbw])");
    Measurement m;
    m.file = file;
    if (tab["id"] && !tab["id"].IsScalar())
      throw at(tab["id"], key + ".id", "expected a table name (a string), found a list or map");
    m.label = file + "#" + (tab["id"] ? tab["id"].as<std::string>() : key);
    try {
      if (tab["ranks"]) m.ranks = tab["ranks"].as<uint32_t>();
      if (tab["nodes"]) m.hosts = tab["nodes"].as<uint32_t>();
      if (tab["env"]) {
        std::smatch sm;
        const std::string env = tab["env"].as<std::string>();
        if (env.size() > 4096)  // std::regex recurses per character: keep its input bounded
          throw at(tab["env"], key + ".env", "expected at most 4096 characters of environment settings");
        if (std::regex_search(env, sm, std::regex("NCCL_ALGO=([A-Za-z_,^]+)"))) {
          std::string a = sm[1].str();
          std::transform(a.begin(), a.end(), a.begin(), [](unsigned char c) { return std::tolower(c); });
          m.algorithm = a;
        }
        if (std::regex_search(env, sm, std::regex("NCCL_PROTO=([A-Za-z0-9_,^]+)"))) m.protocol = sm[1].str();
        static const std::regex boundRe("(NCCL_(?:MIN|MAX)_(?:CTAS|NCHANNELS))=([^\\s,;]*)");
        for (auto it = std::sregex_iterator(env.begin(), env.end(), boundRe); it != std::sregex_iterator(); ++it)
          if (!m.setChannelBound((*it)[1].str(), (*it)[2].str()))
            throw at(tab["env"], key + ".env",
                     "expected " + (*it)[1].str() + " to be a whole number from 1 to 64, found '" + (*it)[2].str() +
                         "'");
      }
    } catch (const YAML::Exception&) {
      throw at(tab, key, "expected ranks and nodes as positive whole numbers");
    }
    int r = 0;
    for (const auto& row : tab["rows"]) {
      const std::string rk = key + ".rows[" + std::to_string(r++) + "]";
      if (!row.IsSequence() || row.size() != 8)
        throw at(row, rk,
                 "expected [size, count, oop_time_us, oop_algbw, oop_busbw, ip_time_us, ip_algbw, ip_busbw]");
      Measurement::Point p;
      p.line = row.Mark().line + 1;
      try {
        p.sizeBytes = row[0].as<int64_t>();
        p.count = row[1].as<uint64_t>();
        double* dst[6] = {&p.oopTimeUs, &p.oopAlgbwGBps, &p.oopBusbwGBps,
                          &p.ipTimeUs,  &p.ipAlgbwGBps,  &p.ipBusbwGBps};
        for (size_t i = 0; i < 6; ++i) *dst[i] = row[i + 2].as<double>();
      } catch (const YAML::Exception&) {
        throw at(row, rk,
                 "expected whole numbers for size and count and numbers for the times and bandwidths");
      }
      if (p.sizeBytes <= 0) throw at(row, rk, "expected a positive size");
      m.points.push_back(p);
    }
    finish(m, meta, o, false);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Measurement> parseJson(const std::string& text, const std::string& file,
                                   const MeasurementReader::Overrides& o) {
  const nlohmann::json j = HarnessJson::parse(text, file);
  HarnessJson::require(
      j, text, file, MeasurementReader::kHarnessTool, MeasurementReader::kHarnessSchema, "collective result",
      "fabricsim-gpu-compute",
      "this is the harness's compute result: give it to `fabricsim calibrate --compute`, not as a "
      "collective measurement");
  auto lineOf = [&](const std::string& key) { return HarnessJson::lineOf(text, key); };
  Diags d;
  auto need = [&](bool ok, const std::string& key, const std::string& what) {
    const std::string top = key.substr(0, key.find_first_of(".["));
    if (!ok) d.push_back({file, key.empty() ? 1 : lineOf(top), 0, key, what});
    return ok;
  };
  Measurement m;
  m.file = m.label = file;
  bool opKnown = false;
  if (need(j.contains("op") && j["op"].is_string(), "op", "expected the collective's name (a string)")) {
    auto op = parseCollectiveOp(j["op"].get<std::string>());
    if (need(op.has_value(), "op",
             "expected all_reduce, all_gather, reduce_scatter, alltoall, broadcast or sendrecv, found '" +
                 j["op"].get<std::string>() + "'")) {
      m.op = *op;
      opKnown = true;
    }
  }
  if (need(j.contains("ranks") && j["ranks"].is_number_unsigned() && j["ranks"].get<uint64_t>() > 0 &&
               j["ranks"].get<uint64_t>() <= (1u << 24),
           "ranks", "expected a positive whole number (at most 2^24)") &&
      need(j["ranks"].get<uint64_t>() >= 2, "ranks", kOneRank))
    m.ranks = j["ranks"].get<uint32_t>();
  if (j.contains("hosts") && need(j["hosts"].is_array(), "hosts", "expected a list of host names")) {
    for (const auto& h : j["hosts"])
      if (need(h.is_string(), "hosts", "expected host names as strings"))
        m.hostNames.push_back(h.get<std::string>());
    m.hosts = static_cast<uint32_t>(m.hostNames.size());
  }
  if (j.contains("gpus_per_host") && !j["gpus_per_host"].is_null() &&
      need(j["gpus_per_host"].is_number_unsigned() && j["gpus_per_host"].get<uint64_t>() > 0 &&
               j["gpus_per_host"].get<uint64_t>() <= (1u << 16),
           "gpus_per_host", "expected a positive whole number"))
    m.gpusPerHost = j["gpus_per_host"].get<uint32_t>();
  if (j.contains("gpu") && j["gpu"].is_object() && j["gpu"].contains("model") &&
      j["gpu"]["model"].is_string())
    m.gpuModel = j["gpu"]["model"].get<std::string>();
  // NCCL_ALGO pins the algorithm of the whole run.
  if (j.contains("nccl") && j["nccl"].is_object() && j["nccl"].contains("env") &&
      j["nccl"]["env"].is_object() && j["nccl"]["env"].contains("NCCL_ALGO") &&
      j["nccl"]["env"]["NCCL_ALGO"].is_string()) {
    std::string a = j["nccl"]["env"]["NCCL_ALGO"].get<std::string>();
    std::transform(a.begin(), a.end(), a.begin(), [](unsigned char c) { return std::tolower(c); });
    m.algorithm = a;
  }
  if (j.contains("nccl") && j["nccl"].is_object() && j["nccl"].contains("env") && j["nccl"]["env"].is_object())
    for (const auto& [name, v] : j["nccl"]["env"].items())
      if (v.is_string()) {
        // NCCL_PROTO restricts the protocols of the whole run (a per-size record still wins).
        if (name == "NCCL_PROTO") m.protocol = v.get<std::string>();
        need(m.setChannelBound(name, v.get<std::string>()), "nccl.env." + name,
             "expected a whole number from 1 to 64");
      }
  if (need(j.contains("results") && j["results"].is_array() && !j["results"].empty(), "results",
           "expected `results`: a non-empty list of {size_bytes, count, type, redop, root, out_of_place, "
           "in_place, nccl}")) {
    size_t i = 0;
    for (const auto& r : j["results"]) {
      const std::string k = "results[" + std::to_string(i++) + "]";
      if (!need(r.is_object() && r.contains("size_bytes") && r["size_bytes"].is_number_integer() &&
                    r["size_bytes"].get<int64_t>() > 0,
                k + ".size_bytes", "expected a positive whole number of bytes"))
        continue;
      Measurement::Point p;
      p.sizeBytes = r["size_bytes"].get<int64_t>();
      if (r.contains("count") && r["count"].is_number_unsigned()) p.count = r["count"].get<uint64_t>();
      if (r.contains("type") && r["type"].is_string()) m.dataType = r["type"].get<std::string>();
      auto side = [&](const char* name, double& t, double& a, double& b, int64_t& w) {
        if (!r.contains(name) || r[name].is_null()) return;
        const auto& s = r[name];
        const std::string sk = k + "." + name;
        if (!need(s.is_object(), sk, "expected {time_us, algbw_GBps, busbw_GBps, wrong}")) return;
        auto num = [&](const char* f, double& out) {
          if (!s.contains(f) || s[f].is_null()) return;
          if (need(s[f].is_number() && std::isfinite(s[f].get<double>()) && s[f].get<double>() >= 0,
                   sk + "." + f, "expected a non-negative number"))
            out = s[f].get<double>();
        };
        num("time_us", t);
        num("algbw_GBps", a);
        num("busbw_GBps", b);
        if (s.contains("wrong") && s["wrong"].is_number_integer()) w = s["wrong"].get<int64_t>();
      };
      side("out_of_place", p.oopTimeUs, p.oopAlgbwGBps, p.oopBusbwGBps, p.oopWrong);
      side("in_place", p.ipTimeUs, p.ipAlgbwGBps, p.ipBusbwGBps, p.ipWrong);
      if (r.contains("nccl") && !r["nccl"].is_null()) {
        const auto& c = r["nccl"];
        if (need(c.is_object() && c.contains("algorithm") && c["algorithm"].is_string() &&
                     c.contains("protocol") && c["protocol"].is_string() && c.contains("channels") &&
                     c["channels"].is_number_unsigned() && c["channels"].get<uint64_t>() <= 1024,
                 k + ".nccl",
                 "expected {algorithm, protocol, channels} (what NCCL ran this size with) or null")) {
          p.ncclAlgorithm = c["algorithm"].get<std::string>();
          p.ncclProtocol = c["protocol"].get<std::string>();
          p.ncclChannels = c["channels"].get<int>();
        }
      }
      m.points.push_back(p);
    }
  }
  if (!d.empty()) throw InputError(std::move(d));
  if (m.hosts == 0 && m.gpusPerHost > 0 && m.ranks > 0)
    m.hosts = std::max<uint32_t>(1, m.ranks / m.gpusPerHost);
  if (m.hosts > 0 && m.ranks > 0 && m.ranks % m.hosts != 0)
    throw InputError(file, 0, 0, "hosts", "expected ranks to divide evenly over the hosts");
  finish(m, {}, o, opKnown);
  return {m};
}

}  // namespace

std::vector<Measurement> MeasurementReader::read(const std::string& path) {
  return read(path, Overrides{});
}

std::vector<Measurement> MeasurementReader::parse(const std::string& text, const std::string& fileName) {
  return parse(text, fileName, Overrides{});
}

std::vector<Measurement> MeasurementReader::read(const std::string& path, const Overrides& o) {
  // FILE#ID selects one table of a file with several.
  const size_t hash = path.rfind('#');
  std::error_code ec;
  if (hash == std::string::npos || std::filesystem::exists(path, ec))
    return parse(readInputFile(path), path, o);
  const std::string file = path.substr(0, hash), id = path.substr(hash + 1);
  std::vector<Measurement> out;
  std::string ids;
  for (auto& m : parse(readInputFile(file), file, o)) {
    const std::string mid = m.label.substr(m.label.rfind('#') + 1);
    ids += (ids.empty() ? "" : ", ") + mid;
    if (mid == id) out.push_back(std::move(m));
  }
  if (out.empty())
    throw InputError(file, 0, 0, "tables", "no table with id '" + id + "' (the file has: " + ids + ")");
  return out;
}

std::vector<Measurement> MeasurementReader::parse(const std::string& text, const std::string& file,
                                                  const Overrides& o) {
  const std::string ext = std::filesystem::path(file).extension().string();
  const size_t first = text.find_first_not_of(" \t\r\n");
  std::vector<Measurement> ms;
  if (ext == ".json" || (first != std::string::npos && text[first] == '{')) {
    ms = parseJson(text, file, o);
  } else if (ext == ".csv") {
    ms = parseCsv(text, file, o);
  } else if (ext == ".yaml" || ext == ".yml") {
    ms = parseYamlTables(text, file, o);
  } else {
    Measurement m = NcclTestsParser::parse(text, file, o.op);
    if (o.ranks > 0 || o.gpusPerHost > 0) finish(m, {}, o, true);
    ms.push_back(std::move(m));
  }
  for (const auto& m : ms)
    if (m.ranks == 1) throw InputError(file, 0, 0, "ranks", kOneRank);
  return ms;
}

std::vector<Measurement> MeasurementReader::readAll(const std::vector<std::string>& paths,
                                                    const std::string& op, uint32_t ranks,
                                                    uint32_t gpusPerHost) {
  Overrides o;
  if (!op.empty()) {
    o.op = parseCollectiveOp(op);
    if (!o.op)
      throw InputError(
          "", 0, 0, "--op",
          "expected all_reduce, all_gather, reduce_scatter, alltoall, broadcast or sendrecv, found '" + op +
              "'");
  }
  o.ranks = ranks;
  o.gpusPerHost = gpusPerHost;
  std::vector<Measurement> ms;
  std::vector<Diagnostic> diags;
  for (const auto& f : paths) {
    try {
      for (auto& m : read(f, o)) ms.push_back(std::move(m));
    } catch (const InputError& e) {
      diags.insert(diags.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  if (!diags.empty()) throw InputError(std::move(diags));
  return ms;
}

}  // namespace fabricsim
