// NvlsTreeBuilder: NCCL's NVLSTree all-reduce across hosts, pipelined, as lanes of a plan.
//
// Models (S = bytes, G = GPUs per host, F = tuning.nvlsPipeline): inside each host the NVLS
// reduce (S per GPU into the switch) and multicast (S/G per GPU); across hosts an all-reduce of
// each GPU's reduced S/G over the same-index GPUs (one rail: that GPU's NIC) by NCCL's double
// binary tree over the hosts (TreeShape; each tree half the data, reduce up and broadcast down,
// pipelined: every tree edge one send per direction), on max(1, channels / G) channels per
// rail. Per NIC and direction that is S/G at two hosts and 2 S/G from three hosts on (each host
// is interior in one tree, a leaf in the other): the tree's bandwidth cost across nodes. The
// phases overlap as NCCL's pipeline of F in flight: the inter-host lanes start after the first
// min(S, F) has passed the NVLS reduce (the fill),
// the multicast of all but the last min(S, F)/G runs alongside (queued behind the reduce on each
// GPU's NVLink), and the multicast of the last min(S, F)/G (the tail) waits for the GPU's
// inter-host data. On an idle fabric: about NVLS latency + max(NVLS part, fill + inter-host
// part) + tail, the inter-host part's latency one hop (path + step) per tree edge up and down
// (2 x the trees' depth). NVLS lanes run at nvlsEfficiency x nvlsTreeEfficiency.
// Leaves out: the tree's chunk-by-chunk pipeline (every edge sends its share as one transfer
// after the fill and the depth's latency).
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

  /// Member `idx` has received one inter-host send: once it has all of them (plan.expected),
  /// its multicast tail opens; pump(lane) for each of those lanes.
  template <class Pump>
  static void onReceipt(CollectivePlan& plan, uint32_t idx, Pump&& pump) {
    if (++plan.received[idx] != plan.expected[idx]) return;
    const uint32_t first = plan.base2 + idx * (plan.perHost - 1);
    for (uint32_t j = 0; j + 1 < plan.perHost; ++j) {
      plan.lanes[first + j].gate = true;
      pump(first + j);
    }
  }
};

}  // namespace fabricsim
