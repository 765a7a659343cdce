// CollectiveEngine: every algorithm is a set of lanes (one sender -> one peer stream of sends
// per channel) whose sends are unlocked by deliveries on other lanes (ring successor, chain
// successor, tree parent / children, the next phase of hierarchical). Per collective: a slot
// with its lanes (vectors reused when the slot is reused); per step: O(1) work, one event for
// the step latency (tag = index of a pooled {slot, lane} record) and one Fabric transfer (tag =
// slot << 40 | lane).
#include "sim/workload/CollectiveEngine.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/workload/TreeShape.h"

namespace fabricsim {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr int kLaneBits = 40;
constexpr uint64_t kLaneMask = (uint64_t{1} << kLaneBits) - 1;
constexpr uint64_t kMaxSlots = uint64_t{1} << (64 - kLaneBits);
/// Bytes a pipelined connection may have in flight (NCCL_BUFFSIZE's default, 4 MiB): a tree or
/// broadcast lane waits for deliveries once this much is outstanding, as NCCL's sender waits for
/// free slots in the receiver's buffer. Without it a leaf would push all its data at once.
constexpr Bytes kConnectionBuffer = 4 * 1024 * 1024;

/// Share i of `total` split into `parts` near-equal shares (the first total % parts get one
/// byte more), so that the shares add up to `total` exactly.
Bytes share(Bytes total, uint64_t parts, uint64_t i) {
  const Bytes p = static_cast<Bytes>(parts);
  return total / p + (static_cast<Bytes>(i) < total % p ? 1 : 0);
}

bool sameHost(uint32_t a, uint32_t b, uint32_t g) {
  return a / g == b / g;
}

/// NCCL 2.30.7's tuner (src/graph/tuning.cc, ncclTopoTuneModel): ring LL runs at half the
/// bandwidth (8-byte lines, 4 bytes of data), ring LL128 at 0.92 of it.
constexpr double kLLEfficiency = 0.5;
constexpr double kLL128Efficiency = 0.92;

uint32_t modN(int64_t v, uint32_t n) {
  const int64_t m = v % static_cast<int64_t>(n);
  return static_cast<uint32_t>(m < 0 ? m + n : m);
}

/// How a lane's sends are sized and addressed.
enum class LaneKind : uint8_t {
  RingReduceScatter,  ///< send k carries chunk (pos - k - 1) mod n of the lane's data
  RingAllGather,      ///< send k carries chunk (pos - k) mod n
  RingAllReduce,      ///< reduce-scatter for k < n - 1, then all-gather
  Pipelined,          ///< send k carries bytes [k * chunk, (k + 1) * chunk) of the lane's data
  Whole,              ///< one send of all the lane's data
  AllToAll,           ///< send k goes to rank (pos + 1 + k) mod n with that rank's share
};

/// What a delivered send unlocks.
enum class Flow : uint8_t { Ring, Chain, TreeUp, TreeDown, None };

/// One stream of sends from one GPU to one peer (one channel of one ring position, one tree
/// edge, ...). Its send k may start once `ready()` exceeds k; sends leave one after another,
/// each after the step latency (all at once for a batch lane).
struct Lane {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t total = 0;     ///< sends
  uint32_t received = 0;  ///< sends whose data have arrived (data dependencies met)
  uint32_t sent = 0;
  uint32_t delivered = 0;
  uint32_t next = kNone;  ///< Ring / Chain: the lane whose data this one delivers
  uint32_t pos = 0;       ///< position of the sender in its ring / chain / rank list
  uint32_t n = 0;         ///< ring / alltoall: ranks (chunks per channel); tree lanes: the tree (0, 1)
  uint32_t dstIndex = 0;  ///< hierarchical: receiver's index in the member list
  Bytes data = 0;         ///< user bytes this lane's channel carries
  uint16_t qp = 0;        ///< the request's qp; AllToAll lanes: the channel count (send k uses k % it)
  LaneKind kind = LaneKind::Whole;
  Flow flow = Flow::None;
  uint8_t base = 0;   ///< sends available before any data arrive (ring: 1, its own chunk)
  uint8_t phase = 0;  ///< hierarchical: 0 intra-host reduce-scatter, 1 inter-host, 2 all-gather
  bool gate = true;   ///< false until the sender's previous phase has completed
  bool busy = false;  ///< a step-latency event is pending
  bool network = false;
  bool batch = false;
  uint32_t repeat = 1;  ///< ring steps this lane's one send stands for (pipelined ring model)
  Time delay;           ///< pipelined or fixed-delay lane: the wait before its one send
  bool fixedDelay = false;  ///< the wait before each send is `delay` (NVLS lanes)
  bool nvlsWire = false;    ///< wire bytes = user bytes / nvlsEfficiency (NVLS lanes)
  /// Stepped ring lanes: each send that becomes ready waits its own step latency, overlapping
  /// the waits of sends before it, so a ring's latency is the sum of its hops' latencies along
  /// the data's path (NCCL's ring latency) rather than steps x the slowest hop's.
  bool overlap = false;
  uint32_t scheduled = 0;   ///< overlap lanes: sends whose step-latency event has been scheduled

  uint32_t window = kNone;  ///< most sends in flight (issued, not yet delivered)

  uint32_t ready() const {
    if (!gate) return 0;
    const uint32_t byData = std::min(total, received + base);
    return window == kNone ? byData : std::min(byData, delivered + window);
  }
};

enum class SlotAlgo : uint8_t { Lanes, Tree, Hierarchical, NvlsTree };

struct Slot {
  bool inUse = false;
  bool pipelined = false;  ///< rings use the pipelined model (one send per edge)
  uint64_t id = 0;
  CollectiveListener* listener = nullptr;
  SlotAlgo algo = SlotAlgo::Lanes;
  uint64_t remaining = 0;  ///< sends not yet delivered
  Bytes chunk = 0;         ///< Pipelined lanes
  // The call's protocol: wire efficiency and per-step latencies (NVLink, network).
  double eff = 1.0;
  double nvlsEff = 1.0;  ///< NVLS lanes' wire efficiency
  Time stepNv, stepNet;
  std::vector<Lane> lanes;
  std::vector<uint32_t> members;  ///< participant GPUs in ring order
  // Hierarchical
  uint32_t hosts = 0, perHost = 0, channels = 0, nvChannels = 0;
  uint32_t base2 = 0;                  ///< first lane of phase 2
  std::vector<uint32_t> railFirst;     ///< per local index: first lane of its phase-1 ring
  std::vector<uint32_t> railChannels;  ///< per local index: channels of its phase-1 ring
  std::vector<uint32_t> received;      ///< per member: phase-0 receipts, then phase-1 receipts
  // Tree (per tree t: 0..1, per rank)
  uint32_t ranks = 0;
  std::vector<uint32_t> parent;    ///< [t * N + r]
  std::vector<uint32_t> children;  ///< [(t * N + r) * 3 + i], kNone when absent
};

struct Pending {
  uint32_t slot;
  uint32_t lane;
};

}  // namespace

