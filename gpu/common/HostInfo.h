// HostInfo: what the harness records about the machine it ran on, read without a GPU.
//
// Models: the host name, the NCCL_* environment variables (and CUDA_VISIBLE_DEVICES), the RDMA
// NICs under /sys/class/infiniband (device, firmware, board, per port: state, rate, link layer,
// and the network interfaces bound to the device), and the NVIDIA kernel driver version from
// /proc/driver/nvidia/version. The sysfs and proc roots and the environment are parameters so
// tests run on fake trees.
// Leaves out: GPU properties (DeviceInfo reads them through the CUDA runtime), switches and
// anything that needs root or a vendor tool.
// Units: port rates as the kernel prints them ("400 Gb/sec (4X NDR)") plus the parsed Gb/s.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim::gpu {

class HostInfo {
 public:
  /// gethostname(), or "unknown".
  static std::string hostname();
  /// NCCL_* variables and CUDA_VISIBLE_DEVICES from `envp` (a null-terminated "NAME=value" array;
  /// the process environment when null), as a JSON object name -> value.
  static nlohmann::json ncclEnvironment(char** envp = nullptr);
  /// One JSON object per device under `root` (default /sys/class/infiniband); an empty array when
  /// the directory does not exist.
  static nlohmann::json infinibandNics(const std::filesystem::path& root = "/sys/class/infiniband");
  /// The driver version ("580.65.06") from `path` (default /proc/driver/nvidia/version).
  static std::optional<std::string> nvidiaDriverVersion(
      const std::filesystem::path& path = "/proc/driver/nvidia/version");
  /// Leading number of a sysfs rate string ("400 Gb/sec (4X NDR)" -> 400); nullopt if none.
  static std::optional<double> parseRateGbps(const std::string& rate);
};

}  // namespace fabricsim::gpu
