#include "gpu/common/GpuTelemetry.h"

#include <dlfcn.h>

namespace fabricsim::gpu {

// NVML's C interface as its API reference documents it: every call returns an int status
// (0 = success), devices are opaque handles, clock types are GRAPHICS 0, SM 1, MEM 2, the GPU
// temperature sensor is 0, power is in milliwatts.
struct GpuTelemetry::Api {
  using Init = int (*)();
  using Shutdown = int (*)();
  using ErrorString = const char* (*)(int);
  using HandleByPci = int (*)(const char*, void**);
  using Clock = int (*)(void*, int, unsigned*);
  using Milliwatts = int (*)(void*, unsigned*);
  using Temperature = int (*)(void*, int, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);
  Init init = nullptr;
  Shutdown shutdown = nullptr;
  ErrorString errorString = nullptr;
  HandleByPci handleByPci = nullptr;
  Clock clock = nullptr, maxClock = nullptr;
  Milliwatts power = nullptr, powerLimit = nullptr;
  Temperature temperature = nullptr;
  Reasons reasons = nullptr;
};

namespace {

constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

GpuTelemetry::GpuTelemetry(const std::string& pciBusId, const std::string& library) {
  lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* why = dlerror();
    note_ = "NVML not loaded (" + library + "): " + (why ? why : "unknown error");
    return;
  }
  api_ = std::make_unique<Api>();
  api_->init = symbol<Api::Init>(lib_, "nvmlInit_v2");
  api_->shutdown = symbol<Api::Shutdown>(lib_, "nvmlShutdown");
  api_->errorString = symbol<Api::ErrorString>(lib_, "nvmlErrorString");
  api_->handleByPci = symbol<Api::HandleByPci>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  api_->clock = symbol<Api::Clock>(lib_, "nvmlDeviceGetClockInfo");
  api_->maxClock = symbol<Api::Clock>(lib_, "nvmlDeviceGetMaxClockInfo");
  api_->power = symbol<Api::Milliwatts>(lib_, "nvmlDeviceGetPowerUsage");
  api_->powerLimit = symbol<Api::Milliwatts>(lib_, "nvmlDeviceGetEnforcedPowerLimit");
  api_->temperature = symbol<Api::Temperature>(lib_, "nvmlDeviceGetTemperature");
  api_->reasons = symbol<Api::Reasons>(lib_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!api_->reasons) api_->reasons = symbol<Api::Reasons>(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (!api_->init || !api_->shutdown || !api_->handleByPci || !api_->clock) {
    note_ = "NVML (" + library +
            ") lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetClockInfo";
    return;
  }
  if (const int rc = api_->init(); rc != 0) {
    note_ =
        std::string("nvmlInit failed: ") + (api_->errorString ? api_->errorString(rc) : std::to_string(rc));
    api_->shutdown = nullptr;  // nothing to shut down
    return;
  }
  if (const int rc = api_->handleByPci(pciBusId.c_str(), &device_); rc != 0) {
    device_ = nullptr;
    note_ = "NVML has no device at PCI bus id " + pciBusId + ": " +
            (api_->errorString ? api_->errorString(rc) : std::to_string(rc));
  }
}

GpuTelemetry::~GpuTelemetry() {
  if (api_ && api_->shutdown) api_->shutdown();
  if (lib_) dlclose(lib_);
}

std::optional<GpuTelemetry::Sample> GpuTelemetry::sample() const {
  if (!available()) return std::nullopt;
  Sample s;
  if (api_->clock(device_, kClockSm, &s.smMHz) != 0) return std::nullopt;
  api_->clock(device_, kClockMem, &s.memMHz);
  unsigned mw = 0;
  if (api_->power && api_->power(device_, &mw) == 0) s.powerW = mw / 1000.0;
  if (api_->temperature) api_->temperature(device_, kTemperatureGpu, &s.temperatureC);
  unsigned long long bits = 0;
  if (api_->reasons && api_->reasons(device_, &bits) == 0) s.reasons = bits;
  return s;
}

std::vector<std::string> GpuTelemetry::reasonNames(std::uint64_t reasons) {
  static const char* const kNames[] = {"gpu_idle",
                                       "applications_clocks_setting",
                                       "sw_power_cap",
                                       "hw_slowdown",
                                       "sync_boost",
                                       "sw_thermal_slowdown",
                                       "hw_thermal_slowdown",
                                       "hw_power_brake_slowdown",
                                       "display_clock_setting"};
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    if (!(reasons & (std::uint64_t{1} << bit))) continue;
    out.push_back(bit < static_cast<int>(std::size(kNames)) ? kNames[bit] : "bit_" + std::to_string(bit));
  }
  return out;
}

nlohmann::json GpuTelemetry::toJson(const Sample& s) {
  return {{"sm_mhz", s.smMHz},
          {"mem_mhz", s.memMHz},
          {"power_w", s.powerW},
          {"temperature_c", s.temperatureC},
          {"reasons", reasonNames(s.reasons)}};
}

nlohmann::json GpuTelemetry::sampleJson() const {
  const auto s = sample();
  return s ? toJson(*s) : nlohmann::json(nullptr);
}

nlohmann::json GpuTelemetry::describe() const {
  if (!available()) return {{"available", false}, {"note", note_}};
  nlohmann::json j = {{"available", true}};
  unsigned v = 0;
  if (api_->maxClock && api_->maxClock(device_, kClockSm, &v) == 0) j["max_sm_mhz"] = v;
  if (api_->maxClock && api_->maxClock(device_, kClockMem, &v) == 0) j["max_mem_mhz"] = v;
  if (api_->powerLimit && api_->powerLimit(device_, &v) == 0) j["power_limit_w"] = v / 1000.0;
  j["at_start"] = sampleJson();
  return j;
}

}  // namespace fabricsim::gpu
