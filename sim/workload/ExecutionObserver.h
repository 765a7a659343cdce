// ExecutionObserver: told about every operation a job's ranks execute, for timelines.
//
// Models: one span per (rank, operation, iteration): from when the rank issued the operation
// (its stream reached it and its dependencies were met) to when it completed on that rank.
// For a collective the span includes waiting for the other members to arrive.
// Leaves out: the transfers inside a collective (the fabric's flow records have those).
// Units: Time (ps).
#pragma once

#include <cstdint>

#include "sim/core/Time.h"
#include "sim/workload/JobTrace.h"

namespace fabricsim {

class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  /// `program` and `op` index into `trace`; called at the span's end (`end` = now).
  virtual void onSpan(const JobTrace& trace, uint32_t rank, uint32_t program, uint32_t op, int iteration,
                      Time start, Time end) = 0;
};

}  // namespace fabricsim
