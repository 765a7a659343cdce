// NvlsTreeBuilder: NCCL's NVLSTree all-reduce across hosts, pipelined, as lanes of a plan.
//
// Models (S = bytes, G = GPUs per host, F = tuning.nvlsPipeline): inside each host the NVLS
// reduce (S per GPU into the switch) and multicast (S/G per GPU); across hosts an all-reduce of
// each GPU's reduced S/G over the same-index GPUs (one rail: that GPU's NIC) as a pipelined
// ring over the hosts (NCCL runs a tree; both move S/G per NIC and direction at two hosts), on
// max(1, channels / G) channels per rail. The phases overlap as NCCL's pipeline of F in flight:
// the inter-host lanes start after the first min(S, F) has passed the NVLS reduce (the fill),
// the multicast of all but the last min(S, F)/G runs alongside (queued behind the reduce on each
// GPU's NVLink), and the multicast of the last min(S, F)/G (the tail) waits for the GPU's
// inter-host data. On an idle fabric: about NVLS latency + max(NVLS part, fill + inter-host
// part) + tail. NVLS lanes run at nvlsEfficiency x nvlsTreeEfficiency.
// Leaves out: the inter-host tree's own shape (a ring stands for it).
// Units: Bytes; Time (ps).
#pragma once

#include <cstdint>

#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class NvlsTreeBuilder {
 public:
  /// Lays out the all-reduce of `bytes` over plan.members (the plan's algo becomes NvlsTree).
  static void build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes);

  /// Member `idx` has received one inter-host send: once it has all of them (one per channel),
  /// its multicast tail opens; pump(lane) for each of those lanes.
  template <class Pump>
  static void onReceipt(CollectivePlan& plan, uint32_t idx, Pump&& pump) {
    if (++plan.received[idx] != plan.channels) return;
    const uint32_t first = plan.base2 + idx * (plan.perHost - 1);
    for (uint32_t j = 0; j + 1 < plan.perHost; ++j) {
      plan.lanes[first + j].gate = true;
      pump(first + j);
    }
  }
};

}  // namespace fabricsim
