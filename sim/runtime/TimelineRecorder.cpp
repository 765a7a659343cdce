#include "sim/runtime/TimelineRecorder.h"

#include "sim/config/WorkloadLoader.h"

namespace fabricsim {

namespace {
constexpr uint32_t kStreamsPerRank = 16;
}

TimelineRecorder::TimelineRecorder(TimelineWriter& writer, uint32_t pid, std::string jobName,
                                   uint32_t maxRanks, const std::vector<uint32_t>& gpus)
    : writer_(writer), pid_(pid), maxRanks_(maxRanks), gpus_(gpus) {
  writer_.processName(pid_, "job " + jobName);
}

void TimelineRecorder::onSpan(const JobTrace& trace, uint32_t rank, uint32_t program, uint32_t opIndex,
                              int iteration, Time start, Time end) {
  if (rank >= maxRanks_) return;
  const Program& prog = trace.programs[program];
  const TraceOp& op = prog.ops[opIndex];
  const uint32_t tid = rank * kStreamsPerRank + (op.stream % kStreamsPerRank);
  if (namedThreads_.insert(tid).second)
    writer_.threadName(
        pid_, tid,
        "rank " + std::to_string(rank) + " (GPU " + std::to_string(gpus_[rank]) + ") " +
            (op.stream < prog.streams.size() ? prog.streams[op.stream] : std::string("stream")));
  const std::string label = op.label < prog.labels.size() ? prog.labels[op.label] : std::string("op");
  std::string args =
      "{\"iteration\":" + std::to_string(iteration) + ",\"op_index\":" + std::to_string(opIndex);
  std::string category = "compute";
  switch (op.type) {
    case OpType::Compute:
      break;
    case OpType::Collective:
      category = "collective";
      args += ",\"op\":\"" + std::string(toString(op.collective)) +
              "\",\"bytes\":" + std::to_string(op.bytes) + ",\"comm\":\"" +
              trace.communicators[op.comm].name + "\"";
      break;
    case OpType::Send:
    case OpType::Recv:
      category = op.type == OpType::Send ? "send" : "recv";
      args += ",\"bytes\":" + std::to_string(op.bytes) + ",\"peer_offset\":" + std::to_string(op.peerOffset);
      break;
  }
  args += "}";
  writer_.span(pid_, tid, label, category, start, end, args);
}

}  // namespace fabricsim
