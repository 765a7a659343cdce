// The training step the closed-form tests of the trace builder are written for. The workload
// defaults are Megatron-LM's (causal, tied embeddings, fp32 gradient reduction, no grad-reduce
// overlap, element-wise kernels); these tests set the older step explicitly so their formulas
// stay those of full-square attention, untied embeddings, bf16 gradients reduced under the
// backward and no element-wise kernels.
#pragma once

#include "sim/config/WorkloadSpec.h"

namespace fabricsim::testsupport {

inline void pinClosedFormStep(TrainingSpec& spec) {
  spec.model.causal = false;
  spec.model.tiedEmbeddings = false;
  spec.gradReduceBytes = 2;
  spec.gradReduceDtype = "bf16";
  spec.parallelism.overlapGradReduce = true;
  spec.elementwise = false;
}

}  // namespace fabricsim::testsupport
