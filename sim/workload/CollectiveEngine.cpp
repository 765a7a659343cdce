// CollectiveEngine: every algorithm is a set of lanes (one sender -> one peer stream of sends
// per channel) whose sends are unlocked by deliveries on other lanes (ring successor, chain
// successor, tree parent / children, the next phase of hierarchical). Per collective: a plan
// with its lanes (vectors reused when the plan is reused); per step: O(1) work, one event for
// the step latency (tag = index of a pooled {plan, lane} record) and one Fabric transfer (tag =
// plan << 40 | lane).
#include "sim/workload/CollectiveEngine.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/workload/collectives/AllToAllBuilder.h"
#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"
#include "sim/workload/collectives/HierarchicalBuilder.h"
#include "sim/workload/collectives/NvlsBuilder.h"
#include "sim/workload/collectives/NvlsTreeBuilder.h"
#include "sim/workload/collectives/PatBuilder.h"
#include "sim/workload/collectives/RingBuilder.h"
#include "sim/workload/collectives/SendRecvBuilder.h"
#include "sim/workload/collectives/TreeBuilder.h"

namespace fabricsim {
namespace {

/// NCCL 2.30.7 tuning.cc: a ring's LL128 bandwidth is 0.92 of its Simple (channel) bandwidth.
constexpr double kLl128OverSimple = 0.92;

constexpr int kLaneBits = 40;
constexpr uint64_t kLaneMask = (uint64_t{1} << kLaneBits) - 1;
constexpr uint64_t kMaxSlots = uint64_t{1} << (64 - kLaneBits);

struct Pending {
  uint32_t slot;
  uint32_t lane;
  bool delivery;  ///< a delivery held until the protocol has passed the send's data (else a send)
};

/// User bytes of send k of lane l.
Bytes laneBytes(const Lane& l, const CollectivePlan& s, uint32_t k) {
  switch (l.kind) {
    case LaneKind::RingReduceScatter:
      return shareOf(l.data, l.n, modN(static_cast<int64_t>(l.pos) - k - 1, l.n));
    case LaneKind::RingAllGather:
      return shareOf(l.data, l.n, modN(static_cast<int64_t>(l.pos) - k, l.n));
    case LaneKind::RingAllReduce:
      return k + 1 < l.n ? shareOf(l.data, l.n, modN(static_cast<int64_t>(l.pos) - k - 1, l.n))
                         : shareOf(l.data, l.n, modN(static_cast<int64_t>(l.pos) - (k - (l.n - 1)), l.n));
    case LaneKind::Pipelined:
      return std::min<Bytes>(s.chunk, l.data - static_cast<Bytes>(k) * s.chunk);
    case LaneKind::Whole:
      return l.data;
    case LaneKind::AllToAll:
      return shareOf(l.data, l.n, (l.pos + 1 + k) % l.n);
  }
  return 0;
}

}  // namespace

struct CollectiveEngine::Impl {
  explicit Impl(CollectiveEngine& engine)
      : e(engine),
        sim_(engine.sim_),
        fabric_(engine.fabric_),
        tuning_(engine.tuning_),
        pipelinedRings(tuning_.ringModel == RingModel::Pipelined ||
                       (tuning_.ringModel == RingModel::Auto && fabric_.backendName() != "packet")),
        ctx{engine.fabric_, engine.tuning_, static_cast<uint32_t>(engine.gpusPerHost_), scratch, hopPrefix, pairs} {}

  /// Schedules lane's next send after the step latency unless one is pending or none is ready.
  void pump(uint32_t s, uint32_t lane);
  /// Issues lane's next send; true if that completed the collective.
  bool issue(uint32_t s, uint32_t lane);
  /// One send of `lane` has been delivered; true if that completed the collective.
  bool delivered(uint32_t s, uint32_t lane);
  void onEvent(uint32_t tag);
  /// Where the fabric couples groups: the lanes of each pipelined ring channel (plain rings) and
  /// of each pipelined tree instance become one group, sent when its last edge could start.
  void groupPipelines(CollectivePlan& slot) const;

  /// Delay before lane's next send: one step latency, or a pipelined lane's own delay.
  static Time stepDelay(const CollectivePlan& s, const Lane& l) {
    if (l.repeat > 1 || l.fixedDelay) return l.delay;
    return l.network ? s.stepNet : s.stepNv;
  }

