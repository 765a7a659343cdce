// CollectiveEngine: NCCL-style collectives decomposed into point-to-point transfers on a Fabric:
// the executor of the plans the builders in collectives/ lay out.
//
// Models: a call's algorithm and protocol come from the CollectiveTuner; its lanes from the
// algorithm's builder (RingBuilder: ring all-reduce / all-gather / reduce-scatter and the chain
// broadcast; TreeBuilder; NvlsBuilder; NvlsTreeBuilder; HierarchicalBuilder; AllToAllBuilder;
// SendRecvBuilder). The engine runs them: a lane's send k starts once its data have arrived
// (Lane::ready()), after the call's step latency (NVLink or network, scaled by the protocol;
// stepped ring lanes overlap the waits of their ready sends, so a ring's latency is the sum of
// its hops' latencies along the data's path; pipelined and NVLS lanes wait their own delay), and
// moves ceil(user bytes / the protocol's efficiency) bytes. A delivery unlocks what its lane's
// flow says (ring successor, chain successor, tree parent or children, the next phase). A
// collective completes when its last transfer has been delivered.
// Ring model (CollectiveTuning::ringModel): `steps` (every ring step its own transfer) or
// `pipelined` (one transfer per ring edge and channel; RingBuilder); auto picks pipelined on
// every backend but the packet one.
// Leaves out: the reduction arithmetic (its time is assumed hidden behind the transfers), and
// what each builder's header says it leaves out.
// Units: Bytes; Time (ps).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/workload/collectives/CollectiveCall.h"
#include "sim/workload/collectives/CollectiveTuner.h"

namespace fabricsim {

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

  /// The tuner's choices for this engine's fabric and tuning (CollectiveTuner).
  CollectiveAlgorithm resolve(const CollectiveCall& call) const { return tuner_.resolve(call); }
  CollectiveProtocol protocolFor(const CollectiveCall& call, CollectiveAlgorithm algo) const {
    return tuner_.protocolFor(call, algo);
  }
  std::optional<double> ncclTimeUs(const CollectiveCall& call, CollectiveAlgorithm algo,
                                   CollectiveProtocol proto) const {
    return tuner_.ncclTimeUs(call, algo, proto);
  }
  double protocolEfficiency(CollectiveProtocol p) const { return tuner_.protocolEfficiency(p); }
  double protocolLatencyScale(CollectiveProtocol p, bool network = false) const {
    return tuner_.protocolLatencyScale(p, network);
  }
  static double busBandwidthFactor(CollectiveOp op, size_t ranks) {
    return CollectiveTuner::busBandwidthFactor(op, ranks);
  }
  const CollectiveTuner& tuner() const { return tuner_; }

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
  CollectiveTuner tuner_;
  uint64_t transfersIssued_ = 0;
  Bytes bytesIssued_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabricsim
