#include "sim/workload/collectives/CollectiveTuner.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/workload/collectives/Lane.h"

namespace fabricsim {
namespace {

/// NCCL 2.30.7's tuner (src/graph/tuning.cc, ncclTopoTuneModel): ring LL runs at half the
/// bandwidth (8-byte lines, 4 bytes of data), ring LL128 at 0.92 of it.
constexpr double kLLEfficiency = 0.5;
constexpr double kLL128Efficiency = 0.92;

}  // namespace

CollectiveTuner::CollectiveTuner(Fabric& fabric, const CollectiveTuning& tuning, uint32_t gpusPerHost)
    : fabric_(fabric), tuning_(tuning), gpusPerHost_(gpusPerHost) {}

double CollectiveTuner::busBandwidthFactor(CollectiveOp op, size_t ranks) {
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

CollectiveTuner::Shape CollectiveTuner::shapeOf(const std::vector<uint32_t>& gpus) const {
  const uint32_t g = gpusPerHost_;
  std::vector<uint32_t>& hostsOf = hostsOf_;
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

CollectiveAlgorithm CollectiveTuner::resolve(const CollectiveCall& call) const {
  const bool explicitChoice = call.algorithm != CollectiveAlgorithm::Auto;
  const CollectiveAlgorithm want = explicitChoice ? call.algorithm : tuning_.algorithm;
  const bool allReduce = call.op == CollectiveOp::AllReduce;
  const bool direct = call.op == CollectiveOp::AllToAll || call.op == CollectiveOp::SendRecv;
  const bool nvlsKind = want == CollectiveAlgorithm::Nvls || want == CollectiveAlgorithm::NvlsTree;
  const bool allReduceOnly =
      want == CollectiveAlgorithm::Tree || want == CollectiveAlgorithm::Hierarchical || nvlsKind;
  const bool gatherScatter = call.op == CollectiveOp::AllGather || call.op == CollectiveOp::ReduceScatter;
  if (want == CollectiveAlgorithm::Pat) {
    // PAT: all-gather and reduce-scatter with one GPU of the call per host (as NCCL enables it).
    const Shape sh = shapeOf(call.gpus);
    const bool ok = gatherScatter && sh.perHost == 1 && sh.uniform;
    if (ok) return want;
    if (explicitChoice)
      throw InputError("", 0, 0, "collectives.algorithm",
                       std::string("pat runs all_gather and reduce_scatter with one GPU per host; this ") +
                           toString(call.op) + " has " + std::to_string(sh.perHost) + " on its first host");
    if (!gatherScatter && !direct) return CollectiveAlgorithm::Ring;
  }
  if (direct) {
    if (explicitChoice && (allReduceOnly || want == CollectiveAlgorithm::Pat))
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
  if (gatherScatter) {
    // Auto: NCCL's own choice between its ring and PAT (NVLS all-gather / reduce-scatter have no
    // builder here).
    return autoChoice(call);
  }
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
  if (want == CollectiveAlgorithm::Hierarchical) return hierOk ? want : CollectiveAlgorithm::Ring;
  // Auto: NCCL's own choice (its cost model over ring, tree, NVLS and NVLS tree); hierarchical,
  // which NCCL does not have, only when asked for.
  return autoChoice(call);
}

CollectiveAlgorithm CollectiveTuner::autoChoice(const CollectiveCall& call) const {
  if (const auto choice = ncclChoice(call, std::nullopt)) return toAlgorithm(choice->algo);
  if (tuning_.algorithmsAllowed != 0x7f && call.bytes > 0 && call.gpus.size() > 1)
    // NCCL fails such a call ("no algorithm/protocol available"); so does the simulator.
    throw InputError("", 0, 0, "collectives.algorithm",
                     "the NCCL_ALGO list '" + ncclAlgoList(tuning_.algorithmsAllowed) +
                         "' leaves no algorithm that NCCL would run and fabricsim builds for this " + toString(call.op) + " over " +
                         std::to_string(call.gpus.size()) + " GPUs");
  return CollectiveAlgorithm::Ring;
}

CollectiveAlgorithm CollectiveTuner::toAlgorithm(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::Tree:
      return CollectiveAlgorithm::Tree;
    case NcclAlgo::Nvls:
      return CollectiveAlgorithm::Nvls;
    case NcclAlgo::NvlsTree:
      return CollectiveAlgorithm::NvlsTree;
    case NcclAlgo::Pat:
      return CollectiveAlgorithm::Pat;
    default:  // CollNet has no builder here (and is never enabled): a ring
      return CollectiveAlgorithm::Ring;
  }
}

std::optional<NcclFunc> CollectiveTuner::ncclFuncOf(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return NcclFunc::AllReduce;
    case CollectiveOp::AllGather:
      return NcclFunc::AllGather;
    case CollectiveOp::ReduceScatter:
      return NcclFunc::ReduceScatter;
    case CollectiveOp::Broadcast:
      return NcclFunc::Broadcast;
    case CollectiveOp::AllToAll:
    case CollectiveOp::SendRecv:
      break;
  }
  return std::nullopt;
}

std::optional<NcclCostModel::Choice> CollectiveTuner::ncclChoice(const CollectiveCall& call,
                                                                 std::optional<CollectiveAlgorithm> only) const {
  const auto func = ncclFuncOf(call.op);
  if (!func) return std::nullopt;  // NCCL runs these as point-to-point sends, not through its tuner
  const NcclFunc f = *func;
  const Shape sh = shapeOf(call.gpus);
  if (sh.ranks < 2 || call.bytes <= 0) return std::nullopt;
  NcclCostModel::Enabled on;
  // What the builders here can run: NVLS all-reduce inside one host, NVLS tree over uniform hosts
  // of several GPUs, PAT with one GPU per host (NCCL's own condition, in its model too).
  if (!(sh.perHost == 1 && sh.uniform)) on.algo[static_cast<int>(NcclAlgo::Pat)] = false;
  if (sh.hosts != 1 || sh.perHost < 2 || f != NcclFunc::AllReduce) on.algo[static_cast<int>(NcclAlgo::Nvls)] = false;
  if (!(sh.hosts > 1 && sh.perHost > 1 && sh.uniform)) on.algo[static_cast<int>(NcclAlgo::NvlsTree)] = false;
  if (!only)  // NCCL_ALGO: the algorithms auto may pick (bits in NcclAlgo order)
    for (int a = 0; a < kNcclAlgos; ++a) on.algo[a] = on.algo[a] && ((tuning_.algorithmsAllowed >> a) & 1) != 0;
  if (only) {
    for (int a = 0; a < kNcclAlgos; ++a)
      if (toAlgorithm(static_cast<NcclAlgo>(a)) != *only) on.algo[a] = false;
    // CollNet maps to the ring above; only the ring itself stands for a ring request.
    on.algo[static_cast<int>(NcclAlgo::CollNetDirect)] = on.algo[static_cast<int>(NcclAlgo::CollNetChain)] = false;
  }
  if (tuning_.protocol != CollectiveProtocol::Auto) {
    on.proto = {false, false, false};
    on.proto[static_cast<int>(toNcclProto(tuning_.protocol))] = true;
  } else {  // NCCL_PROTO: the protocols auto may pick (bits in NcclProto order)
    for (int p = 0; p < kNcclProtos; ++p) on.proto[p] = ((tuning_.protocolsAllowed >> p) & 1) != 0;
  }
  return modelFor(sh, call.gpus).choose(f, static_cast<uint64_t>(call.bytes), on);
}

std::optional<double> CollectiveTuner::ncclTimeUs(const CollectiveCall& call, CollectiveAlgorithm algo,
                                                  CollectiveProtocol proto) const {
  const auto f = ncclFuncOf(call.op);
  if (!f) return std::nullopt;
  NcclAlgo a = NcclAlgo::Ring;
  switch (algo) {
    case CollectiveAlgorithm::Ring:
      break;
    case CollectiveAlgorithm::Tree:
      a = NcclAlgo::Tree;
      break;
    case CollectiveAlgorithm::Pat:
      a = NcclAlgo::Pat;
      break;
    case CollectiveAlgorithm::Nvls:
      a = NcclAlgo::Nvls;
      break;
    case CollectiveAlgorithm::NvlsTree:
      a = NcclAlgo::NvlsTree;
      break;
    default:
      return std::nullopt;
  }
  const Shape sh = shapeOf(call.gpus);
  if (sh.ranks < 2 || call.bytes <= 0 || proto == CollectiveProtocol::Auto) return std::nullopt;
  return modelFor(sh, call.gpus).timeUs(*f, a, toNcclProto(proto), static_cast<uint64_t>(call.bytes));
}

NcclProto CollectiveTuner::toNcclProto(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::LL:
      return NcclProto::LL;
    case CollectiveProtocol::LL128:
      return NcclProto::LL128;
    default:
      return NcclProto::Simple;
  }
}

const NcclCostModel& CollectiveTuner::modelFor(const Shape& sh, const std::vector<uint32_t>& gpus) const {
  const uint64_t key = (static_cast<uint64_t>(sh.ranks) << 32) | (static_cast<uint64_t>(sh.hosts) << 8) |
                       std::min<uint32_t>(sh.perHost, 255);
  for (const auto& [k, m] : models_)
    if (k == key) return *m;
  // A pair of GPUs on one host and a pair on different hosts: the NVLink and network rates.
  const uint32_t g = gpusPerHost_;
  double rNv = 0, rNet = 0;
  for (size_t i = 1; i < gpus.size() && (rNv == 0 || rNet == 0); ++i) {
    const bool same = sameHost(gpus[0], gpus[i], g);
    double& r = same ? rNv : rNet;
    if (r == 0) r = fabric_.pathRate(gpus[0], gpus[i]) / 1e9;  // GB/s
  }
  NcclCommShape s;
  s.nRanks = static_cast<int>(sh.ranks);
  s.nNodes = static_cast<int>(sh.hosts);
  s.maxLocalRanks = static_cast<int>(sh.perHost);
  s.nvlsSupport = tuning_.nvls;
  s.collNetSupport = false;
  const int c = std::max(1, tuning_.channels);
  s.nChannels = c;
  s.nvlsChannels = kNvlsChannels;
  // The graphs NCCL's search would find: each channel's share of the GPU's NVLink and, across
  // hosts, of the host's NICs (one per GPU of the call, rail-matched).
  const double perHostNet = rNet * sh.perHost;
  auto graph = [&](int channels) {
    NcclGraph gr;
    gr.nChannels = channels;
    gr.intraNvlink = sh.perHost > 1;
    const double intra = (sh.perHost > 1 ? rNv : perHostNet) / channels;
    gr.bwIntra = sh.hosts > 1 ? std::min(rNv > 0 ? rNv : perHostNet, perHostNet) / channels : intra;
    gr.bwInter = gr.bwIntra;
    gr.sameChannels = false;
    return gr;
  };
  for (NcclAlgo a : {NcclAlgo::Ring, NcclAlgo::Tree, NcclAlgo::Pat})
    s.graphs[static_cast<size_t>(a)] = graph(c);
  for (NcclAlgo a : {NcclAlgo::Nvls, NcclAlgo::NvlsTree}) {
    NcclGraph gr = graph(kNvlsChannels);
    gr.bwIntra = (rNv > 0 ? rNv : perHostNet) / kNvlsChannels;
    s.graphs[static_cast<size_t>(a)] = gr;
  }
  if (models_.size() >= 64) models_.erase(models_.begin());
  models_.emplace_back(key, std::make_unique<NcclCostModel>(s));
  return *models_.back().second;
}

CollectiveProtocol CollectiveTuner::protocolFor(const CollectiveCall& call, CollectiveAlgorithm algo) const {
  if (algo == CollectiveAlgorithm::Nvls || algo == CollectiveAlgorithm::NvlsTree) return CollectiveProtocol::Simple;
  if (tuning_.protocol != CollectiveProtocol::Auto) return tuning_.protocol;
  // Auto: the protocol NCCL's cost model picks for this algorithm (hierarchical runs Simple).
  if (algo != CollectiveAlgorithm::Ring && algo != CollectiveAlgorithm::Tree) return CollectiveProtocol::Simple;
  const auto choice = ncclChoice(call, algo);
  if (!choice) return CollectiveProtocol::Simple;
  switch (choice->proto) {
    case NcclProto::LL:
      return CollectiveProtocol::LL;
    case NcclProto::LL128:
      return CollectiveProtocol::LL128;
    case NcclProto::Simple:
      break;
  }
  return CollectiveProtocol::Simple;
}

double CollectiveTuner::protocolEfficiency(CollectiveProtocol p) const {
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

double CollectiveTuner::protocolLatencyScale(CollectiveProtocol p, bool network) const {
  switch (p) {
    case CollectiveProtocol::LL:
      return network ? tuning_.llNetworkLatencyScale : tuning_.llLatencyScale;
    case CollectiveProtocol::LL128:
      return network ? tuning_.ll128NetworkLatencyScale : tuning_.ll128LatencyScale;
    case CollectiveProtocol::Auto:
    case CollectiveProtocol::Simple:
      break;
  }
  return 1.0;
}

}  // namespace fabricsim
