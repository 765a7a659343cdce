// ComputeModel: how long a GPU takes for a piece of transformer work.
//
// Models: a roofline-free throughput model: GEMM FLOPs run at peak * gemmEfficiency (with fp8
// GEMMs, at the fp8 peak * fp8GemmEfficiency), attention FLOPs at the bf16 peak *
// attentionEfficiency; memory-bound steps (the optimizer, embedding lookups, element-wise
// kernels) move their bytes at the HBM bandwidth * memoryEfficiency. GEMM and attention time is
// divided by GpuSpec::inStepRate (the fraction of the isolated kernels' rate kept inside a
// step). The optimizer step is mixed-precision Adam as in Megatron: per parameter it reads the
// fp32 gradient, master weight, first and second moments (16 bytes) and writes master weight and
// moments (12 bytes) plus the bf16 parameter copy (2 bytes): kAdamBytesPerParam = 30.
// Leaves out: kernel launch overheads, wave quantisation, shape-dependent efficiency (use a
// calibration file), the gradient-clipping norm. Contention with communication kernels is
// the executor's (GpuSpec::commSmShare).
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
  explicit ComputeModel(const GpuSpec& gpu, bool fp8Gemms = false);

  /// (gemmFlops / (peak * gemmEfficiency) (fp8: peakFp8 * fp8GemmEfficiency) +
  /// attentionFlops / (peak * attentionEfficiency)) / inStepRate.
  Time computeTime(const Flops& flops) const;
  /// The same plus `memoryBytes` at the memory rate, as one duration (rounded once).
  Time computeTime(const Flops& flops, double memoryBytes) const;
  /// bytes / (hbmBytesPerSecond * memoryEfficiency).
  Time memoryTime(double bytes) const;
  /// One Adam step over `params` parameters held by this GPU (already divided by tp, and by
  /// dp with the distributed optimizer): params * kAdamBytesPerParam at the memory rate.
  Time optimizerTime(int64_t params) const;

 private:
  static Time fromSeconds(double seconds);
  double seconds(const Flops& flops) const;
  GpuSpec gpu_;
  bool fp8_;
};

}  // namespace fabricsim
