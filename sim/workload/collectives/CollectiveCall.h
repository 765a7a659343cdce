// CollectiveCall: one collective call as a job or nccl-tests issues it.
// Units: Bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Units.h"

namespace fabricsim {

/// Sizes follow nccl-tests: all_reduce and broadcast: the buffer size; all_gather: the total
/// output (N x each rank's input); reduce_scatter: the total input (N x each rank's output);
/// alltoall: each rank's total send buffer; send_recv: what each rank sends.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  std::vector<uint32_t> gpus;  ///< participants; index = rank within the collective
  Bytes bytes = 0;
  uint32_t root = 0;  ///< broadcast: index of the root in `gpus`
};

}  // namespace fabricsim
