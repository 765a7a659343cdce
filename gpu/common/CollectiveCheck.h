// CollectiveCheck: the rank-dependent data a collective is fed and the result each rank must get.
//
// Models: every rank fills its send buffer with a deterministic pattern of small integers that
// every data type holds exactly, and after the call counts the received elements that differ
// from the expected ones (nccl-tests' "#wrong" column). For reductions the pattern is
//   v(r, i) = ((7 r + h(i)) mod 5) - 2   (plus 2 for unsigned types),   h = a hash of i and the seed,
// so any 5 consecutive ranks sum to a constant and the expected sum, average, max and min over n
// ranks cost at most 5 terms per element whatever n is; prod uses 2 on one rank per element and 1
// elsewhere, so every product is 2. Other collectives move v(r, i) = a hash of (r, i, seed) in
// [-100, 100] ([0, 200] unsigned), so data landing at a wrong offset or from a wrong rank is caught.
// Floating-point sums are exact while 2n fits the significand; beyond that, and for avg (NCCL
// pre-multiplies by 1/n), a tolerance of n ulps of the largest partial sum is allowed.
// Leaves out: where the buffers live (the caller copies to and from the GPU) and timing.
// Units: elements; values as doubles.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/common/Collective.h"
#include "gpu/common/DataType.h"

namespace fabricsim::gpu {

class CollectiveCheck {
 public:
  /// `ranks` >= 1, `root` in [0, ranks) (used by broadcast only).
  CollectiveCheck(Collective collective, DataType type, ReduceOp op, int ranks, int root, uint64_t seed);

  /// Value of element `i` of rank `rank`'s send buffer.
  double inputValue(int rank, size_t i) const;
  /// Writes elements [0, count) of `rank`'s send buffer to `dst` (count * dataTypeSize bytes).
  void fillInput(int rank, size_t count, void* dst) const;
  /// Expected value of element `i` of `rank`'s receive buffer (already rounded to the data type).
  double expected(int rank, size_t i, const CollectiveCounts& counts) const;
  /// Number of the counts.recvCount elements at `received` that differ from expected(rank, i, counts)
  /// by more than tolerance() (a NaN always counts).
  size_t countWrong(int rank, const CollectiveCounts& counts, const void* received) const;
  /// Largest accepted absolute difference (0 where the result is exact).
  double tolerance() const { return tolerance_; }

 private:
  double reduced(size_t i) const;  // reduction over all ranks of element i
  uint64_t elementHash(size_t i) const;

  Collective collective_;
  DataType type_;
  ReduceOp op_;
  int ranks_;
  int root_;
  uint64_t seed_;
  double tolerance_ = 0;
};

}  // namespace fabricsim::gpu
