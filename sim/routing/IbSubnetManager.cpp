#include "sim/routing/IbSubnetManager.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "sim/config/SpecError.h"
#include "sim/routing/IbDmodkEngine.h"
#include "sim/routing/IbFtreeEngine.h"
#include "sim/routing/IbUpDnEngine.h"

namespace fabricsim {
namespace {

const IbLidMap& checkedLids(const IbLidMap& lids, const TopologySpec& spec) {
  const auto over = lids.overflow();
  if (!over.empty())
    throw specError(spec, "routing.ib_sm.lmc",
                    "an InfiniBand subnet has unicast LIDs 0x0001..0xBFFF (49,151); with LMC " +
                        std::to_string(lids.lmc()) + " subnet " + std::to_string(over.front()) + " needs " +
                        std::to_string(lids.lidEnd(over.front()) - 1) + " (" +
                        std::to_string(lids.nicsOf(over.front()).size()) + " NIC ports x " +
                        std::to_string(lids.lidsPerPort()) + " LIDs, plus one per switch): lower the LMC");
  return lids;
}

const Topology& checkedRadix(const Topology& topo, const TopologySpec& spec) {
  for (NodeId s = static_cast<NodeId>(topo.hostCount()); s < topo.nodeCount(); ++s)
    if (topo.degree(s) > IbLft::kMaxRadix)
      throw specError(spec, "links.technology",
                      "switch " + topo.node(s).name + " has " + std::to_string(topo.degree(s)) +
                          " ports; InfiniBand port numbers are 8 bits (at most 254 ports per switch)");
  return topo;
}

}  // namespace

IbSubnetManager::IbSubnetManager(Simulator& sim, const Topology& topo, const TopologySpec& spec,
                                 EcmpFib* arGroups)
    : sim_(sim),
      topo_(topo),
      spec_(spec),
      arGroups_(arGroups),
      lids_(checkedLids(IbLidMap(topo, spec.routing.ibSm.lmc), spec)),
      paths_(topo),
      lft_(checkedRadix(topo, spec), lids_),
      engine_(spec.routing.ibSm.engine),
      adaptive_(spec.routing.ibSm.adaptive),
      delay_(spec.routing.ibSm.rerouteDelay) {
  SIM_CHECK(!adaptive_ || arGroups_, "adaptive routing needs the EcmpFib for its groups");
  if (engine_ == "auto") engine_ = paths_.isClos() ? "ftree" : "updn";
  if (engine_ == "dmodk")
    if (const std::string why = IbDmodkEngine::check(topo, paths_); !why.empty())
      throw specError(spec, "routing.ib_sm.engine", why);
  computeTables();
}

void IbSubnetManager::computeTables() {
  const auto t0 = std::chrono::steady_clock::now();
  lft_.clear();
  std::optional<IbDmodkEngine> dmodk;
  std::optional<IbFtreeEngine> ftree;
  std::optional<IbUpDnEngine> updn;
  if (engine_ == "dmodk")
    dmodk.emplace(topo_, paths_);
  else if (engine_ == "ftree")
    ftree.emplace(topo_);
  else
    updn.emplace(topo_);
  const uint32_t per = lids_.lidsPerPort();
  NodeId current = kInvalid;  // the leaf paths_ was computed for on this sweep's links
  std::vector<uint32_t> nics;
  for (uint32_t s = 0; s < lids_.subnets(); ++s) {
    // Destinations leaf by leaf, as OpenSM's engines sweep them (ftree: the leaves' ports in
    // order, each leaf's hosts together). In NIC index order a rail-optimized fabric interleaves
    // its rails (host-major numbering), and ftree's per-port counters then send all of one
    // rail's destinations behind a spine up the same of its parallel links.
    nics = lids_.nicsOf(s);
    std::stable_sort(nics.begin(), nics.end(), [&](uint32_t a, uint32_t b) {
      return topo_.attachedSwitch(a) < topo_.attachedSwitch(b);
    });
    for (uint32_t nic : nics) {
      const NodeId leaf = topo_.attachedSwitch(nic);
      if (current != leaf) {
        current = leaf;
        paths_.computeFor(leaf);
        if (adaptive_)
          for (NodeId sw : paths_.order(leaf))
            if (sw != leaf) arGroups_->setRoute(sw, leaf, paths_.candidates(sw));
      }
      const uint32_t base = lids_.baseLid(nic);
      const PortId down = topo_.peerPort(topo_.nicPort(nic));
      for (uint32_t l = 0; l < per; ++l) {
        const uint32_t lid = base + l;
        lft_.set(leaf, lid, paths_.portLive(down) ? down : kInvalid);
        if (dmodk)
          dmodk->route(paths_, lid, static_cast<uint64_t>(lids_.nicIndex(nic)) * per + l, lft_);
        else if (ftree)
          ftree->route(paths_, lid, lft_);
        else
          updn->route(paths_, lid, base, lft_);
      }
    }
  }
  computeSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void IbSubnetManager::linksChanged(std::span<const LinkId> links, bool up) {
  for (LinkId l : links) paths_.setLinkUp(l, up);
  if (pending_) return;  // the sweep already scheduled will see this change too
  pending_ = true;
  sim_.schedule(sim_.now() + delay_, this, 0);
}

void IbSubnetManager::onEvent(uint32_t) {
  pending_ = false;
  computeTables();
  ++sweeps_;
  lastSweep_ = sim_.now();
  if (onSweep_) onSweep_();
}

}  // namespace fabricsim
