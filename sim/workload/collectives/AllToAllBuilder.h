// AllToAllBuilder: all-to-all as NCCL runs it: every rank sends its share S/N to every other
// rank at once (grouped send/recv), after one step latency.
//
// Models: one batch lane per rank; its send k goes to rank (pos + 1 + k) mod N with that rank's
// share, on queue pair k mod C (C = tuning.channels across hosts, nvlinkChannels inside one).
// Leaves out: NCCL's per-peer chunking and its limit on peers in flight.
// Units: Bytes.
#pragma once

#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class AllToAllBuilder {
 public:
  /// `bytes`: each rank's total send buffer.
  static void build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes);
};

}  // namespace fabricsim
