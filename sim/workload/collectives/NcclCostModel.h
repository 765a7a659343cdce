// NcclCostModel: NCCL's own analytic cost model, the one its default tuner picks an algorithm,
// a protocol and a channel count with (NCCL 2.30.7: src/graph/tuning.cc ncclTopoTuneModel and
// ncclTopoGetAlgoTime, src/enqueue.cc topoGetAlgoInfo; the constants are in
// shared/calibration/nccl_internal_cost_model_constants_v2.30.7.yaml with their sources).
//
// Models: for every function (broadcast, reduce, all-gather, reduce-scatter, all-reduce),
// algorithm (tree, ring, CollNet direct / chain, NVLS, NVLS tree, PAT) and protocol (LL, LL128,
// Simple), a latency (us) and a bandwidth (GB/s) from the communicator's shape (ranks, nodes, GPU
// generation, CPU vendor) and what NCCL's topology search found per algorithm (NcclGraph:
// channels, per-channel bandwidth inside and across nodes, extra inter-node latency, NVLink or PCI
// inside a node):
//   bandwidth: channels x per-channel bandwidth (intra for <= 2 nodes, inter beyond), refined per
//     algorithm and protocol (ring LL: x 0.5 capped at llMaxBw; ring LL128: x 0.92 capped at
//     channels x 36.7 GB/s on Hopper; tree all-reduce x 0.92 capped at channels x perChMaxTreeBw,
//     LL / 3.8, LL128 x 120/128 (7/9 on one node); NVLS from the NVLink bandwidth x
//     nvlsEfficiency x (C-1)/C, x 2 for all-reduce), then converted to algorithm bandwidth
//     (ring and NVLS x nRanks / nsteps, the others x 1/2);
//   latency: the base latency plus the hops' hardware latencies (ring: (nsteps - inter-node
//     steps) x max(intra latency, net overhead) + inter-node steps x (net latency + graph extra);
//     tree all-reduce: 2 ((ppn - 1) intra + log2(nodes) inter); NVLS: intra (+ inter across
//     nodes); NVLS tree: intra + 2 log2(nodes) inter);
//   time(S) = latency + S / (1000 x bandwidth), with the tree correction factors for mid sizes
//     and the ring's plateau factor (latency x 1.4 on Ampere and later) for multi-node Simple
//     all-reduce.
// choose() is topoGetAlgoInfo: the enabled (algorithm, protocol) of least time, then its channel
// count, lowered while the bytes are fewer than channels x threads x the protocol's per-thread
// threshold (NVLS: its own channels). Algorithms that need what the shape lacks (NVLS without
// NVLink SHARP, NVLS tree on one node, CollNet without in-network reduction, PAT with more than
// one GPU per node) are disabled, as NCCL disables them; callers restrict the rest
// (NCCL_ALGO / NCCL_PROTO semantics) with an Enabled mask.
// Leaves out: NCCL's topology search itself (the graphs are inputs), the tuner plugin, user
// overrides of the constants (NCCL_*_LATENCY...), aggregation of several operations (numPipeOps
// is 1), the fp8 ring penalty, and the CollNet channel tuning.
// Units: microseconds; GB/s (10^9 B/s); bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace fabricsim {

enum class NcclFunc : uint8_t { Broadcast, Reduce, AllGather, ReduceScatter, AllReduce };
enum class NcclAlgo : uint8_t { Tree, Ring, CollNetDirect, CollNetChain, Nvls, NvlsTree, Pat };
enum class NcclProto : uint8_t { LL, LL128, Simple };
inline constexpr int kNcclAlgos = 7;
inline constexpr int kNcclProtos = 3;

/// NCCL's spelling of an algorithm / protocol ("Tree", "Ring", ..., "LL128", "Simple").
const char* toString(NcclAlgo a);
const char* toString(NcclProto p);

