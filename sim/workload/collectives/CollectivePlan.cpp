#include "sim/workload/collectives/CollectivePlan.h"

#include <string>

#include "sim/core/Error.h"

namespace fabricsim {

void CollectivePlan::splitByHost(uint32_t gpusPerHost, const char* algorithm) {
  const uint32_t g = gpusPerHost;
  const uint32_t n = static_cast<uint32_t>(members.size());
  uint32_t per = 1;
  while (per < n && members[per] / g == members[0] / g) ++per;
  const uint32_t h = n / per;
  SIM_CHECK(h * per == n && h > 1 && per > 1, std::string(algorithm) + " all-reduce needs equal hosts");
  hosts = h;
  perHost = per;
}

}  // namespace fabricsim
