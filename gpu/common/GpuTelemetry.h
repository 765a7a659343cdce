// GpuTelemetry: what the GPU's clocks, power and temperature were while the harness timed it,
// read through NVML (libnvidia-ml.so.1, loaded at run time so the harness builds and runs
// without it).
//
// Models: per sample the SM and memory clocks (MHz), board power (W), GPU temperature (C) and the
// clock-event ("throttle") reasons NVML reports, decoded to names; once per run the maximum SM
// and memory clocks and the enforced power limit. A GEMM's efficiency is only comparable with
// another's (or with a datasheet peak, which assumes the maximum boost clock) when the SM clock
// under load is known: a power- or thermal-capped GPU shows lower efficiency for a reason that is
// not the kernel's.
// Leaves out: sampling during a kernel (a sample is taken just after a timed loop, while the
// clocks are still at their loaded values), NVLink and PCIe counters, ECC and MIG state.
// Units: MHz, W, degrees Celsius.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim::gpu {

class GpuTelemetry {
 public:
  struct Sample {
    unsigned smMHz = 0;
    unsigned memMHz = 0;
    double powerW = 0;
    unsigned temperatureC = 0;
    std::uint64_t reasons = 0;  ///< NVML clocks-event reason bits
  };

  /// Loads `library` (default NVML's soname) and opens the device whose PCI bus id is `pciBusId`
  /// ("0000:19:00.0", as cudaDeviceGetPCIBusId gives it). Never throws: when NVML or the device
  /// is missing, available() is false and note() says why.
  explicit GpuTelemetry(const std::string& pciBusId, const std::string& library = "libnvidia-ml.so.1");
  ~GpuTelemetry();
  GpuTelemetry(const GpuTelemetry&) = delete;
  GpuTelemetry& operator=(const GpuTelemetry&) = delete;

  bool available() const { return device_ != nullptr; }
  const std::string& note() const { return note_; }

  /// The current state; nullopt when unavailable or NVML failed to answer.
  std::optional<Sample> sample() const;
  /// A sample as JSON ({sm_mhz, mem_mhz, power_w, temperature_c, reasons: [names]}); null when
  /// there is none.
  nlohmann::json sampleJson() const;
  /// Maximum SM and memory clocks and the enforced power limit, plus a sample at the time of the
  /// call; {"available": false, "note": ...} when NVML is missing.
  nlohmann::json describe() const;

  /// Names of the set reason bits, in bit order ("gpu_idle", "sw_power_cap", "hw_slowdown",
  /// "sw_thermal_slowdown", ...); an unnamed bit reads "bit_N".
  static std::vector<std::string> reasonNames(std::uint64_t reasons);
  static nlohmann::json toJson(const Sample& s);

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;  ///< nvmlDevice_t
  std::string note_;
  struct Api;
  std::unique_ptr<Api> api_;
};

}  // namespace fabricsim::gpu