struct CollectiveEngine::Impl {
  explicit Impl(CollectiveEngine& engine)
      : e(engine),
        sim_(engine.sim_),
        fabric_(engine.fabric_),
        tuning_(engine.tuning_),
        gpusPerHost_(engine.gpusPerHost_),
        pipelinedRings(tuning_.ringModel == RingModel::Pipelined ||
                       (tuning_.ringModel == RingModel::Auto && fabric_.backendName() != "packet")) {}

  /// Appends the lanes of `ringChannels` rings through members memberBase + p * memberStride
  /// (p < ringSize), each lane sending `steps` chunks of its channel's share of `data`.
  void addRing(uint32_t s, LaneKind kind, uint32_t steps, uint32_t ringSize, Bytes data, uint32_t ringChannels,
               uint8_t phase, bool gate, uint32_t memberBase, uint32_t memberStride);
  void buildHierarchical(uint32_t s, Bytes bytes);
  /// Sets slot.hosts and slot.perHost from its members (host-major, equal GPUs per host, at
  /// least two hosts and two GPUs each: what `algorithm` needs).
  void splitByHost(Slot& slot, const char* algorithm) const;
  void buildNvls(uint32_t s, Bytes bytes);
  void buildNvlsTree(uint32_t s, Bytes bytes);
  void nvlsTreeReceipt(uint32_t s, uint32_t idx);
  /// Appends one fixed-delay NVLS lane from member a to member b carrying `user` bytes.
  void addNvlsLane(Slot& slot, uint32_t a, uint32_t b, Bytes user, Time delay, uint8_t phase, bool gate);
  void buildTree(uint32_t s, Bytes bytes);
  /// Schedules lane's next send after the step latency unless one is pending or none is ready.
  void pump(uint32_t s, uint32_t lane);
  /// Issues lane's next send; true if that completed the collective.
  bool issue(uint32_t s, uint32_t lane);
  /// One send of `lane` has been delivered; true if that completed the collective.
  bool delivered(uint32_t s, uint32_t lane);
  void hierarchicalReceipt(uint32_t s, uint8_t phase, uint32_t idx);
  void treeDelivered(uint32_t s, uint32_t lane);
  void onEvent(uint32_t tag);

  /// Delay before lane's next send: one step latency, or a pipelined lane's own delay.
  static Time stepDelay(const Slot& s, const Lane& l) {
    if (l.repeat > 1 || l.fixedDelay) return l.delay;
    return l.network ? s.stepNet : s.stepNv;
  }
  /// The wait of a pipelined lane before its one send. In a stepped ring each step forwards
  /// data received in the previous step, so the lane's last (k-th) send carries data that has
  /// crossed the k hops ending with its own: its critical path is the sum of those hops'
  /// latencies (each hop's step latency, NVLink or network, plus its path latency -- NCCL's
  /// ring latency), `pathLatencies`, plus the lane's bytes D at the path rate B, while C
  /// channels sharing a link need C D / B; the stepped ring takes the larger. The lane's one
  /// transfer takes C D / B plus its own path latency L when its channels share the link, so it
  /// waits the difference (at least its own step latency).
  Time pipelinedDelay(const Slot& s, const Lane& l, Time pathLatencies, uint32_t channels) const {
    const Time step = l.network ? s.stepNet : s.stepNv;
    const double wire = static_cast<double>(l.data) / s.eff;
    const double hiddenPs = (channels - 1) * wire / fabric_.pathRate(l.src, l.dst) * 1e12;
    const Time wait = pathLatencies - fabric_.pathLatency(l.src, l.dst) - Time::ps(static_cast<int64_t>(hiddenPs));
    return std::max(step, wait);
  }

  CollectiveEngine& e;
  Simulator& sim_;
  Fabric& fabric_;
  const CollectiveTuning& tuning_;
  const int gpusPerHost_;
  const bool pipelinedRings;
  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<uint32_t> freeSlots;
  std::vector<Pending> pending;
  std::vector<uint32_t> freePending;
  size_t active = 0;
  std::vector<uint32_t> scratch;
  std::vector<Time> hopPrefix;

  uint32_t acquireSlot() {
    uint32_t s;
    if (!freeSlots.empty()) {
      s = freeSlots.back();
      freeSlots.pop_back();
    } else {
      s = static_cast<uint32_t>(slots.size());
      SIM_CHECK(s < kMaxSlots, "too many collectives in flight");
      slots.push_back(std::make_unique<Slot>());
    }
    Slot& slot = *slots[s];
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
    ++active;
    return s;
  }
  void releaseSlot(uint32_t s) {
    Slot& slot = *slots[s];
    slot.inUse = false;
    // A free slot keeps its lists' capacity for the next collective, but not a large one's:
    // otherwise, reused in turn by every kind of collective, each slot would grow to hold the
    // largest one's lists, and the engine's memory would creep up iteration after iteration.
    if (slot.lanes.capacity() > kKeptLanes) std::vector<Lane>().swap(slot.lanes);
    for (auto* v :
         {&slot.members, &slot.railFirst, &slot.railChannels, &slot.received, &slot.parent, &slot.children})
      if (v->capacity() > 4 * kKeptLanes) std::vector<uint32_t>().swap(*v);
    freeSlots.push_back(s);
    --active;
  }
  static constexpr size_t kKeptLanes = 64;  ///< lanes a free slot may keep room for (5 KiB)
  uint32_t acquirePending(uint32_t slot, uint32_t lane) {
    uint32_t p;
    if (!freePending.empty()) {
      p = freePending.back();
      freePending.pop_back();
      pending[p] = Pending{slot, lane};
    } else {
      p = static_cast<uint32_t>(pending.size());
      pending.push_back(Pending{slot, lane});
    }
    return p;
  }
};

namespace {

/// User bytes and destination of send k of lane l.
Bytes laneBytes(const Lane& l, const Slot& s, uint32_t k) {
  switch (l.kind) {
    case LaneKind::RingReduceScatter:
      return share(l.data, l.n, modN(static_cast<int64_t>(l.pos) - k - 1, l.n));
    case LaneKind::RingAllGather:
      return share(l.data, l.n, modN(static_cast<int64_t>(l.pos) - k, l.n));
    case LaneKind::RingAllReduce:
      return k + 1 < l.n ? share(l.data, l.n, modN(static_cast<int64_t>(l.pos) - k - 1, l.n))
                         : share(l.data, l.n, modN(static_cast<int64_t>(l.pos) - (k - (l.n - 1)), l.n));
    case LaneKind::Pipelined:
      return std::min<Bytes>(s.chunk, l.data - static_cast<Bytes>(k) * s.chunk);
    case LaneKind::Whole:
      return l.data;
    case LaneKind::AllToAll:
      return share(l.data, l.n, (l.pos + 1 + k) % l.n);
  }
  return 0;
}

}  // namespace

CollectiveEngine::CollectiveEngine(Simulator& sim, Fabric& fabric, const CollectiveTuning& tuning,
                                   int gpusPerHost)
    : sim_(sim),
      fabric_(fabric),
      tuning_(tuning),
      gpusPerHost_(gpusPerHost),
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

