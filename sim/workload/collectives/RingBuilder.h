// RingBuilder: NCCL's ring algorithm (all-reduce, all-gather, reduce-scatter) and its chain
// broadcast, as lanes of a CollectivePlan.
//
// Models (S = data, N = ranks of the ring, C = channels): C rings, each through all N ranks,
// each lane one ring position's stream of sends to its successor on one channel (its own queue
// pair, so ECMP may place the channels on different paths). A ring through every member of a
// multi-host call with the same number of GPUs on every host is rotated per channel inside each
// host: channel c enters a host at its local GPU c mod G and leaves from GPU (c - 1) mod G, so
// the channels' inter-host hops spread over the hosts' NICs (one per GPU), as NCCL's rings do.
// The hop out of a host is sent from the host's GPU c mod G (PXN: NCCL's exit GPU hands its data
// over NVLink to the GPU of the rail the next host is entered on), so every inter-host hop of
// channel c stays on rail c mod G, as on a rail-optimized fabric NCCL's rings do.
//   steps model:     each ring step is its own send of S/(N C), unlocked by the predecessor's
//                    delivery of the chunk it forwards: all-reduce 2(N-1) steps (reduce-scatter
//                    then all-gather), all-gather and reduce-scatter N-1.
//   pipelined model: each ring edge and channel sends everything its steps would forward as
//                    one transfer (reduce-scatter all chunks but the sender's own, all-gather all
//                    but the receiver's), after a wait that makes its critical path the stepped
//                    ring's: the sum over the steps' hops of (step latency + path latency), less
//                    what the lanes sharing its sender -> receiver link hide (pipelinedDelay). It gives up the
//                    per-step coupling of neighbours (a slow edge delays only itself).
//   broadcast:       a chain through the ring order from the root, pipelined in chunks of
//                    tuning.chunkSize per channel, at most kConnectionBuffer in flight per lane.
// Leaves out: the NVLink leg of a PXN exit (its bytes and latency); NCCL's channel-count
// reduction for small sizes and its per-protocol caps (the engine's tuning decides the channels
// and protocol).
// Units: Bytes; Time (ps).
#pragma once

#include <cstdint>

#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class RingBuilder {
 public:
  /// Appends the lanes of `ringChannels` rings through members memberBase + p * memberStride
  /// (p < ringSize), each lane sending `steps` chunks of its channel's share of `data`, in
  /// `phase`, open from the start if `gate`.
  static void addRing(CollectivePlan& plan, const BuildContext& ctx, LaneKind kind, uint32_t steps,
                      uint32_t ringSize, Bytes data, uint32_t ringChannels, uint8_t phase, bool gate,
                      uint32_t memberBase, uint32_t memberStride);
  /// Broadcast of `bytes` from member `root` (its index in plan.members) over `channels`.
  static void addBroadcastChain(CollectivePlan& plan, const BuildContext& ctx, uint32_t root, Bytes bytes,
                                uint32_t channels);

 private:
  /// The wait of a pipelined lane before its one send. In a stepped ring each step forwards
  /// data received in the previous step, so the lane's last (k-th) send carries data that has
  /// crossed the k hops ending with its own: its critical path is the sum of those hops'
  /// latencies (each hop's step latency, NVLink or network, plus its path latency -- NCCL's
  /// ring latency), `pathLatencies`, plus the lane's bytes D at the rate it moves alone (the
  /// path rate B, or the protocol's per-lane ceiling if lower), while the k lanes of the ring
  /// (over all channels) with the same sender and receiver, `sharing`, need k D / B of their
  /// link; the stepped ring takes the larger. The lane's one transfer takes
  /// k D / B plus its own path latency L, so it waits the difference (at least its own step
  /// latency). k counts the lanes that do share the link: with C in its place for every lane
  /// (rotated rings put most channels' lanes on different pairs), a larger size hid more
  /// latency than the ring has and the time fell as the size grew.
  static Time pipelinedDelay(const CollectivePlan& plan, const BuildContext& ctx, const Lane& l,
                             Time pathLatencies, uint32_t sharing);
};

}  // namespace fabricsim
