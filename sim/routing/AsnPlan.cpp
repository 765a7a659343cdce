#include "sim/routing/AsnPlan.h"

#include <map>
#include <utility>

#include "sim/core/Error.h"

namespace fabricsim {

AsnPlan::AsnPlan(const Topology& topo, const std::string& scheme) : asn_(topo.nodeCount(), kInvalid) {
  const bool unique = scheme == "unique";
  SIM_CHECK(unique || scheme == "rfc7938", "unknown ASN scheme: " + scheme);
  // Shared ASNs of the rfc7938 scheme, keyed by (tier, plane, pod).
  std::map<std::pair<int, std::pair<int32_t, int32_t>>, Asn> shared;
  for (NodeId n = static_cast<NodeId>(topo.hostCount()); n < topo.nodeCount(); ++n) {
    const NodeInfo& info = topo.node(n);
    if (unique || info.tier <= 1) {
      asn_[n] = kPrivateBase + count_++;
      continue;
    }
    // Tier 2 shares per (plane, pod); tier 3 and above per plane.
    const int32_t pod = info.tier == 2 ? info.pod : -1;
    const auto key = std::make_pair(static_cast<int>(info.tier), std::make_pair(info.plane, pod));
    auto it = shared.find(key);
    if (it == shared.end()) it = shared.emplace(key, kPrivateBase + count_++).first;
    asn_[n] = it->second;
  }
}

}  // namespace fabricsim
