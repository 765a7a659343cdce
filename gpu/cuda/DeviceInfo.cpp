#include "gpu/cuda/DeviceInfo.h"

#include <nccl.h>
#include <unistd.h>

#include "gpu/common/HostInfo.h"
#include "gpu/cuda/CudaCheck.h"

namespace fabricsim::gpu {
namespace {

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
    cudaGetLastError();  // clear: an attribute this runtime does not know is not an error of ours
    return -1;
  }
  return v;
}

std::string cudaVersionString(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

nlohmann::json DeviceInfo::describe(int device) {
  cudaDeviceProp p{};
  FABRICSIM_CUDA(cudaGetDeviceProperties(&p, device));
  char bus[32] = {};
  cudaDeviceGetPCIBusId(bus, sizeof bus, device);
  return {{"device", device},
          {"name", p.name},
          {"pci_bus_id", bus},
          {"memory_bytes", p.totalGlobalMem},
          {"sm_count", p.multiProcessorCount},
          {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"clock_khz", attribute(cudaDevAttrClockRate, device)},
          {"memory_clock_khz", attribute(cudaDevAttrMemoryClockRate, device)},
          {"memory_bus_width_bits", attribute(cudaDevAttrGlobalMemoryBusWidth, device)},
          {"l2_bytes", p.l2CacheSize}};
}

std::string DeviceInfo::name(int device) {
  cudaDeviceProp p{};
  FABRICSIM_CUDA(cudaGetDeviceProperties(&p, device));
  return p.name;
}

nlohmann::json DeviceInfo::versions(bool withNccl) {
  int runtime = 0, driver = 0;
  FABRICSIM_CUDA(cudaRuntimeGetVersion(&runtime));
  FABRICSIM_CUDA(cudaDriverGetVersion(&driver));
  nlohmann::json j = {{"cuda_runtime_version", cudaVersionString(runtime)},
                      {"cuda_driver_version", cudaVersionString(driver)}};
  if (withNccl) {
    int v = 0;
    FABRICSIM_NCCL(ncclGetVersion(&v));
    j["nccl_version"] =
        std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
  }
  const auto drv = HostInfo::nvidiaDriverVersion();
  j["nvidia_driver"] = drv ? nlohmann::json(*drv) : nlohmann::json(nullptr);
  return j;
}

RankDevice DeviceInfo::rankDevice(int rank, int device) {
  cudaDeviceProp p{};
  FABRICSIM_CUDA(cudaGetDeviceProperties(&p, device));
  RankDevice d;
  d.rank = rank;
  d.pid = static_cast<int>(getpid());
  d.host = HostInfo::hostname();
  d.device = device;
  d.pciBusId = p.pciBusID;
  d.name = p.name;
  return d;
}

}  // namespace fabricsim::gpu