/// What NCCL's topology search found for one algorithm (struct ncclTopoGraph's fields the cost
/// model reads).
struct NcclGraph {
  int nChannels = 0;
  double bwIntra = 0;       ///< GB/s per channel inside a node
  double bwInter = 0;       ///< GB/s per channel across nodes
  double latencyInter = 0;  ///< us added to every inter-node hop
  bool intraNvlink = true;  ///< GPUs of a node talk over NVLink (else PCI)
  /// Every channel runs the same GPU order (graph->sameChannels): a ring broadcast or reduce
  /// then pays one hop latency, else one per step.
  bool sameChannels = false;
};

struct NcclCommShape {
  enum class Arch : uint8_t { Volta, Ampere, Hopper, Blackwell };
  enum class Cpu : uint8_t { Intel, Amd, Other };
  /// The tree pattern the search found (NCCL_TOPO_PATTERN_*): a plain tree (all NIC traffic
  /// through one GPU) costs tree bandwidth x 0.85.
  enum class TreePattern : uint8_t { Balanced, Split, Tree };
  int nRanks = 1;
  int nNodes = 1;
  Arch arch = Arch::Hopper;
  Cpu cpu = Cpu::Intel;
  TreePattern treePattern = TreePattern::Balanced;
  std::array<NcclGraph, kNcclAlgos> graphs{};  ///< by NcclAlgo
  int nChannels = 1;                           ///< the communicator's channels (comm->nChannels)
  int nvlsChannels = 16;                       ///< NVLS channels (comm->nvlsChannels)
  bool nvlsSupport = false;                    ///< NVLink SHARP in the nodes' NVSwitches
  bool collNetSupport = false;                 ///< in-network reduction (SHARP) in the network
  int maxLocalRanks = 1;                       ///< GPUs on the most populated node
  double netOverheadUs = -1;  ///< per-step network post overhead; < 0: NCCL's by CPU (1, AMD 2)
};

class NcclCostModel {
 public:
  explicit NcclCostModel(const NcclCommShape& shape);

  /// Latency (us) and algorithm bandwidth (GB/s) of (function, algorithm, protocol): NCCL's
  /// comm->latencies and comm->bandwidths; bandwidth 0 where the combination is not available.
  double latencyUs(NcclFunc f, NcclAlgo a, NcclProto p) const { return latency_[idx(f, a, p)]; }
  double bandwidthGBps(NcclFunc f, NcclAlgo a, NcclProto p) const { return bandwidth_[idx(f, a, p)]; }
  /// ncclTopoGetAlgoTime for one operation of `bytes`; nullopt where not available.
  std::optional<double> timeUs(NcclFunc f, NcclAlgo a, NcclProto p, uint64_t bytes) const;

  /// Which algorithms and protocols the caller allows (NCCL_ALGO / NCCL_PROTO).
  struct Enabled {
    std::array<bool, kNcclAlgos> algo{true, true, true, true, true, true, true};
    std::array<bool, kNcclProtos> proto{true, true, true};
  };
  struct Choice {
    NcclAlgo algo = NcclAlgo::Ring;
    NcclProto proto = NcclProto::Simple;
    int channels = 1;
    int threads = 0;
    double timeUs = 0;
  };
  /// NCCL's choice for `bytes` (for all-gather and reduce-scatter: the whole buffer, nRanks x
  /// count x element size); nullopt when nothing enabled is available.
  std::optional<Choice> choose(NcclFunc f, uint64_t bytes, const Enabled& enabled) const;
  std::optional<Choice> choose(NcclFunc f, uint64_t bytes) const { return choose(f, bytes, Enabled{}); }

 private:
  static size_t idx(NcclFunc f, NcclAlgo a, NcclProto p) {
    return (static_cast<size_t>(f) * kNcclAlgos + static_cast<size_t>(a)) * kNcclProtos +
           static_cast<size_t>(p);
  }
  NcclCommShape shape_;
  std::array<double, 5 * kNcclAlgos * kNcclProtos> latency_{};
  std::array<double, 5 * kNcclAlgos * kNcclProtos> bandwidth_{};
  std::array<int, kNcclAlgos * kNcclProtos> maxThreads_{};
};

}  // namespace fabricsim
