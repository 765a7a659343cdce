#include "gpu/common/GpuPeaks.h"

namespace fabricsim::gpu {

std::optional<PeakRates> datasheetPeaks(std::string_view name) {
  auto has = [&](std::string_view s) { return name.find(s) != std::string_view::npos; };
  auto make = [](double dense16, double fp8, double hbm, const char* model) {
    return PeakRates{dense16, dense16, fp8, hbm, std::string("datasheet:") + model};
  };
  if (has("H200")) return make(989.4, 1978.9, 4800, "H200");
  if (has("H100")) {
    if (has("PCIe")) return make(756.0, 1513.0, 2000, "H100 PCIe");
    if (has("NVL")) return make(835.0, 1671.0, 3900, "H100 NVL");
    return make(989.4, 1978.9, 3350, "H100 SXM");
  }
  return std::nullopt;
}

}  // namespace fabricsim::gpu
