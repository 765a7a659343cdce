#include "sim/routing/IbLft.h"

#include <algorithm>

#include "sim/core/Error.h"

namespace fabricsim {

IbLft::IbLft(const Topology& topo, const IbLidMap& lids) : topo_(topo) {
  row_.assign(topo.nodeCount(), 0);
  size_t size = 0;
  for (NodeId s = static_cast<NodeId>(topo.hostCount()); s < topo.nodeCount(); ++s) {
    SIM_CHECK(topo.degree(s) <= kMaxRadix, "switch radix above 254");
    row_[s] = size;
    size += lids.lidEnd(lids.subnetOfSwitch(s));
  }
  table_.assign(size, kNoRoute);
}

void IbLft::clear() {
  std::fill(table_.begin(), table_.end(), kNoRoute);
}

}  // namespace fabricsim