double CollectiveEngine::busBandwidthFactor(CollectiveOp op, size_t ranks) {
  if (ranks == 0) return 0;
  const double n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::AllReduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
      return (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::SendRecv:
      return 1;
  }
  return 1;
}

CollectiveEngine::Shape CollectiveEngine::shapeOf(const std::vector<uint32_t>& gpus) const {
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  std::vector<uint32_t>& hostsOf = impl_->scratch;
  hostsOf.clear();
  for (uint32_t gpu : gpus) hostsOf.push_back(gpu / g);
  std::sort(hostsOf.begin(), hostsOf.end());
  Shape sh;
  sh.ranks = static_cast<uint32_t>(gpus.size());
  for (size_t i = 0; i < hostsOf.size();) {
    size_t j = i;
    while (j < hostsOf.size() && hostsOf[j] == hostsOf[i]) ++j;
    if (sh.hosts == 0)
      sh.perHost = static_cast<uint32_t>(j - i);
    else if (j - i != sh.perHost)
      sh.uniform = false;
    ++sh.hosts;
    i = j;
  }
  return sh;
}

CollectiveAlgorithm CollectiveEngine::resolve(const CollectiveCall& call) const {
  const bool explicitChoice = call.algorithm != CollectiveAlgorithm::Auto;
  const CollectiveAlgorithm want = explicitChoice ? call.algorithm : tuning_.algorithm;
  const bool allReduce = call.op == CollectiveOp::AllReduce;
  const bool direct = call.op == CollectiveOp::AllToAll || call.op == CollectiveOp::SendRecv;
  const bool nvlsKind = want == CollectiveAlgorithm::Nvls || want == CollectiveAlgorithm::NvlsTree;
  const bool allReduceOnly = want == CollectiveAlgorithm::Tree || want == CollectiveAlgorithm::Hierarchical || nvlsKind;
  if (direct) {
    if (explicitChoice && allReduceOnly)
      throw InputError("", 0, 0, "collectives.algorithm",
                       std::string(toString(want)) + " does not apply to " + toString(call.op) +
                           " (it has one algorithm: direct)");
    return CollectiveAlgorithm::Direct;
  }
  if (!allReduce && allReduceOnly) {
    // The tuning's default applies to every collective of a job: a tree, hierarchical or NVLS
    // default falls back to the ring for the operations it cannot run; an explicit request is an
    // error.
    if (explicitChoice)
      throw InputError(
          "", 0, 0, "collectives.algorithm",
          std::string(toString(want)) + " applies only to all_reduce, not to " + toString(call.op));
    return CollectiveAlgorithm::Ring;
  }
  if (want == CollectiveAlgorithm::Direct) {
    if (explicitChoice)
      throw InputError(
          "", 0, 0, "collectives.algorithm",
          std::string("direct applies only to alltoall and sendrecv, not to ") + toString(call.op));
    return CollectiveAlgorithm::Ring;
  }
  if (want == CollectiveAlgorithm::Ring || want == CollectiveAlgorithm::Tree) return want;
  if (!allReduce) return CollectiveAlgorithm::Ring;
  const Shape sh = shapeOf(call.gpus);
  const bool hierOk = sh.hosts > 1 && sh.perHost > 1 && sh.uniform;
  const bool nvlsOk = sh.hosts == 1 && sh.perHost > 1;
  if (nvlsKind) {
    if (explicitChoice) {
      if (!tuning_.nvls)
        throw InputError("", 0, 0, "collectives.algorithm",
                         std::string(toString(want)) +
                             " needs NVLink SHARP in the hosts' NVSwitches (collectives.nvls: true)");
      if (want == CollectiveAlgorithm::Nvls && !nvlsOk)
        throw InputError("", 0, 0, "collectives.algorithm",
                         "nvls runs inside one host; this all_reduce spans " + std::to_string(sh.hosts) +
                             " hosts (use nvls_tree)");
      if (want == CollectiveAlgorithm::NvlsTree && !hierOk)
        throw InputError("", 0, 0, "collectives.algorithm",
                         "nvls_tree needs more than one host, more than one GPU per host and the same "
                         "number of GPUs on every host");
      return want;
    }
    if (tuning_.nvls && nvlsOk) return CollectiveAlgorithm::Nvls;
    if (tuning_.nvls && hierOk) return CollectiveAlgorithm::NvlsTree;
    return CollectiveAlgorithm::Ring;
  }
  if (want == CollectiveAlgorithm::Auto && tuning_.nvls && (nvlsOk || hierOk)) {
    // NCCL's tuner: the fastest candidate by the analytic estimate.
    const CollectiveAlgorithm nv = nvlsOk ? CollectiveAlgorithm::Nvls : CollectiveAlgorithm::NvlsTree;
    const CollectiveProtocol rp = protocolFor(call, CollectiveAlgorithm::Ring);
    return estimateUs(call, nv, CollectiveProtocol::Simple) < estimateUs(call, CollectiveAlgorithm::Ring, rp)
               ? nv
               : CollectiveAlgorithm::Ring;
  }
  // Auto (without NVLS) or Hierarchical all-reduce: hierarchical needs more than one host, more
  // than one GPU per host, and the same number of GPUs of the call on every host.
  if (hierOk) return CollectiveAlgorithm::Hierarchical;
  return CollectiveAlgorithm::Ring;
}

CollectiveProtocol CollectiveEngine::protocolFor(const CollectiveCall& call, CollectiveAlgorithm algo) const {
  if (algo == CollectiveAlgorithm::Nvls || algo == CollectiveAlgorithm::NvlsTree) return CollectiveProtocol::Simple;
  if (tuning_.protocol != CollectiveProtocol::Auto) return tuning_.protocol;
  // Auto: the protocol choice follows the ring's estimate (NCCL picks per algorithm and
  // protocol; the other algorithms here run Simple, NCCL's choice for large sizes).
  if (algo != CollectiveAlgorithm::Ring) return CollectiveProtocol::Simple;
  CollectiveProtocol best = CollectiveProtocol::Simple;
  double bestUs = estimateUs(call, algo, best);
  for (CollectiveProtocol p : {CollectiveProtocol::LL128, CollectiveProtocol::LL}) {
    const double t = estimateUs(call, algo, p);
    if (t < bestUs) {
      bestUs = t;
      best = p;
    }
  }
  return best;
}

double CollectiveEngine::protocolEfficiency(CollectiveProtocol p) const {
  switch (p) {
    case CollectiveProtocol::LL:
      return kLLEfficiency;
    case CollectiveProtocol::LL128:
      return kLL128Efficiency;
    case CollectiveProtocol::Auto:
    case CollectiveProtocol::Simple:
      break;
  }
  return tuning_.protocolEfficiency;
}

double CollectiveEngine::protocolLatencyScale(CollectiveProtocol p) const {
  switch (p) {
    case CollectiveProtocol::LL:
      return tuning_.llLatencyScale;
    case CollectiveProtocol::LL128:
      return tuning_.ll128LatencyScale;
    case CollectiveProtocol::Auto:
    case CollectiveProtocol::Simple:
      break;
  }
  return 1.0;
}

