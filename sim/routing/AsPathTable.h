// AsPathTable: every distinct BGP AS_PATH of a run, stored once and named by a 32-bit reference.
//
// Models: AS_PATHs as BGP builds them, by prepending one ASN to a path received earlier. A path
// is a node (head ASN, tail path), hash-consed on (head, tail): equal paths get equal references
// however they were built, so comparing two paths is comparing two integers, and a RIB row
// holds 4 bytes instead of a vector. A reference packs the node id (27 bits) and the path's
// length (5 bits; 31 means "31 or more: ask length()"), so the decision process compares
// lengths without reading the table. Reference 0 is "no path" (withdrawn, unreachable);
// kEmpty is the empty AS_PATH a leaf holds for its own prefix.
// Leaves out: AS_SET segments, confederations, removal of paths no RIB uses any more (the table
// only grows: it holds every path the run ever built; a Clos fabric builds few).
// Units: none (ASNs, lengths in ASNs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/routing/AsnPlan.h"

namespace fabricsim {

class AsPathTable {
 public:
  using Ref = uint32_t;
  static constexpr Ref kNone = 0;
  static constexpr uint32_t kLengthBits = 5;
  static constexpr uint32_t kLengthMask = (1u << kLengthBits) - 1;
  /// The empty AS_PATH (node 1, length 0).
  static constexpr Ref kEmpty = 1u << kLengthBits;

  AsPathTable();

  /// The path `head` followed by the path `tail` (tail may be kEmpty, not kNone).
  Ref prepend(Asn head, Ref tail);
  /// Number of ASNs on the path.
  uint32_t length(Ref r) const {
    const uint32_t code = r & kLengthMask;
    return code < kLengthMask ? code : nodes_[r >> kLengthBits].length;
  }
  /// True when `asn` occurs on the path (RFC 4271 section 9.1.2 loop check).
  bool contains(Ref r, Asn asn) const;
  /// The path as a list, first hop first (for tests and messages).
  std::vector<Asn> expand(Ref r) const;
  /// Distinct paths built so far, the empty path included.
  size_t size() const { return nodes_.size() - 1; }
  size_t memoryBytes() const;

 private:
  struct Node {
    Asn head;
    uint32_t tail;  // node id of the tail
    uint32_t length;
  };
  static uint64_t mix(Asn head, uint32_t tail);
  void grow();

  std::vector<Node> nodes_;      // node 0 unused (kNone), node 1 the empty path
  std::vector<uint32_t> slots_;  // open addressing over node ids (0 = free), power-of-two size
};

}  // namespace fabricsim
