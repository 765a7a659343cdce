#include "sim/workload/JobExecutor.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "sim/core/Error.h"

namespace fabricsim {

struct JobExecutor::RankState {
  uint32_t program = 0;
  int iteration = 0;
  uint32_t remaining = 0;            // ops of this iteration not yet completed
  std::vector<uint64_t> done;        // bit per op, this iteration
  std::vector<uint32_t> cursor;      // per stream: position of the next op to issue
  std::vector<uint8_t> busy;         // per stream: its head op has been issued and not completed
  std::vector<Time> issued;          // per stream: when the head op was issued
  double commShare = 0;              // the largest share of the streams moving data (0: none)
  std::vector<double> transferring;  // per stream: its moving op's compute share (0: none)
  std::vector<uint32_t> running;     // compute slots running on this rank (commSmShare)
};

/// A compute op in progress while communication may slow it (JobTrace::commSmShare > 0).
struct JobExecutor::SlowCompute {
  double remainingPs = 0;  // work left, as picoseconds at full speed
  Time since;              // when remainingPs was last brought up to date
  Time end;                // the completion its latest scheduled event stands for
  double share = 0;        // the share of compute lost since `since`
  bool active = false;
  uint32_t pendingEvents = 0;  // scheduled events not yet delivered (the slot is reused at 0)
};

struct JobExecutor::PendingCollective {
  uint32_t arrived = 0;
  uint32_t size = 0;
  uint16_t comm = 0;
  uint32_t group = 0;
  std::vector<std::pair<uint32_t, uint32_t>> members;  // (rank, op)
};

struct JobExecutor::PendingMessage {
  std::vector<std::pair<uint32_t, uint32_t>> sends;  // (src rank, op), FIFO
  std::vector<std::pair<uint32_t, uint32_t>> recvs;  // (dst rank, op), FIFO
  size_t sendHead = 0;
  size_t recvHead = 0;
};

namespace {
bool isDone(const std::vector<uint64_t>& bits, uint32_t op) { return (bits[op >> 6] >> (op & 63)) & 1; }
uint64_t pairKey(uint32_t src, uint32_t dst) { return (static_cast<uint64_t>(src) << 32) | dst; }
/// Erases the first `head` (matched) entries of a FIFO once they are at least half of it
/// (amortised O(1) per entry): it then holds at most twice its unmatched entries.
void compactMatched(std::vector<std::pair<uint32_t, uint32_t>>& fifo, size_t& head) {
  if (head == 0 || 2 * head < fifo.size()) return;
  fifo.erase(fifo.begin(), fifo.begin() + static_cast<long>(head));
  head = 0;
}
}  // namespace

JobExecutor::JobExecutor(Simulator& sim, Fabric* fabric, std::shared_ptr<const JobTrace> trace,
                         std::vector<uint32_t> gpus, int gpusPerHost, const CollectiveTuning& tuning,
                         std::string name, Time start, bool communication)
    : sim_(sim),
      fabric_(fabric),
      trace_(std::move(trace)),
      gpus_(std::move(gpus)),
      name_(std::move(name)),
      start_(start),
      communication_(communication) {
  const JobTrace& t = *trace_;
  SIM_CHECK(gpus_.size() == t.ranks, "JobExecutor: one GPU per rank expected");
  SIM_CHECK(!communication_ || fabric_ != nullptr, "JobExecutor: a fabric is needed for communication");
  if (communication_) engine_ = std::make_unique<CollectiveEngine>(sim_, *fabric_, tuning, gpusPerHost);
  anyShare_ = t.commSmShare > 0;
  for (const Program& prog : t.programs)
    for (const TraceOp& op : prog.ops)
      anyShare_ = anyShare_ || (op.type != OpType::Compute && op.smShare > 0);
  programs_.resize(t.programs.size());
  for (size_t p = 0; p < t.programs.size(); ++p) {
    const Program& prog = t.programs[p];
    ProgramInfo& info = programs_[p];
    info.streamOps.resize(std::max<size_t>(1, prog.streams.size()));
    info.positionInStream.resize(prog.ops.size());
    for (uint32_t i = 0; i < prog.ops.size(); ++i) {
      const TraceOp& op = prog.ops[i];
      info.positionInStream[i] = static_cast<uint32_t>(info.streamOps[op.stream].size());
      info.streamOps[op.stream].push_back(i);
      if (op.type == OpType::Compute) info.compute += op.duration;
    }
    info.commStream.assign(info.streamOps.size(), 0);
    for (const TraceOp& op : prog.ops)
      if (op.type != OpType::Compute) info.commStream[op.stream] = 1;
    computePerIteration_ = std::max(computePerIteration_, info.compute);
  }
  ranks_.resize(t.ranks);
  for (uint32_t r = 0; r < t.ranks; ++r) {
    RankState& s = ranks_[r];
    s.program = t.programOfRank[r];
    const ProgramInfo& info = programs_[s.program];
    s.done.assign((t.programs[s.program].ops.size() + 63) / 64, 0);
    s.cursor.assign(info.streamOps.size(), 0);
    s.busy.assign(info.streamOps.size(), 0);
    s.issued.assign(info.streamOps.size(), Time::zero());
    for (const TraceOp& op : t.programs[s.program].ops) {
      if (op.type == OpType::Send) requested_ += op.bytes * static_cast<Bytes>(t.iterations);
      if (op.type == OpType::Collective) {
        const auto& comm = t.communicators[op.comm];
        const Bytes share = op.bytes / std::max<Bytes>(1, comm.groups[comm.groupOfRank[r]].size());
        requested_ += share * static_cast<Bytes>(t.iterations);
      }
    }
  }
  collectiveSeq_.assign(static_cast<size_t>(t.ranks) * t.communicators.size(), 0);
  iterationEnds_.assign(static_cast<size_t>(std::max(1, t.iterations)), Time::zero());
  ranksDoneIteration_.assign(iterationEnds_.size(), 0);
}

JobExecutor::~JobExecutor() = default;

void JobExecutor::start(Time origin) {
  SIM_CHECK(!started_, "JobExecutor::start called twice");
  started_ = true;
  origin_ = origin;
  // Starts through an event so that every rank begins at the job's start time.
  computeSlots_.push_back({UINT32_MAX, 0});
  sim_.schedule(origin_ + start_, this, 0);
}

void JobExecutor::beginIteration(uint32_t rank) {
  RankState& s = ranks_[rank];
  const Program& prog = trace_->programs[s.program];
  std::fill(s.done.begin(), s.done.end(), 0);
  std::fill(s.cursor.begin(), s.cursor.end(), 0);
  s.remaining = static_cast<uint32_t>(prog.ops.size());
  if (s.remaining == 0) {
    completions_.push_back({rank, UINT32_MAX});
    return;
  }
  issueReady(rank);
}

void JobExecutor::issueReady(uint32_t rank) {
  RankState& s = ranks_[rank];
  const Program& prog = trace_->programs[s.program];
  const ProgramInfo& info = programs_[s.program];
  for (size_t st = 0; st < info.streamOps.size(); ++st) {
    if (s.busy[st] || s.cursor[st] >= info.streamOps[st].size()) continue;
    const uint32_t op = info.streamOps[st][s.cursor[st]];
    bool ready = true;
    for (uint32_t d : prog.ops[op].deps)
      if (!isDone(s.done, d)) {
        ready = false;
        break;
      }
    if (!ready) continue;
    s.busy[st] = 1;
    s.issued[st] = sim_.now();
    startOp(rank, op);
  }
}

bool JobExecutor::slowdownModelled() const {
  return communication_ && anyShare_;
}

void JobExecutor::scheduleSlow(uint32_t slot) {
  SlowCompute& c = slow_[slot];
  const double rate = 1.0 - c.share;
  c.end = c.since + Time::ps(std::llround(std::max(0.0, c.remainingPs) / rate));
  ++c.pendingEvents;
  sim_.schedule(c.end, this, slot);
}

void JobExecutor::markTransferring(uint32_t rank, uint32_t opIndex) {
  RankState& s = ranks_[rank];
  const TraceOp& op = trace_->programs[s.program].ops[opIndex];
  const double share = op.smShare >= 0 ? op.smShare : trace_->commSmShare;
  if (share <= 0) return;  // copy engines, or charged to the GEMM already
  if (s.transferring.empty()) s.transferring.assign(s.busy.size(), 0.0);
  if (s.transferring[op.stream] > 0) return;
  s.transferring[op.stream] = share;
  commChanged(rank);
}

void JobExecutor::commChanged(uint32_t rank) {
  RankState& s = ranks_[rank];
  const double now = *std::max_element(s.transferring.begin(), s.transferring.end());
  if (now == s.commShare) return;
  s.commShare = now;
  for (const uint32_t slot : s.running) {
    SlowCompute& c = slow_[slot];
    const double elapsed = static_cast<double>((sim_.now() - c.since).picos());
    c.remainingPs -= elapsed * (1.0 - c.share);
    c.since = sim_.now();
    c.share = now;
    scheduleSlow(slot);
  }
}

void JobExecutor::startOp(uint32_t rank, uint32_t opIndex) {
  const JobTrace& t = *trace_;
  RankState& s = ranks_[rank];
  const TraceOp& op = t.programs[s.program].ops[opIndex];
  switch (op.type) {
    case OpType::Compute: {
      if (op.duration <= Time::zero()) {
        completions_.push_back({rank, opIndex});
        return;
      }
      uint32_t slot;
      if (!freeComputeSlots_.empty()) {
        slot = freeComputeSlots_.back();
        freeComputeSlots_.pop_back();
        computeSlots_[slot] = {rank, opIndex};
      } else {
        slot = static_cast<uint32_t>(computeSlots_.size());
        computeSlots_.push_back({rank, opIndex});
      }
      if (!slowdownModelled()) {
        sim_.schedule(sim_.now() + op.duration, this, slot);
        return;
      }
      if (slow_.size() <= slot) slow_.resize(slot + 1);
      SlowCompute& c = slow_[slot];
      c.remainingPs = static_cast<double>(op.duration.picos());
      c.since = sim_.now();
      c.share = s.commShare;
      c.active = true;
      s.running.push_back(slot);
      scheduleSlow(slot);
      return;
    }
    case OpType::Collective: {
      const Communicator& comm = t.communicators[op.comm];
      const uint32_t group = comm.groupOfRank[rank];
      const uint32_t seq = collectiveSeq_[static_cast<size_t>(rank) * t.communicators.size() + op.comm]++;
      // (comm, group, sequence) identify one collective instance across its members.
      const uint64_t key = (static_cast<uint64_t>(op.comm) << 56) ^ (static_cast<uint64_t>(group) << 32) ^ seq;
      PendingCollective& pc = pendingCollectives_[key];
      if (pc.size == 0) {
        pc.size = static_cast<uint32_t>(comm.groups[group].size());
        pc.comm = op.comm;
        pc.group = group;
        pc.members.reserve(pc.size);
      }
      pc.members.push_back({rank, opIndex});
      if (++pc.arrived == pc.size) launchCollective(key);
      return;
    }
    case OpType::Send:
    case OpType::Recv: {
      const Communicator& comm = t.communicators[op.comm];
      const auto& group = comm.groups[comm.groupOfRank[rank]];
      const int64_t n = static_cast<int64_t>(group.size());
      const int64_t idx = comm.indexInGroup[rank];
      const uint32_t peer = group[static_cast<size_t>((((idx + op.peerOffset) % n) + n) % n)];
      const bool isSend = op.type == OpType::Send;
      const uint64_t key = isSend ? pairKey(rank, peer) : pairKey(peer, rank);
      PendingMessage& pm = pendingMessages_[key];
      (isSend ? pm.sends : pm.recvs).push_back({rank, opIndex});
      if (pm.sendHead < pm.sends.size() && pm.recvHead < pm.recvs.size()) {
        const auto snd = pm.sends[pm.sendHead++];
        const auto rcv = pm.recvs[pm.recvHead++];
        if (pm.sendHead == pm.sends.size() && pm.recvHead == pm.recvs.size()) {
          pendingMessages_.erase(key);
        } else {
          // If one side keeps posting ahead of the other (a trace may), the pair is never all
          // matched at once: drop the matched prefix once it is half the list, or the list would
          // grow with every message of the run.
          compactMatched(pm.sends, pm.sendHead);
          compactMatched(pm.recvs, pm.recvHead);
        }
        launchMessage(snd.first, snd.second, rcv.first, rcv.second);
      }
      return;
    }
  }
}

void JobExecutor::launchCollective(uint64_t key) {
  PendingCollective& pc = pendingCollectives_[key];
  const JobTrace& t = *trace_;
  const auto [firstRank, firstOp] = pc.members.front();
  const TraceOp& op = t.programs[ranks_[firstRank].program].ops[firstOp];
  const uint64_t id = nextRunId_++;
  running_[id] = Running{key, false, sim_.now(), op.algorithm};
  if (!communication_ || op.bytes == 0 || isFree(pc.comm)) {
    onCollectiveDone(id, sim_.now());
    return;
  }
  if (slowdownModelled())
    for (const auto& [rank, memberOp] : pc.members) markTransferring(rank, memberOp);
  CollectiveCall call;
  call.op = op.collective;
  call.algorithm = op.algorithm;
  call.bytes = op.bytes;
  call.root = op.root;
  const auto& members = t.communicators[pc.comm].groups[pc.group];
  call.gpus.reserve(members.size());
  for (uint32_t r : members) call.gpus.push_back(gpus_[r]);
  running_[id].algorithm = engine_->resolve(call);
  running_[id].protocol = engine_->protocolFor(call, running_[id].algorithm);
  engine_->start(call, this, id);
}

void JobExecutor::launchMessage(uint32_t src, uint32_t srcOp, uint32_t dst, uint32_t dstOp) {
  const uint64_t id = nextRunId_++;
  running_[id] = Running{0, true, sim_.now()};
  messageOps_[id] = {{src, srcOp}, {dst, dstOp}};
  const TraceOp& op = trace_->programs[ranks_[src].program].ops[srcOp];
  if (!communication_ || op.bytes == 0 || gpus_[src] == gpus_[dst] || isFree(op.comm)) {
    onCollectiveDone(id, sim_.now());
    return;
  }
  if (slowdownModelled()) {
    markTransferring(src, srcOp);
    markTransferring(dst, dstOp);
  }
  engine_->startPointToPoint(gpus_[src], gpus_[dst], op.bytes, this, id);
}

void JobExecutor::onCollectiveDone(uint64_t id, Time when) {
  const auto it = running_.find(id);
  SIM_CHECK(it != running_.end(), "JobExecutor: completion of an unknown collective");
  const Running run = it->second;
  running_.erase(it);
  const JobTrace& t = *trace_;
  if (run.message) {
    const auto ops = messageOps_[id];
    messageOps_.erase(id);
    const TraceOp& op = t.programs[ranks_[ops.first.first].program].ops[ops.first.second];
    delivered_ += op.bytes;
    ++messages_;
    messageTime_ += when - run.started;
    completions_.push_back(ops.first);
    completions_.push_back(ops.second);
  } else {
    const auto pit = pendingCollectives_.find(run.key);
    SIM_CHECK(pit != pendingCollectives_.end(), "JobExecutor: lost collective");
    PendingCollective pc = std::move(pit->second);
    pendingCollectives_.erase(pit);
    const TraceOp& op = t.programs[ranks_[pc.members.front().first].program].ops[pc.members.front().second];
    const CollectiveAlgorithm algo = run.algorithm;
    const Program& prog = t.programs[ranks_[pc.members.front().first].program];
    const std::string label = op.label < prog.labels.size() ? prog.labels[op.label] : std::string();
    CollectiveSummary& sum =
        summaries_[std::make_tuple(label, static_cast<int>(op.collective), op.bytes, pc.size, static_cast<int>(algo))];
    if (sum.count == 0) {
      sum.label = label;
      sum.op = op.collective;
      sum.bytes = op.bytes;
      sum.ranks = pc.size;
      sum.algorithm = algo;
      sum.protocol = run.protocol;
    }
    const Time d = when - run.started;
    ++sum.count;
    sum.total += d;
    sum.min = std::min(sum.min, d);
    sum.max = std::max(sum.max, d);
    delivered_ += op.bytes;
    for (const auto& m : pc.members) completions_.push_back(m);
  }
  drain();
}

void JobExecutor::onEvent(uint32_t tag) {
  if (tag < slow_.size() && (slow_[tag].active || slow_[tag].pendingEvents > 0)) {
    // A compute op under the slowdown model: only the event of its latest schedule completes
    // it; the slot is reused once no event for it is pending.
    SlowCompute& c = slow_[tag];
    --c.pendingEvents;
    if (!c.active || sim_.now() != c.end) {
      if (!c.active && c.pendingEvents == 0) freeComputeSlots_.push_back(tag);
      return;
    }
    c.active = false;
    const auto [rank, op] = computeSlots_[tag];
    auto& running = ranks_[rank].running;
    running.erase(std::find(running.begin(), running.end(), tag));
    if (c.pendingEvents == 0) freeComputeSlots_.push_back(tag);
    completions_.push_back({rank, op});
    drain();
    return;
  }
  const auto [rank, op] = computeSlots_[tag];
  freeComputeSlots_.push_back(tag);
  if (rank == UINT32_MAX) {
    // The job's start.
    for (uint32_t r = 0; r < ranks_.size(); ++r) beginIteration(r);
    drain();
    return;
  }
  completions_.push_back({rank, op});
  drain();
}

void JobExecutor::drain() {
  if (draining_) return;
  draining_ = true;
  while (!completions_.empty()) {
    const auto [rank, op] = completions_.back();
    completions_.pop_back();
    completeOp(rank, op);
  }
  draining_ = false;
}

void JobExecutor::completeOp(uint32_t rank, uint32_t opIndex) {
  const JobTrace& t = *trace_;
  RankState& s = ranks_[rank];
  if (opIndex != UINT32_MAX) {
    const TraceOp& op = t.programs[s.program].ops[opIndex];
    s.done[opIndex >> 6] |= uint64_t{1} << (opIndex & 63);
    s.busy[op.stream] = 0;
    if (!s.transferring.empty() && s.transferring[op.stream] > 0) {
      s.transferring[op.stream] = 0;
      commChanged(rank);
    }
    ++s.cursor[op.stream];
    if (observer_) observer_->onSpan(t, rank, s.program, opIndex, s.iteration, s.issued[op.stream], sim_.now());
    --s.remaining;
  }
  if (s.remaining > 0) {
    issueReady(rank);
    return;
  }
  // Iteration finished on this rank.
  const int it = s.iteration;
  iterationEnds_[it] = std::max(iterationEnds_[it], sim_.now());
  if (++ranksDoneIteration_[it] == ranks_.size() && it + 1 == static_cast<int>(iterationEnds_.size())) {
    finished_ = true;
    finish_ = iterationEnds_[it];
  }
  if (it + 1 < static_cast<int>(iterationEnds_.size())) {
    s.iteration = it + 1;
    beginIteration(rank);
  }
}

std::vector<CollectiveSummary> JobExecutor::collectiveSummaries() const {
  std::vector<CollectiveSummary> out;
  out.reserve(summaries_.size());
  for (const auto& [k, v] : summaries_) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total > b.total; });
  return out;
}

}  // namespace fabricsim
