// SendRecvBuilder: point-to-point messages (an NCCL send/recv pair) and nccl-tests' sendrecv
// (rank i sends S to rank (i + 1) mod N, all at once).
//
// Models: a message of S bytes goes as C sends of S/C, one per channel (queue pair), C =
// min(S, tuning.channels) across hosts or min(S, nvlinkChannels) inside one, after one step
// latency.
// Leaves out: NCCL's chunking of a message into slices of the connection buffer.
// Units: Bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class SendRecvBuilder {
 public:
  /// One message of `bytes` (> 0) from srcGpu to dstGpu.
  static void addMessage(CollectivePlan& plan, const BuildContext& ctx, uint32_t srcGpu, uint32_t dstGpu,
                         Bytes bytes);
  /// nccl-tests sendrecv over `gpus` in the call's order: gpus[r] sends `bytes` to gpus[r + 1].
  static void build(CollectivePlan& plan, const BuildContext& ctx, const std::vector<uint32_t>& gpus,
                    Bytes bytes);
};

}  // namespace fabricsim
