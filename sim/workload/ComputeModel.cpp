#include "sim/workload/ComputeModel.h"

#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {

ComputeModel::ComputeModel(const GpuSpec& gpu, bool fp8Gemms) : gpu_(gpu), fp8_(fp8Gemms) {
  SIM_CHECK(gpu_.peakFlops > 0 && gpu_.hbmBytesPerSecond > 0, "GPU peak and HBM bandwidth must be positive");
  SIM_CHECK(gpu_.gemmEfficiency > 0 && gpu_.gemmEfficiency <= 1, "GEMM efficiency must be in (0, 1]");
  SIM_CHECK(gpu_.attentionEfficiency > 0 && gpu_.attentionEfficiency <= 1,
            "attention efficiency must be in (0, 1]");
  SIM_CHECK(!fp8_ || (gpu_.peakFp8Flops > 0 && gpu_.fp8GemmEfficiency > 0 && gpu_.fp8GemmEfficiency <= 1),
            "fp8 peak must be positive and fp8 GEMM efficiency in (0, 1]");
  SIM_CHECK(gpu_.memoryEfficiency > 0 && gpu_.memoryEfficiency <= 1, "memory efficiency must be in (0, 1]");
  SIM_CHECK(gpu_.inStepRate > 0 && gpu_.inStepRate <= 1, "in-step rate must be in (0, 1]");
}

Time ComputeModel::fromSeconds(double seconds) {
  SIM_CHECK(seconds >= 0, "negative compute time");
  // A kernel longer than 106 days (the picosecond clock's range is 107) is no job's: the
  // workload's sizes are wrong, which is the input's fault.
  if (!(seconds < 9.2e6))
    throw InputError("", 0, 0, "model",
                     "a compute kernel of " + std::to_string(seconds) +
                         " s (over 106 days): expected model and batch sizes of a real job");
  return Time::ps(std::llround(seconds * 1e12));
}

double ComputeModel::seconds(const Flops& flops) const {
  const double gemmRate = fp8_ ? gpu_.peakFp8Flops * gpu_.fp8GemmEfficiency : gpu_.peakFlops * gpu_.gemmEfficiency;
  return (flops.gemm / gemmRate + flops.attention / (gpu_.peakFlops * gpu_.attentionEfficiency)) /
         gpu_.inStepRate;
}

Time ComputeModel::computeTime(const Flops& flops) const {
  return fromSeconds(seconds(flops));
}

Time ComputeModel::computeTime(const Flops& flops, double memoryBytes) const {
  return fromSeconds(seconds(flops) + memoryBytes / (gpu_.hbmBytesPerSecond * gpu_.memoryEfficiency));
}

Time ComputeModel::memoryTime(double bytes) const {
  return fromSeconds(bytes / (gpu_.hbmBytesPerSecond * gpu_.memoryEfficiency));
}

Time ComputeModel::optimizerTime(int64_t params) const {
  return memoryTime(static_cast<double>(params) * kAdamBytesPerParam);
}

}  // namespace fabricsim
