#include "sim/workload/ComputeModel.h"

#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {

ComputeModel::ComputeModel(const GpuSpec& gpu) : gpu_(gpu) {
  SIM_CHECK(gpu_.peakFlops > 0 && gpu_.hbmBytesPerSecond > 0, "GPU peak and HBM bandwidth must be positive");
  SIM_CHECK(gpu_.gemmEfficiency > 0 && gpu_.gemmEfficiency <= 1, "GEMM efficiency must be in (0, 1]");
  SIM_CHECK(gpu_.attentionEfficiency > 0 && gpu_.attentionEfficiency <= 1,
            "attention efficiency must be in (0, 1]");
}

Time ComputeModel::fromSeconds(double seconds) {
  SIM_CHECK(seconds >= 0 && seconds < 9.2e6, "compute time out of range");
  return Time::ps(std::llround(seconds * 1e12));
}

Time ComputeModel::computeTime(const Flops& flops) const {
  const double seconds = flops.gemm / (gpu_.peakFlops * gpu_.gemmEfficiency) +
                         flops.attention / (gpu_.peakFlops * gpu_.attentionEfficiency);
  return fromSeconds(seconds);
}

Time ComputeModel::memoryTime(double bytes) const {
  return fromSeconds(bytes / gpu_.hbmBytesPerSecond);
}

Time ComputeModel::optimizerTime(int64_t params) const {
  return memoryTime(static_cast<double>(params) * kAdamBytesPerParam);
}

}  // namespace fabricsim
