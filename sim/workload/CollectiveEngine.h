// CollectiveEngine: NCCL-style collectives decomposed into point-to-point transfers on a Fabric.
//
// Models (S = CollectiveCall::bytes, N = ranks, C = channels, G = GPUs per host, "step" = one
// rank sending one chunk to one peer; every step waits for the data it forwards and adds the
// call's step latency, NVLink or network, before its transfer starts; a step of b user bytes
// moves ceil(b / efficiency) bytes):
//   ring          C channels, each a ring through all ranks ordered by host so that intra-host
//                 hops ride NVLink and each inter-host hop leaves through the sending GPU's own
//                 NIC; with the same number of GPUs on every host, channel c is rotated inside
//                 each host (enters at local GPU c mod G, leaves from (c-1) mod G), so that the
//                 channels' inter-host hops spread over all the hosts' NICs as NCCL's rings do.
//                 all_reduce = reduce-scatter + all-gather: 2(N-1) steps of S/(N C) per
//                 channel; all_gather / reduce_scatter: N-1 steps of S/(N C); broadcast: the
//                 ring from the root, pipelined in chunks. The ring's latency is the sum of its
//                 hops' latencies along the data's path (NVLink hops pay the NVLink step
//                 latency, only hops that cross hosts the network one), as in NCCL's cost model.
//   tree          NCCL's double binary tree over hosts (two complementary trees, each carrying
//                 half of the data) with a chain inside each host; all_reduce = reduce up then
//                 broadcast down, pipelined in chunks of tuning.chunkSize.
//   hierarchical  all_reduce as intra-host reduce-scatter (NVLink ring), inter-host all-reduce
//                 of each GPU's shard over the ring of same-index GPUs (one rail), intra-host
//                 all-gather, one phase after the other.
//   nvls          (tuning.nvls) all_reduce inside one host by NVLink SHARP: the switch reduces
//                 and multicasts, so each GPU's NVLink port carries S + S/N each way, at
//                 tuning.nvlsEfficiency of its rate, after nvlsLatency plus the pipeline's fill
//                 (min(S, nvlsPipeline) through the reduce before the multicast overlaps it).
//                 The NVSwitch is not a fabric node: the per-port volume goes as N-1 transfers
//                 per GPU to its peers (the NVLink model is per GPU egress).
//   nvls_tree     (tuning.nvls) NCCL's NVLSTree across hosts: NVLS inside each host pipelined
//                 with an inter-host all-reduce of each GPU's S/G (a ring over its rail; NCCL's
//                 tree moves the same bytes per NIC at two hosts); the inter-host transfers start
//                 after the fill, the multicast of the last min(S, nvlsPipeline)/G waits for the
//                 GPU's inter-host data: about max(phases) + fill, not their sum.
//   direct        all_to_all: every rank sends S/N to every other rank at once; send_recv:
//                 rank i sends S to rank (i+1) mod N (nccl-tests sendrecv).
// Protocols (tuning.protocol): Simple (protocolEfficiency, the step latencies), LL (efficiency
// 0.5, latencies x llLatencyScale), LL128 (0.92, x ll128LatencyScale), or auto: per call the
// fastest by estimateUs, NCCL's tuner's latency + bytes / bandwidth form. Algorithm auto with
// tuning.nvls picks the fastest of ring and nvls / nvls_tree the same way. The estimate only
// chooses; every time comes from the transfers on the fabric.
// A collective completes when its last transfer has been delivered.
// Ring model (CollectiveTuning::ringModel): with `steps` every ring step is its own transfer, as
// above; with `pipelined` each ring edge and channel sends its whole share (every chunk its
// steps would forward) as one transfer, after the steps' latencies (per step, the mean over the
// ring's hops of step latency plus path latency). That is the steady state of NCCL's pipelined
// ring, equal to the closed form on an idle fabric, at N C transfers per ring instead of
// 2(N-1) N C; it gives up the per-step coupling of neighbours (a slow edge delays only its own
// transfer). Auto picks pipelined on the flow backend. NVLS lanes are always one transfer each.
// Leaves out: the reduction arithmetic (its time is assumed hidden behind the transfers), LL's
// and LL128's per-channel bandwidth caps of NCCL's tuner, NCCL's channel-count reduction for
// small sizes, NVLS for other operations than all_reduce, CollNet, PAT.
// Units: Bytes; Time (ps).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"

namespace fabricsim {

/// One collective call. Sizes follow nccl-tests: all_reduce and broadcast: the buffer size;
/// all_gather: the total output (N x each rank's input); reduce_scatter: the total input
/// (N x each rank's output); alltoall: each rank's total send buffer; send_recv: what each
/// rank sends.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  std::vector<uint32_t> gpus;  ///< participants; index = rank within the collective
  Bytes bytes = 0;
  uint32_t root = 0;           ///< broadcast: index of the root in `gpus`
};