  CollectiveEngine& e;
  Simulator& sim_;
  Fabric& fabric_;
  const CollectiveTuning& tuning_;
  const bool pipelinedRings;
  std::vector<std::unique_ptr<CollectivePlan>> slots;
  std::vector<uint32_t> freeSlots;
  std::vector<Pending> pending;
  std::vector<uint32_t> freePending;
  size_t active = 0;
  std::vector<uint32_t> scratch;
  std::vector<Time> hopPrefix;
  std::vector<uint64_t> pairs;
  std::vector<TransferRequest> groupScratch;
  BuildContext ctx;

  uint32_t acquireSlot() {
    uint32_t s;
    if (!freeSlots.empty()) {
      s = freeSlots.back();
      freeSlots.pop_back();
    } else {
      s = static_cast<uint32_t>(slots.size());
      SIM_CHECK(s < kMaxSlots, "too many collectives in flight");
      slots.push_back(std::make_unique<CollectivePlan>());
    }
    CollectivePlan& slot = *slots[s];
    slot.inUse = true;
    slot.lanes.clear();
    slot.members.clear();
    slot.received.clear();
    slot.parent.clear();
    slot.children.clear();
    slot.railFirst.clear();
    slot.railChannels.clear();
    slot.remaining = 0;
    slot.pipelined = pipelinedRings;
    slot.eff = tuning_.protocolEfficiency;
    slot.stepNv = tuning_.stepLatencyNvlink;
    slot.stepNet = tuning_.stepLatencyNetwork;
    slot.protoRate = 0;
    ++active;
    return s;
  }
  void releaseSlot(uint32_t s) {
    CollectivePlan& slot = *slots[s];
    slot.inUse = false;
    // A free plan keeps its lists' capacity for the next collective, but not a large one's:
    // otherwise, reused in turn by every kind of collective, each plan would grow to hold the
    // largest one's lists, and the engine's memory would creep up iteration after iteration.
    if (slot.lanes.capacity() > kKeptLanes) std::vector<Lane>().swap(slot.lanes);
    for (auto* v :
         {&slot.members, &slot.railFirst, &slot.railChannels, &slot.received, &slot.parent, &slot.children})
      if (v->capacity() > 4 * kKeptLanes) std::vector<uint32_t>().swap(*v);
    freeSlots.push_back(s);
    --active;
  }
  static constexpr size_t kKeptLanes = 64;  ///< lanes a free plan may keep room for (6.5 KiB)
  uint32_t acquirePending(uint32_t slot, uint32_t lane, bool delivery = false) {
    uint32_t p;
    if (!freePending.empty()) {
      p = freePending.back();
      freePending.pop_back();
      pending[p] = Pending{slot, lane, delivery};
    } else {
      p = static_cast<uint32_t>(pending.size());
      pending.push_back(Pending{slot, lane, delivery});
    }
    return p;
  }
};

CollectiveEngine::CollectiveEngine(Simulator& sim, Fabric& fabric, const CollectiveTuning& tuning,
                                   int gpusPerHost)
    : sim_(sim),
      fabric_(fabric),
      tuning_(tuning),
      gpusPerHost_(gpusPerHost),
      tuner_(fabric_, tuning_, static_cast<uint32_t>(std::max(1, gpusPerHost))),
      impl_(std::make_unique<Impl>(*this)) {
  SIM_CHECK(gpusPerHost_ >= 1, "gpusPerHost must be at least 1");
  SIM_CHECK(tuning_.channels >= 1 && tuning_.nvlinkChannels >= 1, "channels must be at least 1");
  SIM_CHECK(tuning_.protocolEfficiency > 0 && tuning_.protocolEfficiency <= 1,
            "protocolEfficiency must be in (0, 1]");
  SIM_CHECK(tuning_.chunkSize >= 1, "chunkSize must be at least 1 byte");
  SIM_CHECK(tuning_.trafficClass >= 0 && tuning_.trafficClass < 7, "traffic class must be 0..6");
}

CollectiveEngine::~CollectiveEngine() = default;

size_t CollectiveEngine::active() const {
  return impl_->active;
}

void CollectiveEngine::startPointToPoint(uint32_t srcGpu, uint32_t dstGpu, Bytes bytes,
                                         CollectiveListener* listener, uint64_t id) {
  SIM_CHECK(listener != nullptr, "collective without a listener");
  if (bytes < 0)
    throw InputError("", 0, 0, "bytes",
                     "a point-to-point transfer needs a size >= 0, found " + std::to_string(bytes));
  if (bytes == 0 || srcGpu == dstGpu) {
    listener->onCollectiveDone(id, sim_.now());
    return;
  }
  const uint32_t s = impl_->acquireSlot();
  CollectivePlan& slot = *impl_->slots[s];
  slot.id = id;
  slot.listener = listener;
  slot.algo = PlanAlgo::Lanes;
  SendRecvBuilder::addMessage(slot, impl_->ctx, srcGpu, dstGpu, bytes);
  const auto lanes = static_cast<uint32_t>(slot.lanes.size());
  for (uint32_t i = 0; i < lanes; ++i) impl_->pump(s, i);
}

void CollectiveEngine::start(const CollectiveCall& call, CollectiveListener* listener, uint64_t id) {
  SIM_CHECK(listener != nullptr, "collective without a listener");
  if (call.gpus.empty())
    throw InputError("", 0, 0, "ranks",
                     std::string("a collective needs at least 1 rank (") + toString(call.op) + ")");
  if (call.bytes < 0)
    throw InputError("", 0, 0, "bytes",
                     "a collective needs a size >= 0, found " + std::to_string(call.bytes));
  if (call.op == CollectiveOp::Broadcast && call.root >= call.gpus.size())
    throw InputError("", 0, 0, "root",
                     "broadcast root " + std::to_string(call.root) + " is not one of the " +
                         std::to_string(call.gpus.size()) + " ranks");
  const CollectiveAlgorithm algo = resolve(call);  // validates the algorithm
  const uint32_t s = impl_->acquireSlot();
  CollectivePlan& slot = *impl_->slots[s];
  slot.members.assign(call.gpus.begin(), call.gpus.end());
  std::sort(slot.members.begin(), slot.members.end());
  if (std::adjacent_find(slot.members.begin(), slot.members.end()) != slot.members.end()) {
    const uint32_t dup = *std::adjacent_find(slot.members.begin(), slot.members.end());
    impl_->releaseSlot(s);
    throw InputError(
        "", 0, 0, "ranks",
        std::string("GPU ") + std::to_string(dup) + " appears twice in one " + toString(call.op));
  }
  if (call.bytes == 0 || call.gpus.size() == 1) {
    impl_->releaseSlot(s);
    listener->onCollectiveDone(id, sim_.now());
    return;
  }
  slot.id = id;
  slot.listener = listener;
  slot.algo = PlanAlgo::Lanes;
  const BuildContext& ctx = impl_->ctx;
  const uint32_t n = static_cast<uint32_t>(slot.members.size());
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  const bool crossHost = slot.members.front() / g != slot.members.back() / g;
  const Bytes bytes = call.bytes;
  uint32_t channels =
      static_cast<uint32_t>(std::min<Bytes>(crossHost ? tuning_.channels : tuning_.nvlinkChannels, bytes));
  if (call.op != CollectiveOp::AllToAll && call.op != CollectiveOp::SendRecv) {
    // The call's protocol: its wire efficiency, per-step latencies and throughput ceiling.
    const CollectiveProtocol proto = protocolFor(call, algo);
    const auto scaled = [](Time t, double scale) {
      return Time::ps(std::llround(static_cast<double>(t.picos()) * scale));
    };
    slot.eff = protocolEfficiency(proto);
    // A hop's latency is its step latency plus its path's. The tuning's step latencies are
    // Simple's; LL and LL128 scale the whole hop (NCCL's hwLat per protocol is the hop's total),
    // so their step is the scaled hop less the path (never below zero), with the path of a
    // representative hop of each kind: the first pair of members on one host, and the first
    // pair on two hosts with the same local GPU (a rail-matched hop).
    Time floor = Time::zero();
    if (crossHost && tuning_.netOverhead > Time::zero() && algo == CollectiveAlgorithm::Ring)
      // Every step of a ring across hosts posts a network operation through the proxy: no hop
      // of it is shorter than NCCL's net overhead (x 3 under Simple).
      floor = proto == CollectiveProtocol::Simple ? tuning_.netOverhead * 3 : tuning_.netOverhead;
    // (Simple without a floor needs no path: its step is the tuning's.)
    const bool scaledHops = proto == CollectiveProtocol::LL || proto == CollectiveProtocol::LL128;
    Time pathNv = Time::zero(), pathNet = Time::zero();
    bool haveNv = !scaledHops && floor == Time::zero(), haveNet = haveNv;
    for (uint32_t i = 1; i < n && !(haveNv && haveNet); ++i) {
      const uint32_t a = slot.members[0], b = slot.members[i];
      if (a / g == b / g) {
        if (!haveNv) pathNv = ctx.fabric.pathLatency(a, b), haveNv = true;
      } else if (!haveNet && a % g == b % g) {
        pathNet = ctx.fabric.pathLatency(a, b), haveNet = true;
      }
    }
    const auto step = [&](Time simple, Time path, double scale, Time floor) {
      if (scale == 1.0) return std::max(simple, floor - path);
      return std::max({Time::zero(), scaled(simple + path, scale) - path, floor - path});
    };
    // A tree's LL and LL128 hops take NCCL's tree hardware latencies, which differ from the
    // ring's (src/graph/tuning.cc hwLat, us: NVLink tree LL / LL128 0.6 / 1.25 against the
    // ring's 0.6 / 1.9; network 5.0 / 8.5 against 2.7 / 4.0), as ratios on the ring's hop of
    // the same protocol. Simple keeps the tuning's step latencies for both (the calibrated
    // ones; NCCL's NVLink tree Simple 4.0 against the ring's 3.4 us is left out).
    double treeNv = 1, treeNet = 1;
    if (algo == CollectiveAlgorithm::Tree) {
      if (proto == CollectiveProtocol::LL) treeNet = 5.0 / 2.7;
      if (proto == CollectiveProtocol::LL128) treeNv = 1.25 / 1.9, treeNet = 8.5 / 4.0;
    }
    slot.stepNv = step(tuning_.stepLatencyNvlink, pathNv, treeNv * protocolLatencyScale(proto), floor);
    slot.stepNet = step(tuning_.stepLatencyNetwork, pathNet, treeNet * protocolLatencyScale(proto, true), floor);
    // NCCL's channels for the call: the lanes built across hosts; inside a host the lanes are
    // `nvlinkChannels` (one stands for them all on the NVSwitch) while NCCL still runs its own
    // channel count, whose per-channel protocol ceilings add up.
    uint32_t ncclChannels = crossHost ? channels : static_cast<uint32_t>(std::max(1, tuning_.channels));
    if (algo == CollectiveAlgorithm::Ring || algo == CollectiveAlgorithm::Tree || algo == CollectiveAlgorithm::Pat) {
      if (tuning_.callChannels > 0) {
        // Pinned: the channels NCCL ran this call with.
        channels = static_cast<uint32_t>(std::min<Bytes>(tuning_.callChannels, bytes));
        ncclChannels = channels;
      } else if (const auto choice = tuner_.ncclChoice(call, algo)) {
        // NCCL's channels for this call (enqueue.cc topoGetAlgoInfo): the communicator's, fewer
        // while the bytes are under channels x threads x the protocol's per-thread threshold.
        channels = std::min(channels, static_cast<uint32_t>(std::max(1, choice->channels)));
        ncclChannels = std::min(ncclChannels, static_cast<uint32_t>(std::max(1, choice->channels)));
      }
    }
    ncclChannels = std::max(ncclChannels, channels);
    if (proto == CollectiveProtocol::LL || proto == CollectiveProtocol::LL128) {
      // LL: the rank's ceiling shared by its lanes (a tree's 2C instances, else C channels);
      // LL128: each channel's own. GB/s -> bytes per ps.
      uint32_t hosts = 1;
      for (uint32_t i = 1; i < n; ++i) hosts += slot.members[i] / g != slot.members[i - 1] / g ? 1 : 0;
      const uint32_t perRank =
          algo == CollectiveAlgorithm::Tree ? 2 * channels : channels;
      // LL128 per lane: NCCL's channels' ceilings over the lanes that carry them.
      double gbps = proto == CollectiveProtocol::LL
                        ? tuning_.llMaxBandwidth(hosts) / perRank
                        : tuning_.ll128ChannelBandwidthGBps * static_cast<double>(ncclChannels) / channels;
      // LL128 is copied by the same one thread block per channel as Simple, in 128-byte lines of
      // 120 data bytes plus flags: where a ring channel's Simple copy rate across hosts is known,
      // LL128's is at most NCCL's 0.92 of it (tuning.cc: LL128 busBw = min(0.92 busBw, channels x
      // perChMaxRingLL128Bw) on the channel's own bandwidth).
      if (proto == CollectiveProtocol::LL128 && crossHost && algo == CollectiveAlgorithm::Ring &&
          tuning_.simpleChannelBandwidthGBps > 0)
        gbps = std::min(gbps, kLl128OverSimple * tuning_.simpleChannelBandwidthGBps);
      slot.protoRate = gbps * 1e-3;
    } else if (proto == CollectiveProtocol::Simple && crossHost && tuning_.simpleChannelBandwidthGBps > 0 &&
               algo == CollectiveAlgorithm::Ring) {
      // Simple: one channel's own ceiling (its SM's copy rate), on every lane of the ring.
      slot.protoRate = tuning_.simpleChannelBandwidthGBps * 1e-3;
    }
  }

  switch (call.op) {
    case CollectiveOp::AllReduce:
      switch (algo) {
        case CollectiveAlgorithm::Nvls:
          NvlsBuilder::build(slot, ctx, bytes);
          break;
        case CollectiveAlgorithm::NvlsTree:
          NvlsTreeBuilder::build(slot, ctx, bytes);
          break;
        case CollectiveAlgorithm::Tree:
          TreeBuilder::build(slot, ctx, bytes, channels);
          break;
        case CollectiveAlgorithm::Hierarchical:
          HierarchicalBuilder::build(slot, ctx, bytes);
          break;
        default:
          RingBuilder::addRing(slot, ctx, LaneKind::RingAllReduce, 2 * (n - 1), n, bytes, channels, 0, true,
                               0, 1);
          break;
      }
      break;
    case CollectiveOp::AllGather:
      if (algo == CollectiveAlgorithm::Pat)
        PatBuilder::build(slot, ctx, call.op, bytes, channels);
      else
        RingBuilder::addRing(slot, ctx, LaneKind::RingAllGather, n - 1, n, bytes, channels, 0, true, 0, 1);
      break;
    case CollectiveOp::ReduceScatter:
      if (algo == CollectiveAlgorithm::Pat)
        PatBuilder::build(slot, ctx, call.op, bytes, channels);
      else
        RingBuilder::addRing(slot, ctx, LaneKind::RingReduceScatter, n - 1, n, bytes, channels, 0, true, 0, 1);
      break;
    case CollectiveOp::Broadcast: {
      const uint32_t rootGpu = call.gpus[call.root];
      const auto root = static_cast<uint32_t>(
          std::lower_bound(slot.members.begin(), slot.members.end(), rootGpu) - slot.members.begin());
      RingBuilder::addBroadcastChain(slot, ctx, root, bytes, channels);
      break;
    }
    case CollectiveOp::AllToAll:
      AllToAllBuilder::build(slot, ctx, bytes);
      break;
    case CollectiveOp::SendRecv:
      SendRecvBuilder::build(slot, ctx, call.gpus, bytes);
      break;
  }
  SIM_CHECK(slot.lanes.size() <= kLaneMask, "too many lanes in one collective");
  if (slot.pipelined && slot.protoRate == 0 && fabric_.couplesGroups()) impl_->groupPipelines(slot);
  const uint32_t lanes = static_cast<uint32_t>(slot.lanes.size());
  for (uint32_t i = 0; i < lanes; ++i) impl_->pump(s, i);
}

// ---------------------------------------------------------------------------------------------

void CollectiveEngine::Impl::groupPipelines(CollectivePlan& slot) const {
  // Rings: each channel's lanes (contiguous), every edge busy at every step. Trees: each
  // instance's up edges and its down edges (TreeBuilder::buildPipelined pushes each edge's up and
  // down lanes in turn, hence stride 2): within a phase the edges run together, while the two
  // phases overlap only as far as the instance's data outlast its first chunk's round trip.
  const auto lanes = static_cast<uint32_t>(slot.lanes.size());
  const auto group = [&](uint32_t first, uint32_t count, uint32_t stride) {
    if (count < 2) return;
    Time last = Time::zero();
    for (uint32_t k = 0, m = first; k < count; ++k, m += stride) {
      last = std::max(last, slot.lanes[m].delay);
      slot.lanes[m].groupLead = first;
    }
    slot.lanes[first].delay = last;
    slot.lanes[first].groupSize = count;
    slot.lanes[first].groupStride = static_cast<uint8_t>(stride);
  };
  // A pipelined ring's lane (one send for all its steps), or a pipelined tree's edge.
  const auto ringLane = [&](const Lane& l) {
    return slot.algo == PlanAlgo::Lanes && l.kind == LaneKind::Whole && l.data > 0 && l.flow == LaneFlow::Ring &&
           l.repeat > 1 && l.gate;
  };
  const auto treeEdge = [&](const Lane& l) {
    return slot.algo == PlanAlgo::Tree && l.kind == LaneKind::Whole && l.data > 0 && l.fixedDelay;
  };
  for (uint32_t i = 0; i < lanes;) {
    const Lane& l = slot.lanes[i];
    uint32_t j = i + 1;
    if (ringLane(l)) {
      while (j < lanes && ringLane(slot.lanes[j]) && slot.lanes[j].qp == l.qp) ++j;
      group(i, j - i, 1);
    } else if (treeEdge(l)) {
      while (j < lanes && treeEdge(slot.lanes[j]) && slot.lanes[j].n == l.n) ++j;
      if ((j - i) % 2 == 0) {  // (up, down) pairs
        group(i, (j - i) / 2, 2);
        group(i + 1, (j - i) / 2, 2);
      }
    }
    i = j;
  }
}

void CollectiveEngine::Impl::pump(uint32_t s, uint32_t lane) {
  const CollectivePlan& slot = *slots[s];
  Lane& l = slots[s]->lanes[lane];
  if (l.groupLead != kNoLane && l.groupLead != lane) return;  // its group's leader sends it
  if (l.overlap) {
    // Every newly ready send gets its own step-latency event; the events fire in order, each
    // issuing the lane's next send.
    for (const uint32_t ready = l.ready(); l.scheduled < ready; ++l.scheduled)
      sim_.schedule(sim_.now() + stepDelay(slot, l), &e, acquirePending(s, lane));
    return;
  }
  if (l.busy || l.sent >= l.ready()) return;
  l.busy = true;
  sim_.schedule(sim_.now() + stepDelay(slot, l), &e, acquirePending(s, lane));
}

void CollectiveEngine::onEvent(uint32_t tag) {
  impl_->onEvent(tag);
}

void CollectiveEngine::Impl::onEvent(uint32_t tag) {
  const Pending p = pending[tag];
  CollectivePlan& slot = *slots[p.slot];
  SIM_DCHECK(slot.inUse, "event for a finished collective");
  if (!p.delivery && slot.protoRate > 0 && sim_.now() < slot.lanes[p.lane].paceEnd) {
    // The protocol has not yet passed the lane's previous send: this one waits for it.
    sim_.schedule(slot.lanes[p.lane].paceEnd, &e, tag);
    return;
  }
  freePending.push_back(tag);
  if (p.delivery) {
    delivered(p.slot, p.lane);
    return;
  }
  if (slot.lanes[p.lane].overlap) {
    issue(p.slot, p.lane);
    return;
  }
  for (;;) {
    if (issue(p.slot, p.lane)) return;  // the collective completed (its plan may be reused)
    Lane& again = slot.lanes[p.lane];
    if (again.sent >= again.ready()) {
      again.busy = false;
      return;
    }
    if (!again.batch) {
      sim_.schedule(sim_.now() + stepDelay(slot, again), &e, acquirePending(p.slot, p.lane));
      return;
    }
  }
}

bool CollectiveEngine::Impl::issue(uint32_t s, uint32_t lane) {
  CollectivePlan& slot = *slots[s];
  Lane& l = slot.lanes[lane];
  if (l.groupSize > 1) {
    // The whole pipeline at once (Whole lanes of the Simple protocol: one send each).
    groupScratch.clear();
    for (uint32_t k = 0, m = lane; k < l.groupSize; ++k, m += l.groupStride) {
      Lane& ml = slot.lanes[m];
      ++ml.sent;
      const Bytes user = ml.data;
      const Bytes wire = slot.eff >= 1.0 ? user : static_cast<Bytes>(std::ceil(static_cast<double>(user) / slot.eff));
      TransferRequest r;
      r.srcGpu = ml.src;
      r.dstGpu = ml.dst;
      r.bytes = wire;
      r.trafficClass = static_cast<uint8_t>(tuning_.trafficClass);
      r.qp = ml.qp;
      r.tag = (static_cast<uint64_t>(s) << kLaneBits) | m;
      if (ml.repeat > 1) r.burst = (wire + ml.repeat - 1) / ml.repeat;
      ++e.transfersIssued_;
      e.bytesIssued_ += wire;
      groupScratch.push_back(r);
    }
    fabric_.sendGroup(groupScratch, &e);
    return false;
  }
  const uint32_t k = l.sent++;
  const Bytes user = laneBytes(l, slot, k);
  uint32_t dst = l.dst;
  uint16_t qp = l.qp;
  if (l.kind == LaneKind::AllToAll) {
    dst = slot.members[(l.pos + 1 + k) % l.n];
    qp = static_cast<uint16_t>(k % l.qp);
  }
  const double eff = l.nvlsWire ? slot.nvlsEff : slot.eff;
  const Bytes wire = user <= 0    ? 0
                     : eff >= 1.0 ? user
                                  : static_cast<Bytes>(std::ceil(static_cast<double>(user) / eff));
  if (wire == 0) return delivered(s, lane);  // nothing to move: the step is done at once
  if (slot.protoRate > 0)
    l.paceEnd = std::max(sim_.now(), l.paceEnd) +
                Time::ps(std::llround(static_cast<double>(user) / slot.protoRate));
  TransferRequest r;
  r.srcGpu = l.src;
  r.dstGpu = dst;
  r.bytes = wire;
  r.trafficClass = static_cast<uint8_t>(tuning_.trafficClass);
  r.qp = qp;
  r.tag = (static_cast<uint64_t>(s) << kLaneBits) | lane;
  r.inOrder = l.inOrder;
  if (l.repeat > 1) r.burst = (wire + l.repeat - 1) / l.repeat;  // one ring step's share
  ++e.transfersIssued_;
  e.bytesIssued_ += wire;
  fabric_.send(r, &e);
  return false;
}

void CollectiveEngine::onTransferDelivered(uint64_t tag, Time) {
  const uint32_t s = static_cast<uint32_t>(tag >> kLaneBits);
  const uint32_t lane = static_cast<uint32_t>(tag & kLaneMask);
  SIM_CHECK(s < impl_->slots.size() && impl_->slots[s]->inUse, "delivery for an unknown collective");
  const CollectivePlan& slot = *impl_->slots[s];
  const Lane& l = slot.lanes[lane];
  if (slot.protoRate > 0 && l.delivered + 1 == l.sent && sim_.now() < l.paceEnd) {
    // The lane's latest send arrived before the protocol could have passed its data (earlier
    // sends were: the latest waited for them): it counts as delivered when the protocol has.
    sim_.schedule(l.paceEnd, this, impl_->acquirePending(s, lane, true));
    return;
  }
  impl_->delivered(s, lane);
}

bool CollectiveEngine::Impl::delivered(uint32_t s, uint32_t lane) {
  CollectivePlan& slot = *slots[s];
  Lane& l = slot.lanes[lane];
  ++l.delivered;
  SIM_CHECK(slot.remaining > 0, "more deliveries than sends");
  --slot.remaining;
  const auto pumpLane = [&](uint32_t other) { pump(s, other); };
  switch (l.flow) {
    case LaneFlow::Ring:
    case LaneFlow::Chain:
      if (l.next != kNoLane) {
        ++slot.lanes[l.next].received;
        pump(s, l.next);
      }
      if (slot.algo == PlanAlgo::Hierarchical && l.phase < 2)
        HierarchicalBuilder::onReceipt(slot, l.phase, l.dstIndex, pumpLane);
      break;
    case LaneFlow::TreeUp:
    case LaneFlow::TreeDown:
      TreeBuilder::onDelivered(slot, lane, pumpLane);
      break;
    case LaneFlow::None:
      if (slot.algo == PlanAlgo::NvlsTree && l.phase == 1)
        NvlsTreeBuilder::onReceipt(slot, l.dstIndex, pumpLane);
      break;
  }
  if (l.window != kNoLane) pump(s, lane);  // a buffer slot is free again
  if (slot.remaining == 0) {
    const uint64_t id = slot.id;
    CollectiveListener* listener = slot.listener;
    releaseSlot(s);
    listener->onCollectiveDone(id, sim_.now());
    return true;
  }
  return false;
}

}  // namespace fabricsim