double CollectiveEngine::estimateUs(const CollectiveCall& call, CollectiveAlgorithm algo, CollectiveProtocol proto) const {
  const Shape sh = shapeOf(call.gpus);
  const double S = static_cast<double>(call.bytes);
  const double n = sh.ranks;
  if (sh.ranks < 2 || call.bytes <= 0) return 0;
  // A pair of GPUs on one host and a pair on different hosts, for the path rates and latencies.
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  uint32_t ia = kNone, ib = kNone, xa = kNone, xb = kNone;
  for (size_t i = 1; i < call.gpus.size(); ++i) {
    const uint32_t a = call.gpus[0], b = call.gpus[i];
    if (sameHost(a, b, g) && ia == kNone) ia = a, ib = b;
    if (!sameHost(a, b, g) && xa == kNone) xa = a, xb = b;
  }
  const double rNv = ia != kNone ? fabric_.pathRate(ia, ib) : 0;
  const double rNet = xa != kNone ? fabric_.pathRate(xa, xb) : 0;
  const double lNv = ia != kNone ? fabric_.pathLatency(ia, ib).micros() : 0;
  const double lNet = xa != kNone ? fabric_.pathLatency(xa, xb).micros() : 0;
  const double scale = protocolLatencyScale(proto);
  const double aNv = tuning_.stepLatencyNvlink.micros() * scale + lNv;
  const double aNet = tuning_.stepLatencyNetwork.micros() * scale + lNet;
  const double us = 1e6;
  const double nvlsRate = rNv * tuning_.nvlsEfficiency;
  switch (algo) {
    case CollectiveAlgorithm::Nvls:
      return tuning_.nvlsLatency.micros() + (S * (n + 1) / n + std::min(S, nvlsPipelineBytes())) / nvlsRate * us;
    case CollectiveAlgorithm::NvlsTree: {
      const double G = sh.perHost, H = sh.hosts;
      const double nvlsRate = rNv * tuning_.nvlsEfficiency * tuning_.nvlsTreeEfficiency;
      const double f = std::min(S, nvlsPipelineBytes());
      const double nvlsT = S * (G + 1) / G / nvlsRate * us;
      const double fill = f / nvlsRate * us;
      const double tail = f / G / nvlsRate * us;
      const double interT = 2 * (H - 1) / H * (S / G) / (rNet * tuning_.protocolEfficiency) * us;
      const double interLat = 2 * (H - 1) * (tuning_.stepLatencyNetwork.micros() + lNet);
      return tuning_.nvlsLatency.micros() + std::max(nvlsT - tail, fill + interLat + interT) + tail;
    }
    default:
      break;
  }
  // Ring (also the estimate of the other algorithms here).
  const bool allReduce = call.op == CollectiveOp::AllReduce;
  const double k = allReduce ? 2 * (n - 1) : n - 1;
  const double netHops = sh.hosts > 1 ? sh.hosts : 0;
  const double lat = k * ((n - netHops) * aNv + netHops * aNet) / n;
  const double edgeBytes = k / n * S / protocolEfficiency(proto);
  double t = 0;
  if (sh.hosts == 1) {
    t = edgeBytes / rNv;
  } else {
    const double c = std::max(1, tuning_.channels);
    const double perNic = sh.uniform && sh.perHost > 1 ? std::ceil(c / sh.perHost) / c : 1.0;
    t = std::max(sh.perHost > 1 ? edgeBytes * (sh.perHost - 1) / sh.perHost / rNv : 0.0, edgeBytes * perNic / rNet);
  }
  return lat + t * us;
}

double CollectiveEngine::nvlsPipelineBytes() const {
  return static_cast<double>(tuning_.nvlsPipeline);
}

// ---------------------------------------------------------------------------------------------

