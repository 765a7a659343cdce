#include "sim/workload/collectives/NcclCostModel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fabricsim {
namespace {

// NCCL 2.30.7, src/graph/tuning.cc (ncclTunerConstantsDefaults and the refinements of
// ncclTopoTuneModel), src/include/comm.h and device.h (thread counts and thresholds); the same
// figures are in shared/calibration/nccl_internal_cost_model_constants_v2.30.7.yaml.
// Rows by NcclAlgo (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT), columns by
// NcclProto (LL, LL128, Simple).
constexpr double kBaseLatency[kNcclAlgos][kNcclProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
enum Hw { kNvlink, kPci, kNet };
constexpr double kHwLatency[3][kNcclAlgos][kNcclProtos] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
// Rows: Volta, Ampere, Hopper, Blackwell; columns: 1 node, 2 nodes, more.
constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChMaxRingLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChMaxTreeLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChMaxTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChMaxNvlsTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
constexpr double kPciBw = 12.0;  // GB/s, topo.h PCI_BW: ring Simple gets 256 threads at or below it
// Trees are not exactly the model at mid sizes (ncclTopoGetAlgoTime): per protocol, for sizes
// of 64 B x 2^i.
constexpr double kTreeCorrection[kNcclProtos][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
constexpr int kWarp = 32;
constexpr int kMaxThreads = 640;                           // NCCL_MAX_NTHREADS
constexpr int kSimpleMaxThreads = 512;                     // NCCL_SIMPLE_MAX_NTHREADS
constexpr int kLLMaxThreads = 512;                         // NCCL_LL_MAX_NTHREADS
constexpr int kLL128MaxThreads = 640;                      // NCCL_LL128_MAX_NTHREADS
constexpr int kThreadThreshold[kNcclProtos] = {8, 8, 64};  // NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD
constexpr int kMaxDirectArity = 7;  // NCCL_MAX_DIRECT_ARITY: CollNet runs on at most 8 local GPUs
constexpr int kMaxNvlsArity = 32;   // NCCL_MAX_NVLS_ARITY

/// floor(log2(n)); -1 for n <= 0 (NCCL's log2i).
int log2i(int64_t n) {
  int l = -1;
  while (n > 0) {
    n >>= 1;
    ++l;
  }
  return l;
}

}  // namespace

const char* toString(NcclAlgo a) {
  static const char* names[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  return names[static_cast<int>(a)];
}

const char* toString(NcclProto p) {
  static const char* names[] = {"LL", "LL128", "Simple"};
  return names[static_cast<int>(p)];
}

NcclCostModel::NcclCostModel(const NcclCommShape& s) : shape_(s) {
  const int nRanks = std::max(1, s.nRanks), nNodes = std::max(1, s.nNodes);
  const int arch = static_cast<int>(s.arch);
  const int index2 = nNodes <= 2 ? nNodes - 1 : 2;
  // LL's cap: by GPU generation on one node, by CPU vendor across nodes.
  const int index1 = nNodes == 1 ? arch : (s.cpu == NcclCommShape::Cpu::Amd ? 1 : 0);
  const double llMaxBw = kLlMaxBw[index1][index2];
  const double perChMaxTreeBw = kPerChMaxTreeBw[arch][index2];
  const double perChMaxRingLL128Bw = kPerChMaxRingLL128Bw[arch][index2];
  const double perChMaxTreeLL128Bw = kPerChMaxTreeLL128Bw[arch][index2];
  const double perChMaxNvlsTreeBw = kPerChMaxNvlsTreeBw[arch][index2];
  const double ppn = static_cast<double>(nRanks) / nNodes;
  const double netOverhead =
      s.netOverheadUs >= 0 ? s.netOverheadUs : (s.cpu == NcclCommShape::Cpu::Amd ? 2.0 : 1.0);
  const NcclGraph& ringGraph = s.graphs[static_cast<int>(NcclAlgo::Ring)];

  // Threads per algorithm and protocol (ncclTopoTuneModel's maxThreads).
  auto threads = [&](NcclAlgo a, NcclProto p) -> int& {
    return maxThreads_[static_cast<size_t>(a) * kNcclProtos + static_cast<size_t>(p)];
  };
  threads(NcclAlgo::Ring, NcclProto::Simple) =
      ringGraph.bwIntra * ringGraph.nChannels <= kPciBw ? 256 : kSimpleMaxThreads;
  threads(NcclAlgo::Tree, NcclProto::Simple) = kSimpleMaxThreads;
  for (NcclAlgo a : {NcclAlgo::CollNetDirect, NcclAlgo::CollNetChain, NcclAlgo::Nvls, NcclAlgo::NvlsTree})
    threads(a, NcclProto::Simple) = kMaxThreads;
  threads(NcclAlgo::Ring, NcclProto::LL) = threads(NcclAlgo::Tree, NcclProto::LL) = kLLMaxThreads;
  threads(NcclAlgo::Ring, NcclProto::LL128) = threads(NcclAlgo::Tree, NcclProto::LL128) = kLL128MaxThreads;

  for (int fi = 0; fi < 5; ++fi) {
    const auto f = static_cast<NcclFunc>(fi);
    const bool allReduce = f == NcclFunc::AllReduce;
    const bool gatherScatter = f == NcclFunc::AllGather || f == NcclFunc::ReduceScatter;
    const int nsteps = allReduce ? 2 * (nRanks - 1) : gatherScatter ? nRanks - 1 : nRanks;
    for (int ai = 0; ai < kNcclAlgos; ++ai) {
      const auto a = static_cast<NcclAlgo>(ai);
      if ((f == NcclFunc::Broadcast || f == NcclFunc::Reduce) && a != NcclAlgo::Ring) continue;
      if (gatherScatter && a != NcclAlgo::Pat && a != NcclAlgo::Ring && a != NcclAlgo::Nvls &&
          a != NcclAlgo::CollNetDirect)
        continue;
      if (allReduce && a == NcclAlgo::Pat) continue;
      const NcclGraph& g = s.graphs[ai];
      const bool nvls = a == NcclAlgo::Nvls || a == NcclAlgo::NvlsTree;
      const bool collnet = a == NcclAlgo::CollNetDirect || a == NcclAlgo::CollNetChain;
      const int intraHw = g.intraNvlink ? kNvlink : kPci;
      const int hw = nNodes == 1 ? intraHw : kNet;
      for (int pi = 0; pi < kNcclProtos; ++pi) {
        const auto p = static_cast<NcclProto>(pi);
        if (nvls && p != NcclProto::Simple) continue;
        const bool patEnabled = nNodes == nRanks;  // PAT: one GPU per node
        if (gatherScatter && a == NcclAlgo::Pat && (p != NcclProto::Simple || !patEnabled)) continue;
        double bw = nNodes <= 2 || collnet ? g.bwIntra : g.bwInter;
        if (nvls) {
          if (g.nChannels < 2) continue;
          double intraBw = g.bwIntra * kNvlsEfficiency[arch] * (g.nChannels - 1) / g.nChannels;
          intraBw *= allReduce ? 2.0 : (ppn - 1) / ppn;  // all-reduce pipelines two operations
          const double interBw = g.bwInter * ((nNodes <= 2 && a == NcclAlgo::NvlsTree) ? 2 : 1);
          bw = std::min({intraBw, interBw,
                         a == NcclAlgo::NvlsTree ? perChMaxNvlsTreeBw : std::numeric_limits<double>::max()});
        }
        double busBw = g.nChannels * bw;
        if (a == NcclAlgo::Ring && p == NcclProto::LL) busBw = std::min(llMaxBw, busBw * 0.5);
        if (a == NcclAlgo::Ring && p == NcclProto::LL128)
          busBw = std::min(busBw * 0.92, g.nChannels * perChMaxRingLL128Bw);
        if (a == NcclAlgo::Tree && allReduce) busBw = std::min(busBw * 0.92, g.nChannels * perChMaxTreeBw);
        if (a == NcclAlgo::Tree && p == NcclProto::LL) busBw = std::min(busBw / 3.8, llMaxBw);
        if (a == NcclAlgo::Tree && p == NcclProto::LL128)
          busBw =
              std::min(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g.nChannels * perChMaxTreeLL128Bw);
        if (a == NcclAlgo::Tree && s.treePattern == NcclCommShape::TreePattern::Tree) busBw *= 0.85;
        if (a == NcclAlgo::Pat) busBw *= 0.75;
        if (collnet && p != NcclProto::Simple) busBw = 0;
        if (a == NcclAlgo::CollNetDirect && p == NcclProto::Simple) {
          if (gatherScatter) {
            busBw = ppn * std::min(g.bwIntra, g.bwInter * 0.9);
          } else {
            double factor = ppn / g.nChannels;  // GPUs per NIC
            factor -= (factor - 1) / 2;
            busBw /= factor;
            if (s.arch >= NcclCommShape::Arch::Hopper) busBw *= 0.85;
          }
        }
        // All-gather and reduce-scatter across nodes by NVLS or CollNet direct need the network's
        // own collectives (and a NIC per GPU): not here.
        if ((a == NcclAlgo::Nvls || a == NcclAlgo::CollNetDirect) && p == NcclProto::Simple &&
            gatherScatter && nNodes > 1)
          busBw = 0;
        // Bus bandwidth to algorithm bandwidth.
        if (!(a != NcclAlgo::Ring && gatherScatter))
          busBw *= a == NcclAlgo::Ring || nvls ? static_cast<double>(nRanks) / nsteps : 0.5;
        const size_t k = idx(f, a, p);
        bandwidth_[k] = busBw;
        double& lat = latency_[k];
        lat = kBaseLatency[ai][pi];
        double intraLat = kHwLatency[intraHw][ai][pi];
        // With one GPU per node the latencies are fully exposed: the tree's network latency.
        double interLat =
            ppn == 1 ? kHwLatency[kNet][static_cast<int>(NcclAlgo::Tree)][pi] : kHwLatency[kNet][ai][pi];
        interLat += g.latencyInter;
        if (p == NcclProto::Simple) interLat += g.latencyInter;  // the flush
        const int nodesLog = log2i(nNodes);
        switch (a) {
          case NcclAlgo::Ring:
            if (f == NcclFunc::Reduce || f == NcclFunc::Broadcast) {
              if (g.sameChannels)
                lat += kHwLatency[hw][ai][pi];
              else  // "some chunk latency, waiting for proper chunk modeling": per step, Simple at the tree's
                lat += nsteps *
                       kHwLatency[hw][p == NcclProto::Simple ? static_cast<int>(NcclAlgo::Tree) : ai][pi];
            } else {
              double overhead = 0;
              if (nNodes > 1) overhead = netOverhead * (p == NcclProto::Simple ? 3 : 1);
              intraLat = std::max(intraLat, overhead);
              const int interSteps = nNodes == 1 ? 0 : allReduce ? 2 * (nNodes - 1) : nNodes - 1;
              lat += (nsteps - interSteps) * intraLat + interSteps * interLat;
            }
            break;
          case NcclAlgo::Tree:
            if (allReduce) lat += 2 * ((nRanks / nNodes - 1) * intraLat + nodesLog * interLat);
            break;
          case NcclAlgo::CollNetDirect:
            lat += 2 * (std::min(1, nRanks / nNodes - 1) * intraLat + (nRanks / nNodes - 1) * 0.4) + interLat;
            break;
          case NcclAlgo::CollNetChain:
            lat += 2 * (nRanks / nNodes - 1) * intraLat + interLat;
            break;
          case NcclAlgo::Nvls:
            lat = intraLat + (nNodes > 1 ? interLat : 0);
            break;
          case NcclAlgo::NvlsTree:
            lat += intraLat + 2 * nodesLog * interLat;
            break;
          case NcclAlgo::Pat:
            if (gatherScatter) lat += nodesLog * (interLat / 3.5) + nRanks * 2.8;
            break;
        }
        // What NCCL enables by default: LL128 only over NVLink inside the node (Hopper and later
        // up to PXN across); NVLS tree needs several nodes; CollNet needs in-network reduction,
        // and NVLS across nodes goes through CollNet.
        const bool ll128 = g.intraNvlink;
        bool algoOn = true;
        if (nNodes == 1 && a == NcclAlgo::NvlsTree) algoOn = false;
        if (!s.collNetSupport && (collnet || (a == NcclAlgo::Nvls && nNodes > 1))) algoOn = false;
        if ((p == NcclProto::LL128 && !ll128) || !algoOn) bandwidth_[k] = 0;
      }
    }
  }
}

std::optional<double> NcclCostModel::timeUs(NcclFunc f, NcclAlgo a, NcclProto p, uint64_t bytes) const {
  double bw = bandwidthGBps(f, a, p);
  double lat = latencyUs(f, a, p);
  if (bw <= 0) return std::nullopt;
  const int logSize = log2i(static_cast<int64_t>(bytes >> 6));
  if (a == NcclAlgo::Tree && f == NcclFunc::AllReduce && logSize >= 0 && logSize < 23)
    bw *= kTreeCorrection[static_cast<int>(p)][logSize];
  if (a == NcclAlgo::Ring && p == NcclProto::Simple && shape_.nNodes > 1 && f == NcclFunc::AllReduce &&
      bytes / static_cast<uint64_t>(std::max(1, shape_.nChannels) * std::max(1, shape_.nRanks)) >= 64)
    lat *= shape_.arch < NcclCommShape::Arch::Ampere ? 1.9 : 1.4;  // the ring's plateau
  return lat + static_cast<double>(bytes) / (1000 * bw);
}

std::optional<NcclCostModel::Choice> NcclCostModel::choose(NcclFunc f, uint64_t bytes,
                                                           const Enabled& on) const {
  const NcclCommShape& s = shape_;
  if (s.nRanks <= 1) return Choice{NcclAlgo::Ring, NcclProto::Simple, 1, kSimpleMaxThreads, 0.0};
  std::optional<Choice> best;
  for (int ai = 0; ai < kNcclAlgos; ++ai) {
    const auto a = static_cast<NcclAlgo>(ai);
    if (!on.algo[ai]) continue;
    const bool collnet = a == NcclAlgo::CollNetDirect || a == NcclAlgo::CollNetChain;
    if (collnet && (!s.collNetSupport || s.maxLocalRanks > kMaxDirectArity + 1)) continue;
    const bool nvls = a == NcclAlgo::Nvls || a == NcclAlgo::NvlsTree;
    if (nvls && (!s.nvlsSupport || (f != NcclFunc::AllReduce && s.maxLocalRanks > kMaxNvlsArity))) continue;
    if (a == NcclAlgo::Nvls && !s.collNetSupport && s.nNodes > 1) continue;
    for (int pi = 0; pi < kNcclProtos; ++pi) {
      if (!on.proto[pi]) continue;
      const auto p = static_cast<NcclProto>(pi);
      const auto t = timeUs(f, a, p, bytes);
      if (t && (!best || *t < best->timeUs)) best = Choice{a, p, 0, 0, *t};
    }
  }
  if (!best) return std::nullopt;
  // Channels and threads (topoGetAlgoInfo).
  const NcclAlgo a = best->algo;
  const int pi = static_cast<int>(best->proto);
  int nc = std::max(1, s.nChannels);
  int nt = maxThreads_[static_cast<size_t>(a) * kNcclProtos + static_cast<size_t>(pi)];
  int64_t threshold = kThreadThreshold[pi];
  if (a == NcclAlgo::Ring && best->proto == NcclProto::LL) threshold *= s.nRanks;
  if (a == NcclAlgo::CollNetDirect || a == NcclAlgo::CollNetChain) {
    if (best->proto == NcclProto::Simple) threshold = 512;
  }
  const auto b = static_cast<int64_t>(bytes);
  if (a == NcclAlgo::Nvls || a == NcclAlgo::NvlsTree) {
    nc = s.nNodes > 1 && a == NcclAlgo::Nvls ? std::min(s.nvlsChannels, s.nChannels) : s.nvlsChannels;
  } else if (a != NcclAlgo::CollNetDirect) {
    while (b < static_cast<int64_t>(nc) * nt * threshold && nc >= 2) --nc;
  }
  if (a != NcclAlgo::Nvls && a != NcclAlgo::NvlsTree && a != NcclAlgo::CollNetDirect)
    while (b < static_cast<int64_t>(nc) * nt * threshold && nt % 128 == 0 && nt > 0) nt /= 2;
  if (best->proto == NcclProto::Simple) {
    if (a == NcclAlgo::Ring) nt += kWarp;  // a warp for synchronisation
    if (a == NcclAlgo::Tree) nt += 4 * kWarp;
  }
  if (nt / kWarp < 3) nt = 3 * kWarp;
  if (a == NcclAlgo::Tree || a == NcclAlgo::Pat) nt = kMaxThreads;
  best->channels = nc;
  best->threads = nt;
  return best;
}

}  // namespace fabricsim
