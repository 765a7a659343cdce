#include "sim/runtime/SweepPointKey.h"

#include "sim/workload/chakra/ChakraReader.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/config/SpecJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/report/ResultsFile.h"

namespace fabricsim {

uint64_t SweepPointKey::fnv1a(std::string_view bytes, uint64_t h) {
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

/// The digest of a file's bytes ("missing" when it cannot be read).
std::string fileDigest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "missing";
  uint64_t h = 0xcbf29ce484222325ull;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    h = SweepPointKey::fnv1a({buf, static_cast<size_t>(in.gcount())}, h);
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

/// The digests of a Chakra job's per-rank files, PREFIX.0.et on: its `ranks` of them, or every
/// consecutive one that exists (as the reader takes them), with the first missing one.
nlohmann::json chakraDigests(const ChakraSpec& c) {
  nlohmann::json d = nlohmann::json::array();
  for (uint32_t r = 0;; ++r) {
    const std::string path = ChakraReader::rankFile(c.prefix, r);
    d.push_back(fileDigest(path));
    if (c.ranks > 0 ? r + 1 >= c.ranks : d.back() == "missing") break;
  }
  return d;
}

nlohmann::json resolved(const SweepPoint& p) {
  std::vector<std::string> sets = p.sets;
  if (p.routing) sets.push_back("routing.algorithm=" + *p.routing);
  if (p.cc) sets.push_back("congestion_control.algorithm=" + *p.cc);
  const TopologySpec topo = loadTopologyFile(p.topology, sets);
  std::vector<std::string> paths = p.workloads;
  if (paths.empty() && !topo.workload.empty()) paths.push_back(topo.workload);
  nlohmann::json workloads = nlohmann::json::array();
  for (const auto& path : paths) {
    const WorkloadSpec w = loadWorkloadFile(path, p.workloadSets);
    nlohmann::json j = toJson(w);
    if (w.kind == "trace") j["trace_file_digest"] = fileDigest(w.trace.path);
    if (w.kind == "chakra") {
      j["rank_file_digests"] = chakraDigests(w.chakra);
      if (!w.chakra.commGroups.empty()) j["comm_groups_digest"] = fileDigest(w.chakra.commGroups);
    }
    workloads.push_back(std::move(j));
  }
  return {{"topology", toJson(topo)}, {"workloads", workloads}};
}

}  // namespace

std::string SweepPointKey::of(const SweepPoint& p) {
  nlohmann::json doc;
  try {
    doc["spec"] = resolved(p);
  } catch (const std::exception& e) {  // InputError or a file that does not load: key on the inputs
    doc["unloadable"] = e.what();
    doc["topology"] = p.topology;
    doc["workloads"] = p.workloads;
    doc["sets"] = p.sets;
    doc["workload_sets"] = p.workloadSets;
    doc["routing"] = p.routing.value_or("");
    doc["cc"] = p.cc.value_or("");
  }
  doc["backend"] = p.backend.value_or("packet");
  doc["seed"] = p.seed.value_or(1);
  doc["version"] = ResultsFile::version();
  doc["git"] = ResultsFile::gitDescribe();
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(fnv1a(doc.dump())));
  return out;
}

}  // namespace fabricsim