namespace {

uint32_t pipelineWindow(Bytes chunk) {
  return static_cast<uint32_t>(std::max<Bytes>(2, (kConnectionBuffer + chunk - 1) / chunk));
}

}  // namespace

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
  Slot& slot = *impl_->slots[s];
  slot.id = id;
  slot.listener = listener;
  slot.algo = SlotAlgo::Lanes;
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  const bool network = !sameHost(srcGpu, dstGpu, g);
  const uint32_t c =
      static_cast<uint32_t>(std::min<Bytes>(network ? tuning_.channels : tuning_.nvlinkChannels, bytes));
  for (uint32_t ch = 0; ch < c; ++ch) {
    Lane l;
    l.src = srcGpu;
    l.dst = dstGpu;
    l.total = 1;
    l.received = 1;
    l.data = share(bytes, c, ch);
    l.qp = static_cast<uint16_t>(ch);
    l.kind = LaneKind::Whole;
    l.network = network;
    slot.lanes.push_back(l);
  }
  slot.remaining = c;
  for (uint32_t i = 0; i < c; ++i) impl_->pump(s, i);
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
  Slot& slot = *impl_->slots[s];
  slot.members.assign(call.gpus.begin(), call.gpus.end());
  std::sort(slot.members.begin(), slot.members.end());
  if (std::adjacent_find(slot.members.begin(), slot.members.end()) != slot.members.end()) {
    const uint32_t dup = *std::adjacent_find(slot.members.begin(), slot.members.end());
    impl_->releaseSlot(s);
    throw InputError("", 0, 0, "ranks",
                     std::string("GPU ") + std::to_string(dup) + " appears twice in one " + toString(call.op));
  }
  if (call.bytes == 0 || call.gpus.size() == 1) {
    impl_->releaseSlot(s);
    listener->onCollectiveDone(id, sim_.now());
    return;
  }
  slot.id = id;
  slot.listener = listener;
  slot.algo = SlotAlgo::Lanes;
  const uint32_t n = static_cast<uint32_t>(slot.members.size());
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  const bool crossHost = slot.members.front() / g != slot.members.back() / g;
  const Bytes bytes = call.bytes;
  const uint32_t channels =
      static_cast<uint32_t>(std::min<Bytes>(crossHost ? tuning_.channels : tuning_.nvlinkChannels, bytes));
  if (call.op != CollectiveOp::AllToAll && call.op != CollectiveOp::SendRecv) {
    // The call's protocol: its wire efficiency and per-step latencies.
    const CollectiveProtocol proto = protocolFor(call, algo);
    const double scale = protocolLatencyScale(proto);
    slot.eff = protocolEfficiency(proto);
    slot.stepNv = Time::ps(std::llround(static_cast<double>(tuning_.stepLatencyNvlink.picos()) * scale));
    slot.stepNet = Time::ps(std::llround(static_cast<double>(tuning_.stepLatencyNetwork.picos()) * scale));
  }

  switch (call.op) {
    case CollectiveOp::AllReduce:
      if (algo == CollectiveAlgorithm::Nvls) {
        impl_->buildNvls(s, bytes);
        break;
      }
      if (algo == CollectiveAlgorithm::NvlsTree) {
        impl_->buildNvlsTree(s, bytes);
        break;
      }
      if (algo == CollectiveAlgorithm::Tree) {
        impl_->buildTree(s, bytes);
        break;
      }
      if (algo == CollectiveAlgorithm::Hierarchical) {
        impl_->buildHierarchical(s, bytes);
        break;
      }
      impl_->addRing(s, LaneKind::RingAllReduce, 2 * (n - 1), n, bytes, channels, 0, true, 0, 1);
      break;
    case CollectiveOp::AllGather:
      impl_->addRing(s, LaneKind::RingAllGather, n - 1, n, bytes, channels, 0, true, 0, 1);
      break;
    case CollectiveOp::ReduceScatter:
      impl_->addRing(s, LaneKind::RingReduceScatter, n - 1, n, bytes, channels, 0, true, 0, 1);
      break;
    case CollectiveOp::Broadcast: {
      // A chain through the ring order starting at the root, pipelined in chunks per channel.
      const uint32_t rootGpu = call.gpus[call.root];
      const uint32_t r0 = static_cast<uint32_t>(
          std::lower_bound(slot.members.begin(), slot.members.end(), rootGpu) - slot.members.begin());
      slot.chunk = tuning_.chunkSize;
      for (uint32_t c = 0; c < channels; ++c) {
        const Bytes cd = share(bytes, channels, c);
        const uint32_t chunks = static_cast<uint32_t>((cd + slot.chunk - 1) / slot.chunk);
        const uint32_t first = static_cast<uint32_t>(slot.lanes.size());
        for (uint32_t p = 0; p + 1 < n; ++p) {
          Lane l;
          l.src = slot.members[(r0 + p) % n];
          l.dst = slot.members[(r0 + p + 1) % n];
          l.total = chunks;
          l.received = p == 0 ? chunks : 0;
          l.next = p + 2 < n ? first + p + 1 : kNone;
          l.pos = p;
          l.data = cd;
          l.qp = static_cast<uint16_t>(c);
          l.kind = LaneKind::Pipelined;
          l.window = pipelineWindow(slot.chunk);
          l.flow = Flow::Chain;
          l.network = !sameHost(l.src, l.dst, g);
          slot.lanes.push_back(l);
        }
        slot.remaining += static_cast<uint64_t>(chunks) * (n - 1);
      }
      break;
    }
    case CollectiveOp::AllToAll: {
      // One batch lane per rank: after one step latency it sends every other rank its share.
      const uint32_t c = static_cast<uint32_t>(crossHost ? tuning_.channels : tuning_.nvlinkChannels);
      for (uint32_t r = 0; r < n; ++r) {
        Lane l;
        l.src = slot.members[r];
        l.dst = slot.members[(r + 1) % n];
        l.total = n - 1;
        l.received = n - 1;
        l.pos = r;
        l.n = n;
        l.data = bytes;
        l.qp = static_cast<uint16_t>(c);  // the channel count; send k uses qp k % c
        l.kind = LaneKind::AllToAll;
        l.network = slot.members.front() / g != slot.members.back() / g;
        l.batch = true;
        slot.lanes.push_back(l);
      }
      slot.remaining = static_cast<uint64_t>(n) * (n - 1);
      break;
    }
    case CollectiveOp::SendRecv: {
      for (uint32_t r = 0; r < n; ++r) {
        const uint32_t src = call.gpus[r];
        const uint32_t dst = call.gpus[(r + 1) % n];
        const bool network = !sameHost(src, dst, g);
        const uint32_t c = static_cast<uint32_t>(
            std::min<Bytes>(network ? tuning_.channels : tuning_.nvlinkChannels, bytes));
        for (uint32_t ch = 0; ch < c; ++ch) {
          Lane l;
          l.src = src;
          l.dst = dst;
          l.total = 1;
          l.received = 1;
          l.data = share(bytes, c, ch);
          l.qp = static_cast<uint16_t>(ch);
          l.kind = LaneKind::Whole;
          l.network = network;
          slot.lanes.push_back(l);
        }
        slot.remaining += c;
      }
      break;
    }
  }
  SIM_CHECK(slot.lanes.size() <= kLaneMask, "too many lanes in one collective");
  const uint32_t lanes = static_cast<uint32_t>(slot.lanes.size());
  for (uint32_t i = 0; i < lanes; ++i) impl_->pump(s, i);
}

void CollectiveEngine::Impl::addRing(uint32_t s, LaneKind kind, uint32_t steps, uint32_t ringSize, Bytes data,
                                   uint32_t ringChannels, uint8_t phase, bool gate, uint32_t memberBase,
                                   uint32_t memberStride) {
  Slot& slot = *slots[s];
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  // A ring through all members of a multi-host call with the same number of GPUs on every host
  // is rotated per channel inside each host: channel c enters a host at its local GPU c mod G
  // and leaves from GPU (c - 1) mod G, so that the channels' inter-host hops spread over the
  // hosts' NICs (one per GPU) as NCCL's rings do, instead of all leaving through one NIC.
  uint32_t rot = 0;  // GPUs per host when rotating, else 0
  if (memberBase == 0 && memberStride == 1 && ringSize == slot.members.size()) {
    uint32_t per = 1;
    while (per < ringSize && sameHost(slot.members[per], slot.members[0], g)) ++per;
    // Members are sorted, so hosts are contiguous: uniform when every block of `per` members
    // is one host.
    bool uniform = per > 1 && per < ringSize && ringSize % per == 0;
    for (uint32_t p = 0; uniform && p < ringSize; ++p)
      uniform = sameHost(slot.members[p], slot.members[(p / per) * per], g) &&
                (p % per != 0 || p == 0 || !sameHost(slot.members[p], slot.members[p - 1], g));
    if (uniform) rot = per;
  }
  auto member = [&](uint32_t c, uint32_t p) {
    const uint32_t idx = rot ? (p / rot) * rot + ((p % rot) + c) % rot : memberBase + p * memberStride;
    return idx;
  };
  // Lanes of ring channel c at position p: first + c * ringSize + p; members member(c, p), each
  // sending to the next.
  const uint32_t first = static_cast<uint32_t>(slot.lanes.size());
  for (uint32_t c = 0; c < ringChannels; ++c) {
    const Bytes cd = share(data, ringChannels, c);
    // Pipelined: each hop's latency (step latency plus path latency) and their prefix sums, for
    // the sum over the `steps` hops ending at each lane.
    std::vector<Time>& prefix = hopPrefix;
    if (slot.pipelined && (c == 0 || rot != 0)) {  // unrotated channels share one ring order
      prefix.assign(ringSize + 1, Time::zero());
      for (uint32_t p = 0; p < ringSize; ++p) {
        const uint32_t a = slot.members[member(c, p)], b = slot.members[member(c, (p + 1) % ringSize)];
        prefix[p + 1] = prefix[p] + fabric_.pathLatency(a, b) + (sameHost(a, b, g) ? slot.stepNv : slot.stepNet);
      }
    }
    const Time cycle = slot.pipelined ? prefix[ringSize] : Time::zero();
    // Sum of the latencies of hops p - steps + 1 .. p (mod ringSize).
    auto window = [&](uint32_t p) {
      const int64_t full = steps / ringSize;
      const uint32_t rem = steps % ringSize;
      Time t = cycle * full;
      // the rem hops ending at p: indices p - rem + 1 .. p
      const int64_t lo = static_cast<int64_t>(p) + 1 - rem;
      if (lo >= 0)
        t += prefix[p + 1] - prefix[static_cast<size_t>(lo)];
      else
        t += prefix[p + 1] + (cycle - prefix[static_cast<size_t>(lo + ringSize)]);
      return t;
    };
    for (uint32_t p = 0; p < ringSize; ++p) {
      Lane l;
      const uint32_t q = (p + 1) % ringSize;
      l.src = slot.members[member(c, p)];
      l.dst = slot.members[member(c, q)];
      l.pos = p;
      l.n = ringSize;
      l.dstIndex = member(c, q);
      l.qp = static_cast<uint16_t>(c);
      l.flow = Flow::Ring;
      l.base = 1;
      l.phase = phase;
      l.gate = gate;
      l.network = !sameHost(l.src, l.dst, g);
      if (slot.pipelined) {
        // One send per ring edge and channel carrying every chunk its steps would: reduce-scatter
        // forwards all chunks but the sender's own, all-gather all but the receiver's.
        const Bytes rs = cd - share(cd, ringSize, p);
        const Bytes ag = cd - share(cd, ringSize, q);
        l.total = 1;
        l.data = kind == LaneKind::RingReduceScatter ? rs : kind == LaneKind::RingAllGather ? ag : rs + ag;
        l.kind = LaneKind::Whole;  // next stays kNone: no per-step dependency; phases still count receipts
        l.repeat = steps;
        l.delay = pipelinedDelay(slot, l, window(p), ringChannels);
        slot.lanes.push_back(l);
        continue;
      }
      l.total = steps;
      l.next = first + c * ringSize + q;
      l.data = cd;
      l.kind = kind;
      l.overlap = true;
      slot.lanes.push_back(l);
    }
  }
  slot.remaining += static_cast<uint64_t>(slot.pipelined ? 1 : steps) * ringChannels * ringSize;
}

