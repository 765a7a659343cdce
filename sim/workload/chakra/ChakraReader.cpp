#include "sim/workload/chakra/ChakraReader.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <unordered_map>

#include "sim/config/JsonInput.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/workload/chakra/chakra_et.pb.h"

namespace fabricsim {

namespace {

namespace pb = ::fabricsim::chakra;

/// The messages of one ET file: its metadata, then its nodes.
std::vector<pb::Node> parseFile(const std::string& path, const std::string& data) {
  std::vector<pb::Node> nodes;
  size_t pos = 0;
  bool first = true;
  while (pos < data.size()) {
    uint32_t len = 0;
    google::protobuf::io::CodedInputStream cis(reinterpret_cast<const uint8_t*>(data.data() + pos),
                                               static_cast<int>(std::min<size_t>(data.size() - pos, 16)));
    const std::string what = first ? "the global metadata" : "node #" + std::to_string(nodes.size() + 1);
    if (!cis.ReadVarint32(&len))
      throw InputError(path, 0, 0, what, "expected a varint length prefix at byte " + std::to_string(pos));
    pos += static_cast<size_t>(cis.CurrentPosition());
    if (len > static_cast<uint32_t>(std::numeric_limits<int>::max()))
      throw InputError(path, 0, 0, what,
                       "a message of " + std::to_string(len) + " bytes: more than protobuf reads");
    if (len > data.size() - pos)
      throw InputError(path, 0, 0, what,
                       "the file is truncated: the message at byte " + std::to_string(pos) + " needs " +
                           std::to_string(len) + " bytes, " + std::to_string(data.size() - pos) +
                           " are left");
    if (first) {
      pb::GlobalMetadata meta;
      if (!meta.ParseFromArray(data.data() + pos, static_cast<int>(len)))
        throw InputError(path, 0, 0, what, "not a Chakra GlobalMetadata message");
      first = false;
    } else {
      pb::Node n;
      if (!n.ParseFromArray(data.data() + pos, static_cast<int>(len)))
        throw InputError(path, 0, 0, what, "not a Chakra Node message (at byte " + std::to_string(pos) + ")");
      nodes.push_back(std::move(n));
    }
    pos += len;
  }
  if (first) throw InputError(path, 0, 0, "chakra", "empty file: expected the global metadata and the nodes");
  return nodes;
}

const pb::AttributeProto* findAttr(const pb::Node& n, const std::string& name) {
  for (const auto& a : n.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

/// An integer attribute from whichever integer field its writer used.
std::optional<int64_t> intAttr(const pb::Node& n, const std::string& name) {
  const pb::AttributeProto* a = findAttr(n, name);
  if (!a) return std::nullopt;
  switch (a->value_case()) {
    case pb::AttributeProto::kInt32Val:
      return a->int32_val();
    case pb::AttributeProto::kInt64Val:
      return a->int64_val();
    case pb::AttributeProto::kUint32Val:
      return a->uint32_val();
    case pb::AttributeProto::kUint64Val:
      if (a->uint64_val() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(a->uint64_val());
    case pb::AttributeProto::kSint32Val:
      return a->sint32_val();
    case pb::AttributeProto::kSint64Val:
      return a->sint64_val();
    case pb::AttributeProto::kFixed32Val:
      return a->fixed32_val();
    case pb::AttributeProto::kFixed64Val:
      if (a->fixed64_val() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(a->fixed64_val());
    case pb::AttributeProto::kSfixed32Val:
      return a->sfixed32_val();
    case pb::AttributeProto::kSfixed64Val:
      return a->sfixed64_val();
    default:
      return std::nullopt;
  }
}

bool boolAttr(const pb::Node& n, const std::string& name) {
  const pb::AttributeProto* a = findAttr(n, name);
  if (!a) return false;
  if (a->value_case() == pb::AttributeProto::kBoolVal) return a->bool_val();
  const auto v = intAttr(n, name);
  return v && *v != 0;
}

std::string describe(const pb::Node& n) {
  return "node " + std::to_string(n.id()) + " ('" + n.name() + "')";
}

/// Reads the comm-groups file: {"pg_name": [ranks]}.
std::map<std::string, std::vector<uint32_t>> readCommGroups(const std::string& path, uint32_t ranks) {
  std::map<std::string, std::vector<uint32_t>> out;
  if (path.empty()) return out;
  const std::string text = readInputFile(path);
  const nlohmann::json doc = JsonInput::parse(text, path);
  if (!doc.is_object())
    throw InputError(path, 0, 0, "comm_groups", "expected an object {\"pg_name\": [ranks, ...]}");
  for (const auto& [name, list] : doc.items()) {
    if (!list.is_array() || list.empty())
      throw InputError(path, 0, 0, name, "expected a non-empty list of ranks");
    std::vector<uint32_t> group;
    std::vector<bool> seen(ranks, false);
    for (const auto& v : list) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= static_cast<int64_t>(ranks))
        throw InputError(
            path, 0, 0, name,
            "expected ranks from 0 to " + std::to_string(ranks - 1) + ", found " + JsonInput::brief(v));
      const auto r = v.get<uint32_t>();
      if (seen[r]) throw InputError(path, 0, 0, name, "rank " + std::to_string(r) + " is listed twice");
      seen[r] = true;
      group.push_back(r);
    }
    out[name] = std::move(group);
  }
  return out;
}

struct Collective {
  CollectiveOp op = CollectiveOp::AllReduce;
  Bytes bytes = 0;
};

}  // namespace

std::string ChakraReader::rankFile(const std::string& prefix, uint32_t rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

std::shared_ptr<JobTrace> ChakraReader::read(const ChakraInput& in) {
  uint32_t ranks = in.ranks;
  if (ranks == 0) {
    std::error_code ec;
    while (std::filesystem::is_regular_file(rankFile(in.prefix, ranks), ec)) ++ranks;
    if (ranks == 0)
      throw InputError(in.source, 0, 0, "chakra",
                       "no Chakra trace files: expected " + rankFile(in.prefix, 0) + ", " +
                           rankFile(in.prefix, 1) + ", ... (one per rank)");
  }
  const auto groups = readCommGroups(in.commGroups, ranks);
  auto trace = std::make_shared<JobTrace>();
  trace->name = in.name;
  trace->ranks = ranks;
  trace->iterations = in.iterations;
  trace->generator = "Chakra ET " + in.prefix + " (" + std::to_string(ranks) + " ranks)";
  Communicator world;
  world.name = "world";
  world.groups.emplace_back();
  for (uint32_t r = 0; r < ranks; ++r) world.groups.back().push_back(r);
  trace->communicators.push_back(std::move(world));
  std::map<std::string, uint16_t> commOf;  // process group -> communicator
  auto communicator = [&](const std::string& pg, const std::string& file, const pb::Node& n) -> uint16_t {
    if (pg.empty()) return 0;
    if (const auto it = commOf.find(pg); it != commOf.end()) return it->second;
    const auto g = groups.find(pg);
    if (g == groups.end())
      throw InputError(
          file, 0, 0, describe(n),
          "process group '" + pg + "' is not in the comm-groups file" +
              (in.commGroups.empty() ? std::string(" (none given: set comm_groups in the workload)")
                                     : " '" + in.commGroups + "'"));
    if (trace->communicators.size() >= std::numeric_limits<uint16_t>::max())
      throw InputError(in.commGroups, 0, 0, pg, "too many process groups (at most 65535)");
    Communicator c;
    c.name = "pg:" + pg;
    c.groups.push_back(g->second);
    std::vector<bool> member(ranks, false);
    for (uint32_t r : g->second) member[r] = true;
    for (uint32_t r = 0; r < ranks; ++r)
      if (!member[r]) c.groups.push_back({r});  // ranks outside the group never call on it
    trace->communicators.push_back(std::move(c));
    return commOf[pg] = static_cast<uint16_t>(trace->communicators.size() - 1);
  };
  // What each rank sends to and receives from each peer, and calls on each communicator, for the
  // cross-rank checks below (a mismatch would leave the job waiting forever).
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> p2p;  // (src, dst) -> sends, recvs
  std::map<std::pair<uint16_t, uint32_t>, std::vector<Collective>> calls;      // (comm, rank) -> calls

  trace->programs.resize(ranks);
  trace->programOfRank.resize(ranks);
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    const std::string file = rankFile(in.prefix, rank);
    const std::vector<pb::Node> nodes = parseFile(file, readInputFile(file));
    std::unordered_map<uint64_t, uint32_t> index;
    index.reserve(nodes.size());
    for (uint32_t i = 0; i < nodes.size(); ++i)
      if (!index.emplace(nodes[i].id(), i).second)
        throw InputError(file, 0, 0, describe(nodes[i]),
                         "duplicate node id " + std::to_string(nodes[i].id()));
    // Dependencies (data and control alike), then an order that respects them (Kahn's, ties by
    // position in the file).
    std::vector<std::vector<uint32_t>> dependants(nodes.size());
    std::vector<uint32_t> indegree(nodes.size(), 0);
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      auto add = [&](uint64_t dep) {
        const auto it = index.find(dep);
        if (it == index.end())
          throw InputError(file, 0, 0, describe(nodes[i]),
                           "depends on node " + std::to_string(dep) + ", not in the file");
        dependants[it->second].push_back(i);
        ++indegree[i];
      };
      for (uint64_t d : nodes[i].data_deps()) add(d);
      for (uint64_t d : nodes[i].ctrl_deps()) add(d);
    }
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    for (uint32_t i = 0; i < nodes.size(); ++i)
      if (indegree[i] == 0) ready.push(i);
    std::vector<uint32_t> order;
    order.reserve(nodes.size());
    while (!ready.empty()) {
      const uint32_t i = ready.top();
      ready.pop();
      order.push_back(i);
      for (uint32_t d : dependants[i])
        if (--indegree[d] == 0) ready.push(d);
    }
    if (order.size() != nodes.size()) {
      for (uint32_t i = 0; i < nodes.size(); ++i)
        if (indegree[i] > 0)
          throw InputError(file, 0, 0, describe(nodes[i]), "is part of a dependency cycle");
    }

    Program& prog = trace->programs[rank];
    trace->programOfRank[rank] = rank;
    const uint8_t computeStream = prog.stream("compute");
    // For each node: the ops it stands for as a dependency (itself once kept; a left-out node
    // the ops its own dependencies stand for).
    std::vector<std::vector<uint32_t>> standsFor(nodes.size());
    for (const uint32_t i : order) {
      const pb::Node& n = nodes[i];
      std::vector<uint32_t> deps;
      auto collect = [&](uint64_t d) {
        const auto& s = standsFor[index.at(d)];
        deps.insert(deps.end(), s.begin(), s.end());
      };
      for (uint64_t d : n.data_deps()) collect(d);
      for (uint64_t d : n.ctrl_deps()) collect(d);
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      auto need = [&](const char* name) {
        const auto v = intAttr(n, name);
        if (!v)
          throw InputError(file, 0, 0, describe(n),
                           std::string("needs the integer attribute '") + name + "'");
        return *v;
      };
      auto streamFor = [&](const std::string& s) {
        if (prog.streams.size() >= 255 &&
            std::find(prog.streams.begin(), prog.streams.end(), s) == prog.streams.end())
          throw InputError(file, 0, 0, describe(n),
                           "more than 255 streams (process groups and peers) on one rank: not supported");
        return prog.stream(s);
      };
      TraceOp op;
      bool keep = true;
      switch (n.type()) {
        case pb::COMP_NODE: {
          if (boolAttr(n, "is_cpu_op")) {
            keep = false;
            break;
          }
          op.type = OpType::Compute;
          op.stream = computeStream;
          op.label = prog.label("compute");
          if (const auto ps = intAttr(n, "fabricsim_duration_ps")) {
            if (*ps < 0) throw InputError(file, 0, 0, describe(n), "negative fabricsim_duration_ps");
            op.duration = Time::ps(*ps);
          } else {
            if (n.duration_micros() > static_cast<uint64_t>(Time::max().picos() / 1'000'000))
              throw InputError(file, 0, 0, describe(n), "duration_micros too large");
            op.duration = Time::ps(static_cast<int64_t>(n.duration_micros()) * 1'000'000);
          }
          break;
        }
        case pb::COMM_COLL_NODE: {
          const std::string pg =
              findAttr(n, "pg_name") ? findAttr(n, "pg_name")->string_val() : std::string();
          op.type = OpType::Collective;
          op.comm = communicator(pg, file, n);
          const auto& members = trace->communicators[op.comm].groups.front();
          if (op.comm != 0 && std::find(members.begin(), members.end(), rank) == members.end())
            throw InputError(
                file, 0, 0, describe(n),
                "calls process group '" + pg + "', which does not hold rank " + std::to_string(rank));
          const int64_t type = need("comm_type");
          const int64_t size = type == pb::BARRIER && !findAttr(n, "comm_size") ? 0 : need("comm_size");
          if (size < 0) throw InputError(file, 0, 0, describe(n), "negative comm_size");
          const auto group = static_cast<int64_t>(members.size());
          switch (type) {
            case pb::ALL_REDUCE:
            case pb::BARRIER:
              op.collective = CollectiveOp::AllReduce;
              op.bytes = type == pb::BARRIER ? 0 : size;
              break;
            case pb::ALL_GATHER:
              op.collective = CollectiveOp::AllGather;
              if (size > std::numeric_limits<int64_t>::max() / group)
                throw InputError(file, 0, 0, describe(n), "comm_size x group size overflows");
              op.bytes = size * group;  // the rank's shard, gathered from every member
              break;
            case pb::REDUCE_SCATTER:
            case pb::REDUCE_SCATTER_BLOCK:
              op.collective = CollectiveOp::ReduceScatter;
              op.bytes = size;
              break;
            case pb::BROADCAST:
              op.collective = CollectiveOp::Broadcast;
              op.bytes = size;
              if (const auto root = intAttr(n, "fabricsim_root")) {
                if (*root < 0 || *root >= group)
                  throw InputError(file, 0, 0, describe(n), "fabricsim_root outside the group");
                op.root = static_cast<uint32_t>(*root);
              }
              break;
            case pb::ALL_TO_ALL:
              op.collective = CollectiveOp::AllToAll;
              op.bytes = size;
              break;
            default:
              throw InputError(
                  file, 0, 0, describe(n),
                  "comm_type " + std::to_string(type) +
                      " is not simulated (ALL_REDUCE 0, ALL_GATHER 2, BROADCAST 5, ALL_TO_ALL 6, "
                      "REDUCE_SCATTER 7, REDUCE_SCATTER_BLOCK 8 and BARRIER 9 are)");
          }
          if (const auto exact = intAttr(n, "fabricsim_bytes")) {
            if (*exact < 0) throw InputError(file, 0, 0, describe(n), "negative fabricsim_bytes");
            op.bytes = *exact;
          }
          op.stream = streamFor("coll:" + (pg.empty() ? std::string("world") : pg));
          op.label = prog.label(pg.empty() ? std::string("world") : pg);
          calls[{op.comm, rank}].push_back({op.collective, op.bytes});
          break;
        }
        case pb::COMM_SEND_NODE:
        case pb::COMM_RECV_NODE: {
          const bool send = n.type() == pb::COMM_SEND_NODE;
          const int64_t peer = need(send ? "comm_dst" : "comm_src");
          if (peer < 0 || peer >= static_cast<int64_t>(ranks))
            throw InputError(file, 0, 0, describe(n),
                             std::string(send ? "comm_dst " : "comm_src ") + std::to_string(peer) +
                                 " is not a rank of the job (0 to " + std::to_string(ranks - 1) + ")");
          const int64_t size = need("comm_size");
          if (size < 0) throw InputError(file, 0, 0, describe(n), "negative comm_size");
          op.type = send ? OpType::Send : OpType::Recv;
          op.comm = 0;
          op.peerOffset = static_cast<int32_t>(peer - static_cast<int64_t>(rank));
          op.bytes = size;
          op.stream = streamFor((send ? "send:" : "recv:") + std::to_string(peer));
          op.label = prog.label("p2p");
          auto& c =
              send ? p2p[{rank, static_cast<uint32_t>(peer)}] : p2p[{static_cast<uint32_t>(peer), rank}];
          (send ? c.first : c.second) += 1;
          break;
        }
        default:
          keep = false;  // metadata, memory and host-side nodes take no GPU time
          break;
      }
      if (!keep) {
        standsFor[i] = std::move(deps);
        continue;
      }
      if (const pb::AttributeProto* share = findAttr(n, "fabricsim_sm_share")) {
        const double v = share->value_case() == pb::AttributeProto::kDoubleVal ? share->double_val() : -1.0;
        if (op.type == OpType::Compute || !(v >= 0 && v < 1))
          throw InputError(file, 0, 0, describe(n),
                           "fabricsim_sm_share must be a double in [0, 1) on a communication node");
        op.smShare = v;
      }
      op.deps = std::move(deps);
      standsFor[i] = {static_cast<uint32_t>(prog.ops.size())};
      prog.ops.push_back(std::move(op));
    }
  }
  for (const auto& [pair, counts] : p2p)
    if (counts.first != counts.second)
      throw InputError(rankFile(in.prefix, pair.first), 0, 0, "comm_dst",
                       "rank " + std::to_string(pair.first) + " sends " + std::to_string(counts.first) +
                           " messages to rank " + std::to_string(pair.second) + ", which receives " +
                           std::to_string(counts.second) + " from it");
  // Every member of a process group makes the same calls on it, in the same order.
  for (uint16_t c = 0; c < trace->communicators.size(); ++c) {
    const auto& members = trace->communicators[c].groups.front();
    const auto ref = calls.find({c, members.front()});
    for (uint32_t r : members) {
      const auto it = calls.find({c, r});
      const size_t mine = it == calls.end() ? 0 : it->second.size();
      const size_t theirs = ref == calls.end() ? 0 : ref->second.size();
      const std::string file = rankFile(in.prefix, r);
      if (mine != theirs)
        throw InputError(file, 0, 0, trace->communicators[c].name,
                         "rank " + std::to_string(r) + " makes " + std::to_string(mine) +
                             " collective calls on " + trace->communicators[c].name + ", rank " +
                             std::to_string(members.front()) + " makes " + std::to_string(theirs));
      for (size_t k = 0; k < mine; ++k)
        if (it->second[k].op != ref->second[k].op || it->second[k].bytes != ref->second[k].bytes)
          throw InputError(file, 0, 0, trace->communicators[c].name,
                           "call " + std::to_string(k + 1) + " of rank " + std::to_string(r) + " on " +
                               trace->communicators[c].name + " (" + toString(it->second[k].op) + ", " +
                               std::to_string(it->second[k].bytes) + " B) differs from rank " +
                               std::to_string(members.front()) + "'s (" + toString(ref->second[k].op) + ", " +
                               std::to_string(ref->second[k].bytes) + " B)");
    }
  }
  trace->finalize(in.source.empty() ? in.prefix : in.source);
  return trace;
}

}  // namespace fabricsim
