#include "sim/workload/chakra/ChakraWriter.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cmath>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/workload/chakra/chakra_et.pb.h"

namespace fabricsim {

namespace {

namespace pb = ::fabricsim::chakra;

void addInt(pb::Node& n, const char* name, int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void addDouble(pb::Node& n, const char* name, double v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_double_val(v);
}

void addBool(pb::Node& n, const char* name, bool v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_bool_val(v);
}

/// Appends `m` with its length as a varint (the framing Chakra's tools read).
void append(std::string& out, const google::protobuf::MessageLite& m) {
  std::string body;
  m.SerializeToString(&body);
  google::protobuf::io::StringOutputStream s(&out);
  google::protobuf::io::CodedOutputStream cos(&s);
  cos.WriteVarint32(static_cast<uint32_t>(body.size()));
  cos.WriteRaw(body.data(), static_cast<int>(body.size()));
}

pb::CollectiveCommType commType(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return pb::ALL_REDUCE;
    case CollectiveOp::AllGather:
      return pb::ALL_GATHER;
    case CollectiveOp::ReduceScatter:
      return pb::REDUCE_SCATTER;
    case CollectiveOp::Broadcast:
      return pb::BROADCAST;
    case CollectiveOp::AllToAll:
      return pb::ALL_TO_ALL;
    case CollectiveOp::SendRecv:
      break;
  }
  throw SimError("a trace collective cannot be send_recv");
}

}  // namespace

std::string ChakraWriter::groupName(const JobTrace& trace, uint32_t comm, uint32_t group) {
  return trace.communicators[comm].name + "." + std::to_string(group);
}

nlohmann::json ChakraWriter::commGroups(const JobTrace& trace) {
  nlohmann::json j = nlohmann::json::object();
  for (uint32_t c = 0; c < trace.communicators.size(); ++c)
    for (uint32_t g = 0; g < trace.communicators[c].groups.size(); ++g)
      j[groupName(trace, c, g)] = trace.communicators[c].groups[g];
  return j;
}

std::string ChakraWriter::rankFile(const JobTrace& trace, uint32_t rank) {
  const Program& prog = trace.programs[trace.programOfRank[rank]];
  std::string out;
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto* gen = meta.add_attr();
  gen->set_name("fabricsim_job");
  gen->set_string_val(trace.name);
  append(out, meta);
  std::vector<int64_t> lastOnStream(std::max<size_t>(1, prog.streams.size()), -1);
  for (uint32_t i = 0; i < prog.ops.size(); ++i) {
    const TraceOp& op = prog.ops[i];
    pb::Node n;
    n.set_id(i);
    for (uint32_t d : op.deps) n.add_data_deps(d);
    if (lastOnStream[op.stream] >= 0) n.add_ctrl_deps(static_cast<uint64_t>(lastOnStream[op.stream]));
    lastOnStream[op.stream] = i;
    const std::string label = op.label < prog.labels.size() ? prog.labels[op.label] : std::string();
    addBool(n, "is_cpu_op", false);
    switch (op.type) {
      case OpType::Compute:
        n.set_type(pb::COMP_NODE);
        n.set_name(label.empty() ? "compute" : label);
        n.set_duration_micros(
            static_cast<uint64_t>(std::llround(static_cast<double>(op.duration.picos()) * 1e-6)));
        addInt(n, "fabricsim_duration_ps", op.duration.picos());
        break;
      case OpType::Collective: {
        const Communicator& c = trace.communicators[op.comm];
        const uint32_t g = c.groupOfRank[rank];
        const auto size = static_cast<int64_t>(c.groups[g].size());
        n.set_type(pb::COMM_COLL_NODE);
        n.set_name(std::string(toString(op.collective)) + (label.empty() ? "" : ":" + label));
        addInt(n, "comm_type", commType(op.collective));
        addInt(n, "comm_size", op.collective == CollectiveOp::AllGather ? op.bytes / size : op.bytes);
        addInt(n, "fabricsim_bytes", op.bytes);
        if (op.collective == CollectiveOp::Broadcast) addInt(n, "fabricsim_root", op.root);
        auto* pg = n.add_attr();
        pg->set_name("pg_name");
        pg->set_string_val(groupName(trace, op.comm, g));
        break;
      }
      case OpType::Send:
      case OpType::Recv: {
        const Communicator& c = trace.communicators[op.comm];
        const auto& group = c.groups[c.groupOfRank[rank]];
        const auto n_ = static_cast<int64_t>(group.size());
        const int64_t idx = ((static_cast<int64_t>(c.indexInGroup[rank]) + op.peerOffset) % n_ + n_) % n_;
        const uint32_t peer = group[static_cast<size_t>(idx)];
        const bool send = op.type == OpType::Send;
        n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
        n.set_name((send ? "send:" : "recv:") + label);
        addInt(n, "comm_src", send ? rank : peer);
        addInt(n, "comm_dst", send ? peer : rank);
        addInt(n, "comm_size", op.bytes);
        addInt(n, "comm_tag", 0);
        break;
      }
    }
    // The share of the GPU's compute the op's kernel takes while it moves data (Transformer
    // Engine's userbuffers configs); absent: the job's gpu.comm_sm_share.
    if (op.type != OpType::Compute && op.smShare >= 0) addDouble(n, "fabricsim_sm_share", op.smShare);
    append(out, n);
  }
  return out;
}

}  // namespace fabricsim
