// ComputeModel: how long a GPU takes for a piece of transformer work.
//
// Models: a roofline-free throughput model: GEMM FLOPs run at peak * gemmEfficiency, attention
// FLOPs at peak * attentionEfficiency; memory-bound steps (the optimizer, embedding lookups)
// move their bytes at the HBM bandwidth. The optimizer step is mixed-precision Adam as in
// Megatron: per parameter it reads the fp32 gradient, master weight, first and second moments
// (16 bytes) and writes master weight and moments (12 bytes) plus the bf16 parameter copy
// (2 bytes): kAdamBytesPerParam = 30.
// Leaves out: kernel launch overheads, wave quantisation, shape-dependent efficiency (use a
// calibration file), contention with communication kernels, the gradient-clipping norm.
// Units: FLOPs and FLOP/s as double, Bytes, Time (rounded to the nearest picosecond).
#pragma once

#include <cstdint>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Time.h"
#include "sim/core/Units.h"
#include "sim/workload/TransformerModel.h"

namespace fabricsim {

class ComputeModel {
 public:
  /// HBM bytes moved per parameter by one Adam step (see the header comment).
  static constexpr double kAdamBytesPerParam = 30.0;

  /// Requires (SIM_CHECK; callers validate user input) positive peak and bandwidth and
  /// efficiencies in (0, 1].
  explicit ComputeModel(const GpuSpec& gpu);

  /// gemmFlops / (peak * gemmEfficiency) + attentionFlops / (peak * attentionEfficiency).
  Time computeTime(const Flops& flops) const;
  /// bytes / hbmBytesPerSecond.
  Time memoryTime(double bytes) const;
  /// One Adam step over `params` parameters held by this GPU (already divided by tp, and by
  /// dp with the distributed optimizer): params * kAdamBytesPerParam / hbmBytesPerSecond.
  Time optimizerTime(int64_t params) const;

 private:
  static Time fromSeconds(double seconds);
  GpuSpec gpu_;
};

}  // namespace fabricsim
