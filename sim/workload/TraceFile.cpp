#include "sim/workload/TraceFile.h"

#include <fstream>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "sim/config/JsonInput.h"
#include "sim/config/SpecJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {

namespace {

constexpr const char* kFormat = "fabricsim-trace";
constexpr int kVersion = 1;

const char* typeName(OpType t) {
  switch (t) {
    case OpType::Compute:
      return "compute";
    case OpType::Collective:
      return "collective";
    case OpType::Send:
      return "send";
    case OpType::Recv:
      return "recv";
  }
  return "?";
}

/// Reading helper: every failure names the file and the JSON path.
struct Reader {
  const std::string& file;
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(file, 0, 0, path, what);
  }
  const nlohmann::json& at(const nlohmann::json& j, const char* key, const std::string& path) const {
    if (!j.is_object() || !j.contains(key)) fail(path + "." + key, "missing key '" + std::string(key) + "'");
    return j.at(key);
  }
  uint64_t uint(const nlohmann::json& j, const std::string& path) const {
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<int64_t>() >= 0))
      fail(path, "expected a non-negative integer, found " + JsonInput::brief(j));
    return j.get<uint64_t>();
  }
  /// A non-negative integer that fits T (a rank count, a byte count): never truncated.
  template <class T>
  T as(const nlohmann::json& j, const std::string& path) const {
    const uint64_t v = uint(j, path);
    if (v > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      fail(path, "expected at most " + std::to_string(std::numeric_limits<T>::max()) + ", found " +
                     std::to_string(v));
    return static_cast<T>(v);
  }
  int64_t integer(const nlohmann::json& j, const std::string& path) const {
    if (!j.is_number_integer()) fail(path, "expected an integer, found " + JsonInput::brief(j));
    return j.get<int64_t>();
  }
  std::string string(const nlohmann::json& j, const std::string& path) const {
    if (!j.is_string()) fail(path, "expected a string, found " + JsonInput::brief(j));
    return j.get<std::string>();
  }
  const nlohmann::json& array(const nlohmann::json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, "expected an array, found " + JsonInput::brief(j));
    return j;
  }
};

/// An op's algorithm: one of toString's spellings.
CollectiveAlgorithm oneAlgorithm(const Reader& r, const std::string& s, const std::string& path) {
  if (const auto a = parseCollectiveAlgorithm(s)) return *a;
  r.fail(path, "expected auto | ring | tree | hierarchical | direct | nvls | nvls_tree | pat, found '" + s + "'");
}

/// collectives.algorithm: one algorithm (toString's spelling), or an NCCL_ALGO list for auto.
void algorithmFromName(const Reader& r, const std::string& s, const std::string& path, CollectiveTuning& tu) {
  const auto got = parseAlgorithmSetting(s);
  if (!got)
    r.fail(path, "expected auto | ring | tree | hierarchical | direct | nvls | nvls_tree | pat or an NCCL_ALGO "
                 "list, found '" + s + "'");
  std::tie(tu.algorithm, tu.algorithmsAllowed) = *got;
}

}  // namespace

nlohmann::json traceToJson(const JobTrace& t, const TraceSource& source) {
  using nlohmann::json;
  json doc;
  doc["format"] = kFormat;
  doc["version"] = kVersion;
  doc["name"] = t.name;
  doc["generator"] = t.generator;
  doc["ranks"] = t.ranks;
  doc["iterations"] = t.iterations;
  doc["microbatches"] = t.microbatches;
  doc["pipeline_stages"] = t.pipelineStages;
  if (t.virtualStages > 1) doc["virtual_stages"] = t.virtualStages;
  if (t.commSmShare > 0) doc["comm_sm_share"] = t.commSmShare;
  doc["microbatch_forward_ps"] = t.microbatchForward.picos();
  doc["microbatch_backward_ps"] = t.microbatchBackward.picos();
  doc["collectives"] = toJson(t.tuning);
  if (!source.workloadYaml.empty())
    doc["source"] = {{"workload_file", source.workloadFile},
                     {"workload_yaml", source.workloadYaml},
                     {"workload_sets", source.workloadSets}};
  json comms = json::array();
  for (const auto& c : t.communicators) comms.push_back({{"name", c.name}, {"groups", c.groups}});
  doc["communicators"] = comms;
  json programs = json::array();
  for (const auto& p : t.programs) {
    json ops = json::array();
    for (const auto& op : p.ops) {
      json o = {{"type", typeName(op.type)}, {"stream", op.stream}, {"label", op.label}};
      switch (op.type) {
        case OpType::Compute:
          o["duration_ps"] = op.duration.picos();
          break;
        case OpType::Collective:
          o["op"] = toString(op.collective);
          o["algorithm"] = toString(op.algorithm);
          o["comm"] = op.comm;
          o["bytes"] = op.bytes;
          if (op.collective == CollectiveOp::Broadcast) o["root"] = op.root;
          break;
        case OpType::Send:
        case OpType::Recv:
          o["comm"] = op.comm;
          o["peer_offset"] = op.peerOffset;
          o["bytes"] = op.bytes;
          break;
      }
      if (op.type != OpType::Compute && op.smShare >= 0) o["sm_share"] = op.smShare;
      if (!op.deps.empty()) o["deps"] = op.deps;
      ops.push_back(std::move(o));
    }
    programs.push_back({{"streams", p.streams}, {"labels", p.labels}, {"ops", std::move(ops)}});
  }
  doc["programs"] = std::move(programs);
  // Run-length encoded [program, count] pairs.
  json rle = json::array();
  for (size_t i = 0; i < t.programOfRank.size();) {
    size_t j = i;
    while (j < t.programOfRank.size() && t.programOfRank[j] == t.programOfRank[i]) ++j;
    rle.push_back({t.programOfRank[i], j - i});
    i = j;
  }
  doc["program_of_rank"] = std::move(rle);
  if (!t.placement.empty()) doc["placement"] = t.placement;
  return doc;
}

