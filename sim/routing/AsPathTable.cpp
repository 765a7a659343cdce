#include "sim/routing/AsPathTable.h"

#include "sim/core/Error.h"
#include "sim/routing/FlowHash.h"

namespace fabricsim {

AsPathTable::AsPathTable() : nodes_(2, Node{0, 0, 0}), slots_(1024, 0) {}

uint64_t AsPathTable::mix(Asn head, uint32_t tail) {
  return FlowHash::mix((static_cast<uint64_t>(head) << 32) | tail);
}

AsPathTable::Ref AsPathTable::prepend(Asn head, Ref tail) {
  SIM_DCHECK(tail != kNone, "prepending to no path");
  const uint32_t tailId = tail >> kLengthBits;
  const size_t mask = slots_.size() - 1;
  size_t i = mix(head, tailId) & mask;
  while (slots_[i] != 0) {
    const Node& n = nodes_[slots_[i]];
    if (n.head == head && n.tail == tailId) break;
    i = (i + 1) & mask;
  }
  uint32_t id = slots_[i];
  if (id == 0) {
    id = static_cast<uint32_t>(nodes_.size());
    SIM_CHECK(id < (1u << (32 - kLengthBits)), "more than 2^27 distinct AS paths");
    nodes_.push_back(Node{head, tailId, nodes_[tailId].length + 1});
    slots_[i] = id;
    if (nodes_.size() * 2 > slots_.size()) grow();
  }
  const uint32_t len = nodes_[id].length;
  return (id << kLengthBits) | (len < kLengthMask ? len : kLengthMask);
}

void AsPathTable::grow() {
  std::vector<uint32_t> slots(slots_.size() * 2, 0);
  const size_t mask = slots.size() - 1;
  for (uint32_t id = 2; id < nodes_.size(); ++id) {
    size_t i = mix(nodes_[id].head, nodes_[id].tail) & mask;
    while (slots[i] != 0) i = (i + 1) & mask;
    slots[i] = id;
  }
  slots_.swap(slots);
}

bool AsPathTable::contains(Ref r, Asn asn) const {
  for (uint32_t id = r >> kLengthBits; id > 1; id = nodes_[id].tail)
    if (nodes_[id].head == asn) return true;
  return false;
}

std::vector<Asn> AsPathTable::expand(Ref r) const {
  std::vector<Asn> out;
  for (uint32_t id = r >> kLengthBits; id > 1; id = nodes_[id].tail) out.push_back(nodes_[id].head);
  return out;
}

size_t AsPathTable::memoryBytes() const {
  return nodes_.capacity() * sizeof(Node) + slots_.capacity() * sizeof(uint32_t);
}

}  // namespace fabricsim
