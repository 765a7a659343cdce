// BuildContext: what the collective builders read while they lay out a call's lanes: the fabric
// (path rates and latencies, for the delays of pipelined and fixed-delay lanes), the tuning, the
// hosts' size, and the engine's scratch vectors (reused, so building allocates nothing in the
// steady state).
// Units: GPUs per host; the rest as the fabric and CollectiveTuning give them.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Time.h"
#include "sim/fabric/Fabric.h"

namespace fabricsim {

struct BuildContext {
  Fabric& fabric;
  const CollectiveTuning& tuning;
  uint32_t gpusPerHost;
  std::vector<uint32_t>& scratch;
  std::vector<Time>& hopPrefix;
  std::vector<uint64_t>& pairs;
};

}  // namespace fabricsim
