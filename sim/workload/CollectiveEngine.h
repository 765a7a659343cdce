// CollectiveEngine: NCCL-style collectives decomposed into point-to-point transfers on a Fabric.
//
// Models (S = CollectiveCall::bytes, N = ranks, C = channels, "step" = one rank sending one
// chunk to one peer; every step waits for the data it forwards and adds the tuning's step
// latency, NVLink or network, before its transfer starts; a step of b user bytes moves
// ceil(b / protocolEfficiency) bytes):
//   ring          C channels, each a ring through all ranks ordered by host so that intra-host
//                 hops ride NVLink and each inter-host hop leaves through the sending GPU's own
//                 NIC; all_reduce = reduce-scatter + all-gather: 2(N-1) steps of S/(N C) per
//                 channel; all_gather / reduce_scatter: N-1 steps of S/(N C); broadcast: the
//                 ring from the root, pipelined in chunks.
//   tree          NCCL's double binary tree over hosts (two complementary trees, each carrying
//                 half of the data) with a chain inside each host; all_reduce = reduce up then
//                 broadcast down, pipelined in chunks of tuning.chunkSize.
//   hierarchical  all_reduce as intra-host reduce-scatter (NVLink ring), inter-host all-reduce
//                 of each GPU's shard over the ring of same-index GPUs (one rail), intra-host
//                 all-gather.
//   direct        all_to_all: every rank sends S/N to every other rank at once; send_recv:
//                 rank i sends S to rank (i+1) mod N (nccl-tests sendrecv).
// A collective completes when its last transfer has been delivered.
// Ring model (CollectiveTuning::ringModel): with `steps` every ring step is its own transfer, as
// above; with `pipelined` each ring edge and channel sends its whole share (every chunk its
// steps would forward) as one transfer, after the steps' latencies (step latency plus the
// path's fixed latency per step). That is the steady state of NCCL's pipelined ring, equal to
// the closed form on an idle fabric, at N C transfers per ring instead of 2(N-1) N C; it gives
// up the per-step coupling of neighbours (a slow edge delays only its own transfer). Auto picks
// pipelined on the flow backend.
// Leaves out: the reduction arithmetic (its time is assumed hidden behind the transfers), NCCL's
// LL/LL128 protocol switching by size (one protocolEfficiency per run), CollNet/NVLS.
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
