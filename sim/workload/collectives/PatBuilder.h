// PatBuilder: NCCL's PAT all-gather and reduce-scatter (2.23 and later), which NCCL runs with one
// GPU per node: a logarithmic number of steps instead of the ring's N - 1.
//
// Models (N ranks, K = ceil(log2 N) steps, B = one rank's block, S/N of the buffer): all-gather
// as Bruck's concatenation, distance doubling: at step k each rank sends to the rank 2^k below
// it every block it holds, min(2^k, N - 2^k) blocks, having received step k - 1's from the rank
// 2^(k-1) above it; reduce-scatter its mirror, distance halving from 2^(K-1): at step i each rank
// sends the partial sums of min(d, N - d) blocks to the rank d = 2^(K-1-i) above it, reduced with
// what step i - 1 brought. Either way each rank sends (N - 1) blocks in all, as on a ring, over K
// network latencies instead of N - 1. Each channel (tuning.channels) runs its own share of every
// block on its own queue pair.
// Leaves out: PAT's bounded staging buffer (NCCL splits a step's blocks over several sends when
// they exceed it, so at large sizes its steps pipeline; here a step's blocks are one transfer)
// and the reduction arithmetic.
// Units: Bytes.
#pragma once

#include "sim/config/WorkloadSpec.h"
#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class PatBuilder {
 public:
  /// Steps of PAT over n ranks: ceil(log2 n).
  static uint32_t steps(uint32_t n);
  /// Blocks sent by each rank at all-gather step k (distance 2^k) of n ranks; reduce-scatter
  /// step i sends what all-gather step K - 1 - i does.
  static uint32_t blocksAt(uint32_t n, uint32_t k);
  /// Lays out `op` (AllGather or ReduceScatter) of `bytes` (the whole gathered buffer) over
  /// plan.members on `channels` channels.
  static void build(CollectivePlan& plan, const BuildContext& ctx, CollectiveOp op, Bytes bytes,
                    uint32_t channels);
};

}  // namespace fabricsim
