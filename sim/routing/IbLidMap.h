// IbLidMap: the local identifiers (LIDs) an InfiniBand subnet manager hands out.
//
// Models: every connected plane of switches is one subnet with its own LID space (one subnet
// manager per plane, as rail-optimized InfiniBand fabrics run one subnet per rail). In each
// subnet the NIC ports, in global NIC order, get 2^LMC consecutive LIDs each, starting at a base
// aligned to 2^LMC (the port accepts any DLID that matches its base in all but the low LMC
// bits: IBA vol. 1, PortInfo.LMC); then every switch gets one LID (switch port 0 has no LMC).
// A NIC's position in its subnet is its destination index (D-mod-K numbers destinations by it).
// Unicast LIDs run from 0x0001 to 0xBFFF: a subnet that needs more is refused.
// Leaves out: LID persistence across sweeps (LIDs never change here), multicast LIDs, routers
// between subnets, switch enhanced port 0 LMC.
// Units: LIDs are 16-bit IBA addresses held in uint32_t.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/topology/Topology.h"

namespace fabricsim {

class IbLidMap {
 public:
  static constexpr uint32_t kMaxUnicastLid = 0xBFFF;
  static constexpr int kMaxLmc = 7;

  /// Assigns LIDs for every plane of `topo`. Precondition: 0 <= lmc <= 7. Subnets that need
  /// more than kMaxUnicastLid LIDs are listed by overflow() (the caller refuses the input).
  IbLidMap(const Topology& topo, int lmc);

  int lmc() const { return lmc_; }
  uint32_t lidsPerPort() const { return 1u << lmc_; }
  /// The subnet (connected switch plane) of a switch or of a NIC's leaf.
  uint32_t subnetOfSwitch(NodeId sw) const { return subnet_[sw]; }
  uint32_t subnetOfNic(uint32_t nic) const { return nicSubnet_[nic]; }
  size_t subnets() const { return lidEnd_.size(); }
  /// One past the highest LID used in subnet `s` (the length of its switches' LFTs).
  uint32_t lidEnd(uint32_t s) const { return lidEnd_[s]; }
  uint32_t baseLid(uint32_t nic) const { return baseLid_[nic]; }
  /// NIC `nic`'s index among its subnet's NICs (the D of D-mod-K).
  uint32_t nicIndex(uint32_t nic) const { return (baseLid_[nic] >> lmc_) - 1; }
  /// The DLID a queue pair with index `qpIndex` uses toward `dstNic`: base + (qpIndex mod 2^LMC).
  uint32_t dlid(uint32_t dstNic, uint32_t qpIndex) const {
    return baseLid_[dstNic] + (qpIndex & ((1u << lmc_) - 1));
  }
  uint32_t switchLid(NodeId sw) const { return switchLid_[sw]; }
  /// NICs of subnet `s` in index order.
  const std::vector<uint32_t>& nicsOf(uint32_t s) const { return subnetNics_[s]; }
  /// Switches of subnet `s` in node order.
  const std::vector<NodeId>& switchesOf(uint32_t s) const { return subnetSwitches_[s]; }
  /// The subnets whose LIDs do not fit in 0x0001..0xBFFF.
  std::vector<uint32_t> overflow() const;

 private:
  int lmc_;
  std::vector<uint32_t> subnet_;     // per node (hosts: kInvalid)
  std::vector<uint32_t> nicSubnet_;  // per NIC
  std::vector<uint32_t> baseLid_;    // per NIC
  std::vector<uint32_t> switchLid_;  // per node (hosts: 0)
  std::vector<uint32_t> lidEnd_;     // per subnet
  std::vector<std::vector<uint32_t>> subnetNics_;
  std::vector<std::vector<NodeId>> subnetSwitches_;
};

}  // namespace fabricsim
