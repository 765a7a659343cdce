#include "sim/workload/JobTrace.h"

#include <set>

#include "sim/core/Error.h"

namespace fabricsim {

namespace {

std::string opKey(size_t program, size_t op, const char* field) {
  return "programs[" + std::to_string(program) + "].ops[" + std::to_string(op) + "]." + field;
}

}  // namespace

uint32_t Program::label(const std::string& text) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == text) return static_cast<uint32_t>(i);
  }
  labels.push_back(text);
  return static_cast<uint32_t>(labels.size() - 1);
}

uint8_t Program::stream(const std::string& text) {
  for (size_t i = 0; i < streams.size(); ++i) {
    if (streams[i] == text) return static_cast<uint8_t>(i);
  }
  SIM_CHECK(streams.size() < 256, "a program has at most 256 streams");
  streams.push_back(text);
  return static_cast<uint8_t>(streams.size() - 1);
}

int JobTrace::communicatorIndex(const std::string& commName) const {
  for (size_t i = 0; i < communicators.size(); ++i) {
    if (communicators[i].name == commName) return static_cast<int>(i);
  }
  return -1;
}

void JobTrace::finalize(const std::string& source) {
  auto fail = [&](const std::string& key, const std::string& message) {
    throw InputError(source, 0, 0, key, message);
  };
  if (ranks == 0) fail("ranks", "a trace needs at least one rank");
  if (iterations < 1) fail("iterations", "expected at least 1, found " + std::to_string(iterations));
  if (programs.empty()) fail("programs", "a trace needs at least one program");
  if (programOfRank.size() != ranks) {
    fail("program_of_rank", "expected one entry per rank (" + std::to_string(ranks) + "), found " +
                                std::to_string(programOfRank.size()));
  }
  for (size_t r = 0; r < programOfRank.size(); ++r) {
    if (programOfRank[r] >= programs.size()) {
      fail("program_of_rank[" + std::to_string(r) + "]", "program " + std::to_string(programOfRank[r]) +
                                                             " does not exist (" +
                                                             std::to_string(programs.size()) + " programs)");
    }
  }
  if (!placement.empty() && placement.size() != ranks) {
    fail("placement", "expected one GPU per rank (" + std::to_string(ranks) + ") or none, found " +
                          std::to_string(placement.size()));
  }

  // Communicators: a partition of [0, ranks) into groups.
  std::set<std::string> names;
  for (size_t c = 0; c < communicators.size(); ++c) {
    Communicator& comm = communicators[c];
    const std::string key = "communicators[" + std::to_string(c) + "]";
    if (!names.insert(comm.name).second) fail(key + ".name", "duplicate communicator '" + comm.name + "'");
    constexpr uint32_t kUnset = ~0u;
    comm.groupOfRank.assign(ranks, kUnset);
    comm.indexInGroup.assign(ranks, kUnset);
    for (size_t g = 0; g < comm.groups.size(); ++g) {
      const auto& group = comm.groups[g];
      if (group.empty()) fail(key + ".groups[" + std::to_string(g) + "]", "empty group");
      for (size_t i = 0; i < group.size(); ++i) {
        const uint32_t r = group[i];
        const std::string rkey = key + ".groups[" + std::to_string(g) + "][" + std::to_string(i) + "]";
        if (r >= ranks) {
          fail(rkey, "rank " + std::to_string(r) + " out of range (" + std::to_string(ranks) + " ranks)");
        }
        if (comm.groupOfRank[r] != kUnset) {
          fail(rkey, "rank " + std::to_string(r) + " is in more than one group of communicator '" +
                         comm.name + "'");
        }
        comm.groupOfRank[r] = static_cast<uint32_t>(g);
        comm.indexInGroup[r] = static_cast<uint32_t>(i);
      }
    }
    for (uint32_t r = 0; r < ranks; ++r) {
      if (comm.groupOfRank[r] == kUnset) {
        fail(key + ".groups",
             "rank " + std::to_string(r) + " is in no group of communicator '" + comm.name + "'");
      }
    }
  }

  // Per program and communicator: the sizes of the groups its ranks belong to (send/recv
  // offsets must not wrap onto the sender itself; broadcast roots must exist).
  std::vector<std::vector<std::set<size_t>>> groupSizes(programs.size(),
                                                        std::vector<std::set<size_t>>(communicators.size()));
  for (uint32_t r = 0; r < ranks; ++r) {
    for (size_t c = 0; c < communicators.size(); ++c) {
      const auto& comm = communicators[c];
      groupSizes[programOfRank[r]][c].insert(comm.groups[comm.groupOfRank[r]].size());
    }
  }

  for (size_t p = 0; p < programs.size(); ++p) {
    const Program& prog = programs[p];
    for (size_t i = 0; i < prog.ops.size(); ++i) {
      const TraceOp& op = prog.ops[i];
      if (op.stream >= prog.streams.size()) {
        fail(opKey(p, i, "stream"), "stream " + std::to_string(op.stream) + " out of range (" +
                                        std::to_string(prog.streams.size()) + " streams)");
      }
      // A program without labels may leave every label at 0.
      if (op.label >= prog.labels.size() && !(prog.labels.empty() && op.label == 0)) {
        fail(opKey(p, i, "label"), "label " + std::to_string(op.label) + " out of range (" +
                                       std::to_string(prog.labels.size()) + " labels)");
      }
      for (size_t d = 0; d < op.deps.size(); ++d) {
        if (op.deps[d] >= i) {
          fail(opKey(p, i, "deps"), "dependency " + std::to_string(op.deps[d]) +
                                        " is not an earlier op of the program (op index " +
                                        std::to_string(i) + ")");
        }
      }
      switch (op.type) {
        case OpType::Compute:
          if (op.duration < Time::zero()) fail(opKey(p, i, "duration"), "negative duration");
          break;
        case OpType::Collective:
        case OpType::Send:
        case OpType::Recv: {
          if (op.comm >= communicators.size()) {
            fail(opKey(p, i, "comm"), "communicator " + std::to_string(op.comm) + " out of range (" +
                                          std::to_string(communicators.size()) + " communicators)");
          }
          if (op.bytes < 0) fail(opKey(p, i, "bytes"), "negative size");
          const auto& sizes = groupSizes[p][op.comm];
          if (op.type == OpType::Collective) {
            if (op.collective == CollectiveOp::SendRecv) {
              fail(opKey(p, i, "collective"), "sendrecv is expressed as a Send and a Recv op");
            }
            if (op.collective == CollectiveOp::Broadcast) {
              for (size_t n : sizes) {
                if (op.root >= n) {
                  fail(opKey(p, i, "root"), "root " + std::to_string(op.root) + " outside a group of " +
                                                std::to_string(n) + " ranks");
                }
              }
            }
          } else {
            if (op.peerOffset == 0) fail(opKey(p, i, "offset"), "send/recv offset must be non-zero");
            for (size_t n : sizes) {
              if (op.peerOffset % static_cast<int64_t>(n) == 0) {
                fail(opKey(p, i, "offset"), "offset " + std::to_string(op.peerOffset) + " in a group of " +
                                                std::to_string(n) + " ranks of communicator '" +
                                                communicators[op.comm].name + "' is the rank itself");
              }
            }
          }
          break;
        }
        default:
          fail(opKey(p, i, "type"), "unknown op type");
      }
    }
  }
}

}  // namespace fabricsim
