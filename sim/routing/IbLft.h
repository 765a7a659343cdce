// IbLft: the linear forwarding tables (LFTs) of every InfiniBand switch.
//
// Models: what a switch's LFT is (IBA vol. 1, LinearForwardingTable): an array indexed by the
// destination LID whose entry is the egress port. Lookup is one byte read: row of the switch
// plus the DLID. Each switch has a row as long as its subnet's LID space; an entry holds the
// switch's local port number (IBA port numbers are 8 bits; 255 here means no route), so the
// tables take one byte per (switch, LID): 176 MB for the eight 12,288-NIC rails of a 98K-GPU
// rail-optimized fabric. The subnet manager writes them and swaps them in at once.
// Leaves out: multicast forwarding tables, LFT block (64-entry) upload timing.
// Units: LIDs, local port numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/routing/IbLidMap.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class IbLft {
 public:
  static constexpr uint8_t kNoRoute = 0xFF;
  /// The largest switch radix an 8-bit port number can address with kNoRoute reserved.
  static constexpr uint32_t kMaxRadix = 254;

  IbLft(const Topology& topo, const IbLidMap& lids);

  /// Local egress port of switch `sw` for `dlid`, or kNoRoute. Precondition: dlid < lidEnd of
  /// the switch's subnet.
  uint8_t local(NodeId sw, uint64_t dlid) const { return table_[row_[sw] + dlid]; }
  /// Global egress port of switch `sw` for `dlid`, or kInvalid when the entry is empty.
  PortId port(NodeId sw, uint64_t dlid) const {
    const uint8_t l = local(sw, dlid);
    return l == kNoRoute ? kInvalid : topo_.port(sw, l);
  }
  /// Sets the entry to global port `p` of `sw` (kInvalid: no route).
  void set(NodeId sw, uint32_t dlid, PortId p) {
    table_[row_[sw] + dlid] = p == kInvalid ? kNoRoute : static_cast<uint8_t>(topo_.portLocal(p));
  }
  /// Empties every entry.
  void clear();
  /// Replaces every entry by `other`'s (same topology and LIDs): the install step of a sweep.
  void assign(const IbLft& other) { table_ = other.table_; }
  bool operator==(const IbLft& other) const { return table_ == other.table_; }
  size_t memoryBytes() const { return table_.capacity() + row_.capacity() * sizeof(size_t); }

 private:
  const Topology& topo_;
  std::vector<size_t> row_;  // per node: offset of its row (hosts: 0)
  std::vector<uint8_t> table_;
};

}  // namespace fabricsim