class CollectiveListener {
 public:
  virtual ~CollectiveListener() = default;
  /// The collective (or point-to-point transfer) started with `id` has completed at `when`.
  virtual void onCollectiveDone(uint64_t id, Time when) = 0;
};

class CollectiveEngine final : public TransferObserver, public EventHandler {
 public:
  /// `gpusPerHost` says which GPUs share a host (GPU g is on host g / gpusPerHost).
  CollectiveEngine(Simulator& sim, Fabric& fabric, const CollectiveTuning& tuning, int gpusPerHost);
  ~CollectiveEngine() override;

  /// Starts `call` now; `listener->onCollectiveDone(id, t)` when it completes (possibly at once,
  /// inside this call, for a zero-byte or single-rank collective). Throws InputError for
  /// an invalid call (fewer than 1 rank, duplicate GPUs, an algorithm that does not apply).
  void start(const CollectiveCall& call, CollectiveListener* listener, uint64_t id);
  /// One point-to-point message (NCCL send/recv pair) of `bytes` from `srcGpu` to `dstGpu`,
  /// split over the channels like a ring step; completes like start().
  void startPointToPoint(uint32_t srcGpu, uint32_t dstGpu, Bytes bytes, CollectiveListener* listener,
                         uint64_t id);

  /// The algorithm a call with algorithm Auto (or the tuning's default) resolves to.
  CollectiveAlgorithm resolve(const CollectiveCall& call) const;
  /// The protocol `call` runs with under `algo`: the tuning's, or with protocol Auto the one
  /// with the smallest estimateUs (ring only; NVLS and the other algorithms run Simple).
  CollectiveProtocol protocolFor(const CollectiveCall& call, CollectiveAlgorithm algo) const;
  /// The analytic estimate NCCL's tuner would make (latency + bytes / bandwidth) of `call` run
  /// with `algo` and `proto` on an idle fabric, in microseconds; used only to choose the
  /// algorithm and protocol, never as the collective's time (that comes from the fabric).
  ///   ring      k = 2(N-1) steps (all_reduce; N-1 otherwise); latency k x the mean over the
  ///             ring's N hops of (step latency x protocol scale + path latency), i.e. the sum
  ///             of the hops' latencies along the data's path; bandwidth term: each GPU's
  ///             NVLink and each NIC (channels spread over the GPUs' NICs) carry k/N S /
  ///             protocol efficiency
  ///   nvls      nvlsLatency + (S (N+1)/N + min(S, F)) / (NVLink rate x nvlsEfficiency)
  ///   nvls_tree nvlsLatency + max(NVLS part - tail, fill + inter-host ring) + tail, where the
  ///             NVLS part moves S (G+1)/G per GPU (at efficiency nvlsEfficiency x
  ///             nvlsTreeEfficiency), the inter-host ring all-reduces S/G per rail,
  ///             fill = min(S, F) through the NVLS reduce and tail = min(S, F)/G through the
  ///             multicast, F = nvlsPipelineBytes()
  double estimateUs(const CollectiveCall& call, CollectiveAlgorithm algo, CollectiveProtocol proto) const;
  /// Wire efficiency and latency scale of a protocol (Simple: the tuning's protocolEfficiency, 1).
  double protocolEfficiency(CollectiveProtocol p) const;
  double protocolLatencyScale(CollectiveProtocol p) const;
  /// F: bytes in flight in an NVLS pipeline (tuning.nvlsPipeline).
  double nvlsPipelineBytes() const;
  /// nccl-tests' bus-bandwidth factor: busbw = algbw * factor (all_reduce 2(N-1)/N,
  /// all_gather / reduce_scatter / alltoall (N-1)/N, broadcast and send_recv 1).
  static double busBandwidthFactor(CollectiveOp op, size_t ranks);

  const CollectiveTuning& tuning() const { return tuning_; }
  /// Collectives in flight and transfers issued so far (for tests and statistics).
  size_t active() const;
  uint64_t transfersIssued() const { return transfersIssued_; }
  Bytes bytesIssued() const { return bytesIssued_; }

  void onTransferDelivered(uint64_t tag, Time when) override;
  void onEvent(uint32_t tag) override;

 private:
  struct Shape {
    uint32_t ranks = 0, hosts = 0, perHost = 0;
    bool uniform = true;
  };
  Shape shapeOf(const std::vector<uint32_t>& gpus) const;
  struct Impl;
  Simulator& sim_;
  Fabric& fabric_;
  CollectiveTuning tuning_;
  int gpusPerHost_;
  uint64_t transfersIssued_ = 0;
  Bytes bytesIssued_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabricsim
