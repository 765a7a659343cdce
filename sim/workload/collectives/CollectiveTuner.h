// CollectiveTuner: which algorithm, protocol and channel count a collective call runs with, as
// NCCL's tuner chooses them.
//
// Models: an explicit algorithm is checked against the call (tree, hierarchical, nvls and
// nvls_tree are all-reduce only; direct is all-to-all and send/recv only; nvls needs one host and
// collectives.nvls; nvls_tree several hosts with the same GPUs each; pat all-gather and
// reduce-scatter with one GPU per host). Auto: NCCL's own choice, NcclCostModel (NCCL 2.30.7's
// tuner: base and per-hop latencies, per-protocol bandwidth caps by architecture and node count)
// on the call's shape, among the algorithms that have a builder here (ring, tree, PAT, NVLS on
// one host, NVLS tree over uniform hosts; NVLS only with collectives.nvls) and that an NCCL_ALGO
// list allows (collectives.algorithm: "^NVLS", "Ring,Tree"); hierarchical, which NCCL does not
// have, only when asked for. Protocol Auto: NCCL's choice for the call's algorithm among the
// NCCL_PROTO list (NVLS, NVLS tree and hierarchical run Simple); an explicit protocol restricts
// the choice of algorithm to it. Channels: ncclChoice gives NCCL's per-call count (enqueue.cc:
// fewer for small calls), unless collectives.call_channels pins it. The graphs given to the model
// are what NCCL's search finds on such hosts: `channels` channels (NVLS: 16), each a share of the
// GPU's NVLink rate and, across hosts, of the host's NICs (one per GPU of the call), Hopper
// constants, Intel CPUs. The model only chooses; every time comes from the transfers.
// Leaves out: NCCL's topology search itself (hosts with fewer NICs than GPUs are seen as one NIC
// per GPU), NVLS all-gather / reduce-scatter (no builder), per-operation NCCL_ALGO lists
// ("allreduce:tree"), and CollNet (no in-network reduction is modelled).
// Units: Bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/fabric/Fabric.h"
#include "sim/workload/collectives/CollectiveCall.h"
#include "sim/workload/collectives/NcclCostModel.h"

namespace fabricsim {

class CollectiveTuner {
 public:
  /// `gpusPerHost` says which GPUs share a host (GPU g is on host g / gpusPerHost).
  CollectiveTuner(Fabric& fabric, const CollectiveTuning& tuning, uint32_t gpusPerHost);

  /// The algorithm a call with algorithm Auto (or the tuning's default) resolves to; throws
  /// InputError for an explicit algorithm that does not apply to the call.
  CollectiveAlgorithm resolve(const CollectiveCall& call) const;
  /// Auto's algorithm for `call`: NCCL's cost-model choice among the allowed algorithms (ring
  /// where the model has none, e.g. one rank); throws InputError where an NCCL_ALGO list leaves
  /// nothing NCCL could run.
  CollectiveAlgorithm autoChoice(const CollectiveCall& call) const;
  /// The protocol `call` runs with under `algo`: the tuning's, or with protocol Auto NCCL's
  /// choice for that algorithm (ring and tree; the others run Simple).
  CollectiveProtocol protocolFor(const CollectiveCall& call, CollectiveAlgorithm algo) const;
  /// NCCL's choice (algorithm, protocol, channels, its own time estimate) for `call`, among the
  /// algorithms that have a builder here, or only those that map to `only`; nullopt for
  /// all-to-all and send/recv and for calls of fewer than 2 ranks or no bytes.
  std::optional<NcclCostModel::Choice> ncclChoice(const CollectiveCall& call,
                                                  std::optional<CollectiveAlgorithm> only) const;
  /// NCCL's own time estimate (us, ncclTopoGetAlgoTime) for `call` run as `algo` with `proto`:
  /// what NCCL's cost model expects of the choice the simulation made, for comparison with the
  /// simulated time. nullopt where NCCL has no such algorithm (hierarchical, direct), for
  /// all-to-all and send/recv, and where the model has the combination unavailable.
  std::optional<double> ncclTimeUs(const CollectiveCall& call, CollectiveAlgorithm algo,
                                   CollectiveProtocol proto) const;
  /// NCCL's function for a collective op; nullopt for all-to-all and send/recv (point-to-point).
  static std::optional<NcclFunc> ncclFuncOf(CollectiveOp op);
  /// The builder that runs NCCL's algorithm `a` (PAT and CollNet: ring).
  static CollectiveAlgorithm toAlgorithm(NcclAlgo a);
  static NcclProto toNcclProto(CollectiveProtocol p);
  /// NCCL's NVLS channels on Hopper (NCCL_NVLS_NCHANNELS' default).
  static constexpr int kNvlsChannels = 16;
  /// Wire efficiency and latency scale of a protocol (Simple: the tuning's protocolEfficiency, 1),
  /// the scale on NVLink hops or on network hops.
  double protocolEfficiency(CollectiveProtocol p) const;
  double protocolLatencyScale(CollectiveProtocol p, bool network = false) const;
  /// nccl-tests' bus-bandwidth factor: busbw = algbw * factor (all_reduce 2(N-1)/N,
  /// all_gather / reduce_scatter / alltoall (N-1)/N, broadcast and send_recv 1).
  static double busBandwidthFactor(CollectiveOp op, size_t ranks);

  /// Ranks, hosts, GPUs per host of a call (uniform: every host holds the same number).
  struct Shape {
    uint32_t ranks = 0, hosts = 0, perHost = 0;
    bool uniform = true;
  };
  Shape shapeOf(const std::vector<uint32_t>& gpus) const;

 private:
  Fabric& fabric_;
  const CollectiveTuning& tuning_;
  uint32_t gpusPerHost_;
  mutable std::vector<uint32_t> hostsOf_;  ///< shapeOf's scratch
  /// NCCL's cost model per call shape (ranks, hosts, GPUs per host), the 64 most recent.
  mutable std::vector<std::pair<uint64_t, std::unique_ptr<NcclCostModel>>> models_;
  const NcclCostModel& modelFor(const Shape& sh, const std::vector<uint32_t>& gpus) const;
};

}  // namespace fabricsim