void CollectiveEngine::Impl::splitByHost(Slot& slot, const char* algorithm) const {
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  const uint32_t n = static_cast<uint32_t>(slot.members.size());
  uint32_t perHost = 1;
  while (perHost < n && slot.members[perHost] / g == slot.members[0] / g) ++perHost;
  const uint32_t hosts = n / perHost;
  SIM_CHECK(hosts * perHost == n && hosts > 1 && perHost > 1,
            std::string(algorithm) + " all-reduce needs equal hosts");
  slot.hosts = hosts;
  slot.perHost = perHost;
}

void CollectiveEngine::Impl::buildHierarchical(uint32_t s, Bytes bytes) {
  Slot& slot = *slots[s];
  slot.algo = SlotAlgo::Hierarchical;
  splitByHost(slot, "hierarchical");
  const uint32_t hosts = slot.hosts, perHost = slot.perHost, n = hosts * perHost;
  slot.nvChannels = static_cast<uint32_t>(std::min<Bytes>(tuning_.nvlinkChannels, bytes));
  slot.channels = static_cast<uint32_t>(tuning_.channels);
  const uint32_t cn = slot.nvChannels;
  slot.received.assign(2 * static_cast<size_t>(n), 0);

  // Phase 0: per host, reduce-scatter over its GPUs; lanes (h, c, i) at h * cn * G + c * G + i.
  for (uint32_t h = 0; h < hosts; ++h)
    addRing(s, LaneKind::RingReduceScatter, perHost - 1, perHost, bytes, cn, 0, true, h * perHost, 1);
  // Phase 1: per local index i, ring all-reduce of the shard GPU i owns after phase 0 (chunk i of
  // every NVLink channel) over the same-index GPUs of all hosts; lanes (i, c, h).
  for (uint32_t i = 0; i < perHost; ++i) {
    Bytes owned = 0;
    for (uint32_t c = 0; c < cn; ++c) owned += share(share(bytes, cn, c), perHost, i);
    const uint32_t c = static_cast<uint32_t>(std::min<Bytes>(slot.channels, std::max<Bytes>(owned, 1)));
    slot.railFirst.push_back(static_cast<uint32_t>(slot.lanes.size()));
    slot.railChannels.push_back(c);
    addRing(s, LaneKind::RingAllReduce, 2 * (hosts - 1), hosts, owned, c, 1, false, i, perHost);
  }
  // Phase 2: per host, all-gather of the reduced shards.
  slot.base2 = static_cast<uint32_t>(slot.lanes.size());
  for (uint32_t h = 0; h < hosts; ++h)
    addRing(s, LaneKind::RingAllGather, perHost - 1, perHost, bytes, cn, 2, false, h * perHost, 1);
}

void CollectiveEngine::Impl::addNvlsLane(Slot& slot, uint32_t a, uint32_t b, Bytes user, Time delay,
                                         uint8_t phase, bool gate) {
  Lane l;
  l.src = slot.members[a];
  l.dst = slot.members[b];
  l.total = 1;
  l.received = 1;
  l.pos = a;
  l.dstIndex = b;
  l.data = user;
  l.kind = LaneKind::Whole;
  l.phase = phase;
  l.gate = gate;
  l.fixedDelay = true;
  l.delay = delay;
  l.nvlsWire = true;
  slot.lanes.push_back(l);
  ++slot.remaining;
}

void CollectiveEngine::Impl::buildNvls(uint32_t s, Bytes bytes) {
  // NVLink SHARP: each GPU writes its whole buffer into the switch, which reduces it (each GPU
  // reads back the reduced 1/N it owns), then each GPU multicasts its reduced 1/N through the
  // switch to all. Per GPU and direction that is S + S/N through its NVLink port. The switch
  // is not a node of the fabric, so the same per-port volume goes as N-1 transfers from each
  // GPU to each other GPU (S (N+1) / (N (N-1)) each, at the NVLink rate x nvlsEfficiency).
  // They start after the NVLS latency plus the pipeline's fill: reduce and multicast overlap
  // once the first F = nvlsPipeline bytes have been reduced, so min(S, F) passes the reduce
  // before the multicast runs alongside (for S <= F the two run one after the other). On an
  // idle host: T = nvlsLatency + (S (N+1)/N + min(S, F)) / (NVLink rate x nvlsEfficiency).
  Slot& slot = *slots[s];
  const uint32_t n = static_cast<uint32_t>(slot.members.size());
  const double S = static_cast<double>(bytes);
  const double perPair = S * (n + 1) / (static_cast<double>(n) * (n - 1));
  const Bytes user = std::max<Bytes>(1, static_cast<Bytes>(std::ceil(perPair)));
  slot.nvlsEff = tuning_.nvlsEfficiency;
  const double nvRate = fabric_.pathRate(slot.members[0], slot.members[1]) * slot.nvlsEff;
  const Time fill = Time::ps(static_cast<int64_t>(std::min(S, e.nvlsPipelineBytes()) / nvRate * 1e12));
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = 0; b < n; ++b)
      if (a != b) addNvlsLane(slot, a, b, user, tuning_.nvlsLatency + fill, 0, true);
}

