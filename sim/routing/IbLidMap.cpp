#include "sim/routing/IbLidMap.h"

#include <algorithm>

#include "sim/core/Error.h"

namespace fabricsim {

IbLidMap::IbLidMap(const Topology& topo, int lmc) : lmc_(lmc) {
  SIM_CHECK(lmc >= 0 && lmc <= kMaxLmc, "LMC out of range");
  const size_t n = topo.nodeCount();
  subnet_.assign(n, kInvalid);
  switchLid_.assign(n, 0);
  std::vector<NodeId> stack;
  for (NodeId s = static_cast<NodeId>(topo.hostCount()); s < n; ++s) {
    if (subnet_[s] != kInvalid) continue;
    const auto id = static_cast<uint32_t>(subnetSwitches_.size());
    subnetSwitches_.emplace_back();
    subnet_[s] = id;
    stack.push_back(s);
    while (!stack.empty()) {
      const NodeId v = stack.back();
      stack.pop_back();
      subnetSwitches_[id].push_back(v);
      for (uint32_t p = 0; p < topo.degree(v); ++p) {
        const NodeId w = topo.peerNode(topo.port(v, p));
        if (topo.isHost(w) || subnet_[w] != kInvalid) continue;
        subnet_[w] = id;
        stack.push_back(w);
      }
    }
  }
  for (auto& sw : subnetSwitches_) std::sort(sw.begin(), sw.end());
  subnetNics_.assign(subnetSwitches_.size(), {});
  nicSubnet_.resize(topo.nicCount());
  baseLid_.resize(topo.nicCount());
  for (uint32_t nic = 0; nic < topo.nicCount(); ++nic) {
    const uint32_t s = subnet_[topo.attachedSwitch(nic)];
    nicSubnet_[nic] = s;
    // Base LIDs 2^LMC, 2 x 2^LMC, ...: aligned, and LID 0 (reserved) never used.
    baseLid_[nic] = static_cast<uint32_t>(subnetNics_[s].size() + 1) << lmc;
    subnetNics_[s].push_back(nic);
  }
  lidEnd_.resize(subnetSwitches_.size());
  for (uint32_t s = 0; s < subnetSwitches_.size(); ++s) {
    uint32_t next = static_cast<uint32_t>(subnetNics_[s].size() + 1) << lmc;
    for (NodeId sw : subnetSwitches_[s]) switchLid_[sw] = next++;
    lidEnd_[s] = next;
  }
}

std::vector<uint32_t> IbLidMap::overflow() const {
  std::vector<uint32_t> out;
  for (uint32_t s = 0; s < lidEnd_.size(); ++s)
    if (lidEnd_[s] - 1 > kMaxUnicastLid) out.push_back(s);
  return out;
}

}  // namespace fabricsim
