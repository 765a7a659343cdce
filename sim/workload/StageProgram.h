// StageProgram: the program one pipeline stage of a training job runs (see
// docs/training-model.md): Megatron's 1F1B or interleaved order of forward and backward passes,
// per layer the TP collectives around each block (blocking, or beside it with TP communication
// overlap), ring attention with context parallelism, the MoE all-to-alls with experts, the
// pipeline sends and receives, the gradient buckets, the tied embedding's all-reduce, the
// optimizer step and the parameter all-gathers.
// Units: Bytes, Time (ps).
#pragma once

#include "sim/workload/JobTrace.h"
#include "sim/workload/TrainingPlan.h"

namespace fabricsim {

/// The program of pipeline stage `stage` (0 .. plan.pp - 1).
Program buildStageProgram(const TrainingPlan& plan, int stage);

}  // namespace fabricsim
