// EcmpSlots: the hash table behind one ECMP group, as switch ASICs lay it out: the hash picks
// a slot uniformly, and the slot names the member. An unweighted group has one slot per member;
// a weighted group (WCMP) repeats each member in proportion to its weight; a resilient group has
// a fixed number of buckets, and a change of members moves as few buckets as it can.
//
// Models: integer shares by the largest-remainder method; weight reduction by the greatest
// common divisor (weights 300:400 become 3:4 slots), capped at a table size; the resilient
// rebalance of a bucket table: buckets of a member that left, and the excess of members above
// their new share, are the only ones reassigned. Weights are in any unit (EcmpFib passes bit/s).
// Leaves out: ASIC-specific bucket ageing (idle-timer based migration), table-size quantisation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/topology/Topology.h"

namespace fabricsim {

class EcmpSlots {
 public:
  /// Shares of `total` slots proportional to `weights` (largest remainder). Ties of the
  /// remainder go first to members with more slots in `current` (when given: the bucket counts
  /// they hold now, so that a rebalance moves fewer buckets), then to the lower index.
  static void apportion(std::span<const uint64_t> weights, uint32_t total, std::span<const uint32_t> current,
                        std::vector<uint32_t>& out);
  /// The smallest integer slot counts in the ratio of `weights` (divided by their greatest common
  /// divisor); when they add up to more than `maxTotal`, `maxTotal` slots apportioned, every
  /// member with a positive weight keeping at least one.
  static void reduce(std::span<const uint64_t> weights, uint32_t maxTotal, std::vector<uint32_t>& out);
  /// Resilient rebalance. `old`: the current bucket table (kInvalid: unassigned), `members`:
  /// the new members (sorted), `targets`: the bucket count each should hold (summing to
  /// old.size()). A bucket keeps its member when the member stays and is within its target
  /// (its lowest-index buckets first); every other bucket goes, in index order, to the members
  /// below their target, in member order.
  static void rebalance(std::span<const PortId> old, std::span<const PortId> members,
                        std::span<const uint32_t> targets, std::vector<PortId>& out);
};

}  // namespace fabricsim