std::shared_ptr<JobTrace> traceFromJson(const nlohmann::json& doc, const std::string& file, TraceSource* source) {
  const Reader r{file};
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat)
    r.fail("format", std::string("expected a fabricsim trace (\"format\": \"") + kFormat + "\")");
  if (r.integer(r.at(doc, "version", ""), "version") != kVersion)
    r.fail("version",
           "expected version " + std::to_string(kVersion) + ", found " + JsonInput::brief(doc["version"]));
  auto t = std::make_shared<JobTrace>();
  t->name = doc.contains("name") ? r.string(doc["name"], "name") : std::string();
  t->generator = doc.contains("generator") ? r.string(doc["generator"], "generator") : std::string();
  t->ranks = r.as<uint32_t>(r.at(doc, "ranks", ""), "ranks");
  // A job on the largest fabric (100K GPUs) with room to spare; a rank count beyond it is a
  // corrupt file, not a job (4e9 ranks in a 344-byte file asked for 16 GB of tables).
  constexpr uint32_t kMaxRanks = 1u << 20;
  if (t->ranks > kMaxRanks)
    r.fail("ranks",
           "expected at most " + std::to_string(kMaxRanks) + " ranks, found " + std::to_string(t->ranks));
  t->iterations = r.as<int>(r.at(doc, "iterations", ""), "iterations");
  if (t->iterations < 1) r.fail("iterations", "expected at least 1");
  if (doc.contains("microbatches")) t->microbatches = r.as<int>(doc["microbatches"], "microbatches");
  if (doc.contains("pipeline_stages"))
    t->pipelineStages = r.as<int>(doc["pipeline_stages"], "pipeline_stages");
  if (doc.contains("virtual_stages")) {
    t->virtualStages = r.as<int>(doc["virtual_stages"], "virtual_stages");
    if (t->virtualStages < 1) r.fail("virtual_stages", "expected at least 1");
  }
  if (doc.contains("comm_sm_share")) {
    const auto& v = doc["comm_sm_share"];
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() < 1))
      r.fail("comm_sm_share", "expected a number in [0, 1), found " + JsonInput::brief(v));
    t->commSmShare = v.get<double>();
  }
  if (doc.contains("microbatch_forward_ps"))
    t->microbatchForward = Time::ps(r.integer(doc["microbatch_forward_ps"], "microbatch_forward_ps"));
  if (doc.contains("microbatch_backward_ps"))
    t->microbatchBackward = Time::ps(r.integer(doc["microbatch_backward_ps"], "microbatch_backward_ps"));
  if (doc.contains("collectives")) {
    const auto& c = doc["collectives"];
    const std::string p = "collectives";
    CollectiveTuning& tu = t->tuning;
    algorithmFromName(r, r.string(r.at(c, "algorithm", p), p + ".algorithm"), p + ".algorithm", tu);
    tu.channels = r.as<int>(r.at(c, "channels", p), p + ".channels");
    tu.nvlinkChannels = r.as<int>(r.at(c, "nvlink_channels", p), p + ".nvlink_channels");
    if (c.contains("call_channels")) {  // absent in traces written before it existed: NCCL's rule
      const uint64_t cc = r.uint(c["call_channels"], p + ".call_channels");
      if (cc > 64) r.fail(p + ".call_channels", "expected 0 (NCCL's rule) to 64, found " + std::to_string(cc));
      tu.callChannels = static_cast<int>(cc);
    }
    tu.stepLatencyNvlink = Time::ps(r.integer(r.at(c, "step_latency_nvlink_ps", p), p + ".step_latency_nvlink_ps"));
    tu.stepLatencyNetwork = Time::ps(r.integer(r.at(c, "step_latency_network_ps", p), p + ".step_latency_network_ps"));
    const auto& eff = r.at(c, "protocol_efficiency", p);
    if (!eff.is_number() || eff.get<double>() <= 0 || eff.get<double>() > 1)
      r.fail(p + ".protocol_efficiency", "expected a number in (0, 1], found " + JsonInput::brief(eff));
    tu.protocolEfficiency = eff.get<double>();
    tu.chunkSize = r.as<Bytes>(r.at(c, "chunk_size_bytes", p), p + ".chunk_size_bytes");
    tu.trafficClass = r.as<int>(r.at(c, "traffic_class", p), p + ".traffic_class");
    if (c.contains("ring_model")) {  // absent in traces written before it existed: auto
      const std::string m = r.string(c["ring_model"], p + ".ring_model");
      if (m != "auto" && m != "steps" && m != "pipelined")
        r.fail(p + ".ring_model", "expected auto, steps or pipelined, found '" + m + "'");
      tu.ringModel = m == "steps" ? RingModel::Steps : m == "pipelined" ? RingModel::Pipelined : RingModel::Auto;
    }
    if (tu.channels < 1 || tu.nvlinkChannels < 1 || tu.chunkSize < 1 || tu.trafficClass > 6)
      r.fail(p, "channels and chunk size must be at least 1 and traffic_class at most 6");
  }
  if (source && doc.contains("source")) {
    const auto& s = doc["source"];
    source->workloadFile = s.contains("workload_file") ? r.string(s["workload_file"], "source.workload_file") : "";
    source->workloadYaml = s.contains("workload_yaml") ? r.string(s["workload_yaml"], "source.workload_yaml") : "";
    if (s.contains("workload_sets"))
      for (const auto& x : r.array(s["workload_sets"], "source.workload_sets"))
        source->workloadSets.push_back(r.string(x, "source.workload_sets"));
  }
  const auto& comms = r.array(r.at(doc, "communicators", ""), "communicators");
  for (size_t c = 0; c < comms.size(); ++c) {
    const std::string path = "communicators[" + std::to_string(c) + "]";
    Communicator comm;
    comm.name = r.string(r.at(comms[c], "name", path), path + ".name");
    const auto& groups = r.array(r.at(comms[c], "groups", path), path + ".groups");
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::string gp = path + ".groups[" + std::to_string(g) + "]";
      std::vector<uint32_t> members;
      for (size_t k = 0; k < r.array(groups[g], gp).size(); ++k)
        members.push_back(r.as<uint32_t>(groups[g][k], gp + "[" + std::to_string(k) + "]"));
      comm.groups.push_back(std::move(members));
    }
    t->communicators.push_back(std::move(comm));
  }
  const auto& programs = r.array(r.at(doc, "programs", ""), "programs");
  for (size_t p = 0; p < programs.size(); ++p) {
    const std::string path = "programs[" + std::to_string(p) + "]";
    Program prog;
    for (const auto& s : r.array(r.at(programs[p], "streams", path), path + ".streams"))
      prog.streams.push_back(r.string(s, path + ".streams"));
    for (const auto& s : r.array(r.at(programs[p], "labels", path), path + ".labels"))
      prog.labels.push_back(r.string(s, path + ".labels"));
    const auto& ops = r.array(r.at(programs[p], "ops", path), path + ".ops");
    prog.ops.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::string op = path + ".ops[" + std::to_string(i) + "]";
      const auto& o = ops[i];
      TraceOp x;
      const std::string type = r.string(r.at(o, "type", op), op + ".type");
      x.stream = r.as<uint8_t>(r.at(o, "stream", op), op + ".stream");
      x.label = r.as<uint32_t>(r.at(o, "label", op), op + ".label");
      if (type == "compute") {
        x.type = OpType::Compute;
        x.duration = Time::ps(r.integer(r.at(o, "duration_ps", op), op + ".duration_ps"));
        if (x.duration < Time::zero()) r.fail(op + ".duration_ps", "expected a non-negative duration");
      } else if (type == "collective") {
        x.type = OpType::Collective;
        const std::string name = r.string(r.at(o, "op", op), op + ".op");
        const auto c = parseCollectiveOp(name);
        if (!c) r.fail(op + ".op", "expected all_reduce | all_gather | reduce_scatter | alltoall | broadcast | sendrecv, found '" + name + "'");
        x.collective = *c;
        x.algorithm = o.contains("algorithm") ? oneAlgorithm(r, r.string(o["algorithm"], op + ".algorithm"), op + ".algorithm")
                                              : CollectiveAlgorithm::Auto;
        x.comm = r.as<uint16_t>(r.at(o, "comm", op), op + ".comm");
        x.bytes = r.as<Bytes>(r.at(o, "bytes", op), op + ".bytes");
        if (o.contains("root")) x.root = r.as<uint32_t>(o["root"], op + ".root");
      } else if (type == "send" || type == "recv") {
        x.type = type == "send" ? OpType::Send : OpType::Recv;
        x.comm = r.as<uint16_t>(r.at(o, "comm", op), op + ".comm");
        x.peerOffset = static_cast<int32_t>(r.integer(r.at(o, "peer_offset", op), op + ".peer_offset"));
        x.bytes = r.as<Bytes>(r.at(o, "bytes", op), op + ".bytes");
      } else {
        r.fail(op + ".type", "expected compute | collective | send | recv, found '" + type + "'");
      }
      if (o.contains("sm_share")) {
        const auto& v = o["sm_share"];
        if (x.type == OpType::Compute || !v.is_number() || !(v.get<double>() >= 0 && v.get<double>() < 1))
          r.fail(op + ".sm_share",
                 "expected a number in [0, 1) on a collective, send or recv, found " + JsonInput::brief(v));
        x.smShare = v.get<double>();
      }
      if (o.contains("deps"))
        for (const auto& d : r.array(o["deps"], op + ".deps"))
          x.deps.push_back(r.as<uint32_t>(d, op + ".deps"));
      prog.ops.push_back(std::move(x));
    }
    t->programs.push_back(std::move(prog));
  }
  const auto& rle = r.array(r.at(doc, "program_of_rank", ""), "program_of_rank");
  for (size_t i = 0; i < rle.size(); ++i) {
    const std::string path = "program_of_rank[" + std::to_string(i) + "]";
    if (!rle[i].is_array() || rle[i].size() != 2) r.fail(path, "expected [program, count]");
    const auto p = r.as<uint32_t>(rle[i][0], path);
    const auto n = r.uint(rle[i][1], path);
    if (n > t->ranks - t->programOfRank.size())
      r.fail(path, "more ranks than 'ranks' (" + std::to_string(t->ranks) + ")");
    t->programOfRank.insert(t->programOfRank.end(), n, p);
  }
  if (doc.contains("placement"))
    for (const auto& g : r.array(doc["placement"], "placement"))
      t->placement.push_back(r.as<uint32_t>(g, "placement"));
  if (!t->placement.empty() && t->placement.size() != t->ranks)
    r.fail("placement", "expected one GPU per rank (" + std::to_string(t->ranks) + "), found " +
                            std::to_string(t->placement.size()));
  t->finalize(file);
  // Every send meets a receive: per communicator and ordered pair of ranks, as many receives as
  // sends (the executor pairs them in order; an unpaired send left its job unfinished, found only
  // by an internal check after the whole run). Read traces only: built ones pair by construction.
  std::unordered_map<uint64_t, int64_t> unpaired;  // (comm, src, dst): sends less receives
  for (uint32_t rank = 0; rank < t->ranks; ++rank)
    for (const TraceOp& op : t->programs[t->programOfRank[rank]].ops) {
      if (op.type != OpType::Send && op.type != OpType::Recv) continue;
      const Communicator& c = t->communicators[op.comm];
      const auto& group = c.groups[c.groupOfRank[rank]];
      const auto n = static_cast<int64_t>(group.size());
      const auto peer = group[static_cast<size_t>(((c.indexInGroup[rank] + op.peerOffset) % n + n) % n)];
      const bool send = op.type == OpType::Send;
      const uint64_t src = send ? rank : peer, dst = send ? peer : rank;
      unpaired[(uint64_t{op.comm} << 42) | (src << 21) | dst] += send ? 1 : -1;
    }
  for (const auto& [key, count] : unpaired)
    if (count != 0) {
      const uint64_t comm = key >> 42, src = (key >> 21) & 0x1FFFFF, dst = key & 0x1FFFFF;
      r.fail("programs", "rank " + std::to_string(src) + " sends " + (count > 0 ? "more" : "fewer") +
                             " messages to rank " + std::to_string(dst) + " on communicator '" +
                             t->communicators[comm].name + "' than that rank receives (" +
                             std::to_string(count > 0 ? count : -count) + " unpaired)");
    }
  return t;
}

std::shared_ptr<JobTrace> readTraceFile(const std::string& path, TraceSource* source) {
  return traceFromJson(JsonInput::parse(readInputFile(path), path), path, source);
}

bool isTraceFile(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

}  // namespace fabricsim
