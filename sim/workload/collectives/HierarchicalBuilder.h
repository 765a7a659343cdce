// HierarchicalBuilder: all-reduce as intra-host reduce-scatter (NVLink ring), inter-host
// all-reduce of each GPU's shard over the ring of same-index GPUs (one rail), intra-host
// all-gather, one phase after the other (each GPU's next phase opens when its previous one has
// received everything). Not an NCCL algorithm: only run when asked for by name.
// Leaves out: overlap between the phases (NCCL's NVLSTree and tree pipelines have it).
// Units: Bytes.
#pragma once

#include <cstdint>

#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class HierarchicalBuilder {
 public:
  /// Lays out the all-reduce of `bytes` (the plan's algo becomes Hierarchical).
  static void build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes);

  /// Member `idx` has received one send of `phase` (0 or 1): once it has them all, its lanes of
  /// the next phase open; pump(lane) for each.
  template <class Pump>
  static void onReceipt(CollectivePlan& plan, uint8_t phase, uint32_t idx, Pump&& pump) {
    const uint32_t n = static_cast<uint32_t>(plan.members.size());
    const uint32_t h = idx / plan.perHost, i = idx % plan.perHost;
    const uint32_t got = ++plan.received[phase * n + idx];
    if (phase == 0) {
      if (got != (plan.pipelined ? 1 : plan.perHost - 1) * plan.nvChannels) return;
      for (uint32_t c = 0; c < plan.railChannels[i]; ++c) {
        const uint32_t id = plan.railFirst[i] + c * plan.hosts + h;
        plan.lanes[id].gate = true;
        pump(id);
      }
    } else {
      if (got != (plan.pipelined ? 1 : 2 * (plan.hosts - 1)) * plan.railChannels[i]) return;
      for (uint32_t c = 0; c < plan.nvChannels; ++c) {
        const uint32_t id = plan.base2 + (h * plan.nvChannels + c) * plan.perHost + i;
        plan.lanes[id].gate = true;
        pump(id);
      }
    }
  }
};

}  // namespace fabricsim
