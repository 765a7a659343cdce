// DeviceInfo: what the CUDA runtime and NCCL say about this process's GPUs and libraries.
//
// Models: per device its name, PCI bus id, memory, SM count, compute capability and clocks; the
// CUDA runtime and driver API versions, the NCCL library version, and the NVIDIA kernel driver
// version (HostInfo). Also the nccl-tests "# Using devices" line of each rank.
// Leaves out: clocks under load, power and temperature (GpuTelemetry reads them through NVML),
// NVLink state.
// Units: bytes (memory), kHz (clocks), as the CUDA runtime reports them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gpu/common/CollectiveResult.h"

namespace fabricsim::gpu {

class DeviceInfo {
 public:
  /// Properties of CUDA device `device`.
  static nlohmann::json describe(int device);
  /// The device's name ("NVIDIA H200").
  static std::string name(int device);
  /// cuda_runtime_version, cuda_driver_version ("13.0"), nccl_version ("2.28.9", when `withNccl`),
  /// nvidia_driver ("580.65.06" or null).
  static nlohmann::json versions(bool withNccl);
  /// nccl-tests' device line data for `rank` on `device`.
  static RankDevice rankDevice(int rank, int device);
};

}  // namespace fabricsim::gpu
