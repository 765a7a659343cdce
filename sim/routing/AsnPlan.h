// AsnPlan: the BGP autonomous-system number of every switch of a Clos fabric.
//
// Models: the two numbering schemes of BgpSpec::asnScheme, with 4-byte private ASNs
// (RFC 6996: 4200000000 + n, n counted from 0 in node order of first use):
//   rfc7938  RFC 7938 section 5.2: every leaf (tier 1: leaf-spine leaf, fat-tree edge) its own
//            ASN; the tier-2 switches of one pod share one ASN (leaf-spine: all spines of a
//            plane, keyed by the switch's plane; fat-tree: agg-<pod>-*, keyed by (plane, pod));
//            the tier-3 cores of one plane share one ASN (rail-optimized fabrics with shared
//            spines or cores have plane -1 there, so the shared tier is one ASN).
//            Switches of one tier that share an ASN never peer with each other in a Clos, so
//            AS_PATH loop prevention is what rejects valley paths such as leaf -> spine ->
//            leaf -> spine: the second spine hop repeats the spine ASN.
//   unique   every switch its own ASN: valley paths are loop-free in AS terms and are
//            learned, but they are longer than the up-down paths and never best while an
//            up-down path exists.
// Leaves out: ASN reuse across separate fabrics (RFC 7938 section 5.2.2), 2-byte ASNs.
// Units: none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/topology/Topology.h"

namespace fabricsim {

using Asn = uint32_t;

class AsnPlan {
 public:
  static constexpr Asn kPrivateBase = 4200000000u;

  /// Numbers every switch of `topo` under `scheme` ("rfc7938" or "unique"; anything else is
  /// a bug in the caller and fails a SIM_CHECK).
  AsnPlan(const Topology& topo, const std::string& scheme);

  /// ASN of switch `sw` (kInvalid for hosts, which do not speak BGP).
  Asn asnOf(NodeId sw) const { return asn_[sw]; }
  /// Number of distinct ASNs in the plan.
  uint32_t distinctAsns() const { return count_; }

 private:
  std::vector<Asn> asn_;
  uint32_t count_ = 0;
};

}  // namespace fabricsim