void CollectiveEngine::Impl::buildNvlsTree(uint32_t s, Bytes bytes) {
  // NCCL's NVLSTree, pipelined: inside each host the NVLS reduce (S per GPU into the switch)
  // and multicast (S/G per GPU), across hosts an all-reduce of each GPU's reduced S/G over the
  // same-index GPUs (one rail: that GPU's NIC) as a ring over the hosts (NCCL runs a tree; both
  // move S/G per NIC and direction at two hosts). The phases overlap as NCCL's pipeline of
  // F = nvlsPipelineBytes() in flight: the inter-host lanes start after the first min(S, F)
  // has passed the NVLS reduce (the fill), the multicast of all but the last min(S, F)/G runs
  // alongside (queued behind the reduce on each GPU's NVLink), and the multicast of the last
  // min(S, F)/G (the tail) waits for the GPU's inter-host data. On an idle fabric the time is
  // about NVLS latency + max(NVLS part, fill + inter-host part) + tail.
  Slot& slot = *slots[s];
  slot.algo = SlotAlgo::NvlsTree;
  splitByHost(slot, "nvls_tree");
  const uint32_t hosts = slot.hosts, perHost = slot.perHost, n = hosts * perHost;
  const double S = static_cast<double>(bytes), G = perHost;
  const double f = std::min(S, e.nvlsPipelineBytes());
  slot.nvlsEff = tuning_.nvlsEfficiency * tuning_.nvlsTreeEfficiency;
  const double nvRate = fabric_.pathRate(slot.members[0], slot.members[1]) * slot.nvlsEff;
  const Time fill = Time::ps(static_cast<int64_t>(f / nvRate * 1e12));
  auto bytesOf = [](double v) { return static_cast<Bytes>(std::ceil(v)); };
  const Bytes reducePair = bytesOf(S / (G - 1));
  const Bytes tailPair = bytesOf(f / G / (G - 1));
  const Bytes bulkPair = std::max<Bytes>(0, bytesOf(S / G / (G - 1)) - tailPair);
  // Phase 0: reduce and the bulk of the multicast, per host and ordered pair.
  for (uint32_t h = 0; h < hosts; ++h)
    for (uint32_t a = 0; a < perHost; ++a)
      for (uint32_t b = 0; b < perHost; ++b)
        if (a != b) {
          addNvlsLane(slot, h * perHost + a, h * perHost + b, reducePair, tuning_.nvlsLatency, 0, true);
          if (bulkPair > 0) addNvlsLane(slot, h * perHost + a, h * perHost + b, bulkPair, tuning_.nvlsLatency, 0, true);
        }
  // Phase 1: per rail i, a pipelined ring all-reduce of S/G over the hosts, `c` channels.
  const uint32_t c = static_cast<uint32_t>(std::max(1, tuning_.channels / static_cast<int>(perHost)));
  slot.channels = c;
  slot.received.assign(n, 0);
  const Bytes shard = bytesOf(S / G);
  for (uint32_t i = 0; i < perHost; ++i) {
    const uint32_t a0 = slot.members[i], b0 = slot.members[perHost + i];
    const Time hop = fabric_.pathLatency(a0, b0) + slot.stepNet;
    for (uint32_t ch = 0; ch < c; ++ch) {
      const Bytes cd = share(shard, c, ch);
      for (uint32_t h = 0; h < hosts; ++h) {
        const uint32_t q = (h + 1) % hosts;
        Lane l;
        l.src = slot.members[h * perHost + i];
        l.dst = slot.members[q * perHost + i];
        l.total = 1;
        l.received = 1;
        l.pos = h;
        l.n = hosts;
        l.dstIndex = q * perHost + i;
        l.data = (cd - share(cd, hosts, h)) + (cd - share(cd, hosts, q));
        l.qp = static_cast<uint16_t>(ch);
        l.kind = LaneKind::Whole;
        l.phase = 1;
        l.network = true;
        l.fixedDelay = true;
        l.delay = fill + hop * static_cast<int64_t>(2 * (hosts - 1)) - fabric_.pathLatency(l.src, l.dst);
        l.delay = std::max(l.delay, fill);
        slot.lanes.push_back(l);
        ++slot.remaining;
      }
    }
  }
  // Phase 2: the multicast tail of each GPU, opened by its inter-host receipts; lanes of member
  // m at base2 + m * (G - 1) + j.
  slot.base2 = static_cast<uint32_t>(slot.lanes.size());
  for (uint32_t h = 0; h < hosts; ++h)
    for (uint32_t a = 0; a < perHost; ++a)
      for (uint32_t b = 0; b < perHost; ++b)
        if (a != b) addNvlsLane(slot, h * perHost + a, h * perHost + b, tailPair, Time::zero(), 2, false);
}

void CollectiveEngine::Impl::nvlsTreeReceipt(uint32_t s, uint32_t idx) {
  Slot& slot = *slots[s];
  if (++slot.received[idx] != slot.channels) return;
  const uint32_t first = slot.base2 + idx * (slot.perHost - 1);
  for (uint32_t j = 0; j + 1 < slot.perHost; ++j) {
    slot.lanes[first + j].gate = true;
    pump(s, first + j);
  }
}

