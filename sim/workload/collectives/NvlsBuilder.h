// NvlsBuilder: all-reduce inside one host by NVLink SHARP (NCCL's NVLS), as lanes of a plan.
//
// Models: each GPU writes its whole buffer into the NVSwitch, which reduces it (each GPU reads
// back the reduced 1/N it owns), then each GPU multicasts its reduced 1/N through the switch to
// all: per GPU and direction S + S/N through its NVLink port. The switch is not a node of the
// fabric, so the same per-port volume goes as N-1 transfers from each GPU to each other GPU
// (S (N+1) / (N (N-1)) each, at the NVLink rate x nvlsEfficiency). They start after the NVLS
// latency plus the pipeline's fill: reduce and multicast overlap once the first F =
// tuning.nvlsPipeline bytes have been reduced, so min(S, F) passes the reduce before the
// multicast runs alongside (for S <= F the two run one after the other). On an idle host:
// T = nvlsLatency + (S (N+1)/N + min(S, F)) / (NVLink rate x nvlsEfficiency).
// Leaves out: NVLS for other operations than all-reduce; the switch's own reduction rate.
// Units: Bytes; Time (ps).
#pragma once

#include <cstdint>

#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class NvlsBuilder {
 public:
  static void build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes);
  /// Appends one fixed-delay NVLS lane from member a to member b carrying `user` bytes (at the
  /// plan's nvlsEff), after `delay`, in `phase`, open from the start if `gate`.
  static void addLane(CollectivePlan& plan, uint32_t a, uint32_t b, Bytes user, Time delay, uint8_t phase,
                      bool gate);
};

}  // namespace fabricsim