void CollectiveEngine::Impl::buildTree(uint32_t s, Bytes bytes) {
  Slot& slot = *slots[s];
  slot.algo = SlotAlgo::Tree;
  const uint32_t g = static_cast<uint32_t>(gpusPerHost_);
  const uint32_t n = static_cast<uint32_t>(slot.members.size());
  slot.ranks = n;
  slot.chunk = tuning_.chunkSize;
  // Hosts in order: hostStart[h] is the rank of host h's first GPU (its head).
  std::vector<uint32_t>& hostStart = scratch;
  hostStart.clear();
  for (uint32_t r = 0; r < n; ++r)
    if (r == 0 || slot.members[r] / g != slot.members[r - 1] / g) hostStart.push_back(r);
  const uint32_t hosts = static_cast<uint32_t>(hostStart.size());
  const bool crossHost = hosts > 1;
  slot.parent.assign(2 * static_cast<size_t>(n), kNone);
  slot.children.assign(2 * static_cast<size_t>(n) * 3, kNone);
  for (int t = 0; t < 2; ++t) {
    uint32_t h = 0;
    for (uint32_t r = 0; r < n; ++r) {
      while (h + 1 < hosts && hostStart[h + 1] <= r) ++h;
      uint32_t up = kNone;
      if (r != hostStart[h]) {
        up = r - 1;  // chain inside the host towards its head
      } else {
        const int64_t ph = TreeShape::parent(hosts, h, t);
        if (ph != TreeShape::kNone) up = hostStart[static_cast<size_t>(ph)];
      }
      slot.parent[t * n + r] = up;
      if (up != kNone) {
        uint32_t* ch = &slot.children[(static_cast<size_t>(t) * n + up) * 3];
        int i = 0;
        while (ch[i] != kNone) ++i;
        SIM_CHECK(i < 3, "tree node with more than three children");
        ch[i] = r;
      }
    }
  }
  // Instances (tree t, channel c), q = t * C + c, each with 2N lanes: up lane of rank r at
  // q * 2N + r (r -> parent), down lane at q * 2N + N + r (parent -> r).
  const uint32_t c = static_cast<uint32_t>(crossHost ? tuning_.channels : tuning_.nvlinkChannels);
  slot.lanes.resize(static_cast<size_t>(2 * c) * 2 * n);
  for (int t = 0; t < 2; ++t) {
    for (uint32_t ch = 0; ch < c; ++ch) {
      const uint32_t q = static_cast<uint32_t>(t) * c + ch;
      const Bytes data = share(bytes, 2 * c, q);
      const uint32_t chunks = static_cast<uint32_t>((data + slot.chunk - 1) / slot.chunk);
      for (uint32_t r = 0; r < n; ++r) {
        const uint32_t up = slot.parent[t * n + r];
        if (up == kNone) continue;
        const bool leaf = slot.children[(static_cast<size_t>(t) * n + r) * 3] == kNone;
        for (int dir = 0; dir < 2; ++dir) {
          Lane& l = slot.lanes[static_cast<size_t>(q) * 2 * n + dir * n + r];
          l.src = dir == 0 ? slot.members[r] : slot.members[up];
          l.dst = dir == 0 ? slot.members[up] : slot.members[r];
          l.total = chunks;
          l.received = dir == 0 && leaf ? chunks : 0;
          l.pos = r;
          l.n = static_cast<uint32_t>(t);
          l.data = data;
          l.qp = static_cast<uint16_t>(q);
          l.kind = LaneKind::Pipelined;
          l.window = pipelineWindow(slot.chunk);
          l.flow = dir == 0 ? Flow::TreeUp : Flow::TreeDown;
          l.network = !sameHost(l.src, l.dst, g);
        }
        slot.remaining += 2 * static_cast<uint64_t>(chunks);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

void CollectiveEngine::Impl::pump(uint32_t s, uint32_t lane) {
  const Slot& slot = *slots[s];
  Lane& l = slots[s]->lanes[lane];
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
  freePending.push_back(tag);
  Slot& slot = *slots[p.slot];
  SIM_DCHECK(slot.inUse, "event for a finished collective");
  if (slot.lanes[p.lane].overlap) {
    issue(p.slot, p.lane);
    return;
  }
  for (;;) {
    if (issue(p.slot, p.lane)) return;  // the collective completed (its slot may be reused)
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
  Slot& slot = *slots[s];
  Lane& l = slot.lanes[lane];
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
  TransferRequest r;
  r.srcGpu = l.src;
  r.dstGpu = dst;
  r.bytes = wire;
  r.trafficClass = static_cast<uint8_t>(tuning_.trafficClass);
  r.qp = qp;
  r.tag = (static_cast<uint64_t>(s) << kLaneBits) | lane;
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
  impl_->delivered(s, lane);
}

bool CollectiveEngine::Impl::delivered(uint32_t s, uint32_t lane) {
  Slot& slot = *slots[s];
  Lane& l = slot.lanes[lane];
  ++l.delivered;
  SIM_CHECK(slot.remaining > 0, "more deliveries than sends");
  --slot.remaining;
  switch (l.flow) {
    case Flow::Ring:
    case Flow::Chain:
      if (l.next != kNone) {
        ++slot.lanes[l.next].received;
        pump(s, l.next);
      }
      if (slot.algo == SlotAlgo::Hierarchical && l.phase < 2) hierarchicalReceipt(s, l.phase, l.dstIndex);
      break;
    case Flow::TreeUp:
    case Flow::TreeDown:
      treeDelivered(s, lane);
      break;
    case Flow::None:
      if (slot.algo == SlotAlgo::NvlsTree && l.phase == 1) nvlsTreeReceipt(s, l.dstIndex);
      break;
  }
  if (l.window != kNone) pump(s, lane);  // a buffer slot is free again
  if (slot.remaining == 0) {
    const uint64_t id = slot.id;
    CollectiveListener* listener = slot.listener;
    releaseSlot(s);
    listener->onCollectiveDone(id, sim_.now());
    return true;
  }
  return false;
}

void CollectiveEngine::Impl::treeDelivered(uint32_t s, uint32_t lane) {
  // Reduce: a rank sends chunk j up once every child has delivered chunk j to it; the root,
  // instead, starts broadcasting chunk j to its children. Broadcast: a rank forwards chunk j to
  // its children once it has received chunk j from its parent.
  Slot& slot = *slots[s];
  const uint32_t n = slot.ranks;
  const uint32_t q = lane / (2 * n);
  const uint32_t first = q * 2 * n;
  const Lane& l = slot.lanes[lane];
  const uint32_t t = l.n;
  const uint32_t r = l.pos;
  if (l.flow == Flow::TreeUp) {
    const uint32_t up = slot.parent[t * n + r];
    const uint32_t* ch = &slot.children[(static_cast<size_t>(t) * n + up) * 3];
    uint32_t all = slot.lanes[first + ch[0]].delivered;
    for (int i = 1; i < 3 && ch[i] != kNone; ++i) all = std::min(all, slot.lanes[first + ch[i]].delivered);
    if (slot.parent[t * n + up] != kNone) {
      Lane& next = slot.lanes[first + up];
      if (all > next.received) {
        next.received = all;
        pump(s, first + up);
      }
    } else {
      for (int i = 0; i < 3 && ch[i] != kNone; ++i) {
        Lane& down = slot.lanes[first + n + ch[i]];
        if (all > down.received) {
          down.received = all;
          pump(s, first + n + ch[i]);
        }
      }
    }
  } else {
    const uint32_t got = l.delivered;
    const uint32_t* ch = &slot.children[(static_cast<size_t>(t) * n + r) * 3];
    for (int i = 0; i < 3 && ch[i] != kNone; ++i) {
      Lane& down = slot.lanes[first + n + ch[i]];
      down.received = got;
      pump(s, first + n + ch[i]);
    }
  }
}

void CollectiveEngine::Impl::hierarchicalReceipt(uint32_t s, uint8_t phase, uint32_t idx) {
  // Phase 0 ends for a GPU when it has received every reduce-scatter step on every NVLink
  // channel; phase 1 when it has received every step of its rail's all-reduce. Each end opens
  // that GPU's lanes of the next phase.
  Slot& slot = *slots[s];
  const uint32_t n = static_cast<uint32_t>(slot.members.size());
  const uint32_t h = idx / slot.perHost, i = idx % slot.perHost;
  const uint32_t got = ++slot.received[phase * n + idx];
  if (phase == 0) {
    if (got != (slot.pipelined ? 1 : slot.perHost - 1) * slot.nvChannels) return;
    for (uint32_t c = 0; c < slot.railChannels[i]; ++c) {
      const uint32_t id = slot.railFirst[i] + c * slot.hosts + h;
      slot.lanes[id].gate = true;
      pump(s, id);
    }
  } else {
    if (got != (slot.pipelined ? 1 : 2 * (slot.hosts - 1)) * slot.railChannels[i]) return;
    for (uint32_t c = 0; c < slot.nvChannels; ++c) {
      const uint32_t id = slot.base2 + (h * slot.nvChannels + c) * slot.perHost + i;
      slot.lanes[id].gate = true;
      pump(s, id);
    }
  }
}

}  // namespace fabricsim
