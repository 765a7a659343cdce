#include "sim/config/GpuPresets.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace fabricsim {
namespace {

GpuSpec gpu(const char* name, double peak, double hbm) {
  GpuSpec g;
  g.preset = name;
  g.peakFlops = peak;
  g.hbmBytesPerSecond = hbm;
  return g;
}

const std::vector<GpuSpec>& presets() {
  static const std::vector<GpuSpec> all = {
      gpu("h100-sxm", 989e12, 3.35e12),
      gpu("h200-sxm", 989e12, 4.8e12),
  };
  return all;
}

}  // namespace

std::optional<GpuSpec> gpuPreset(std::string_view name) {
  for (const auto& g : presets())
    if (g.preset == name) return g;
  return std::nullopt;
}

const std::vector<std::string>& gpuPresetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& g : presets()) out.push_back(g.preset);
    return out;
  }();
  return names;
}

Parsed<double> parseFlops(std::string_view text) {
  const std::string s(text);
  const std::string expected =
      "a compute rate with a unit (FLOPS, GFLOPS, TFLOPS or PFLOPS), e.g. '989TFLOPS'";
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str()) return {std::nullopt, "expected " + expected + ", found '" + s + "'"};
  const std::string unit(end);
  double scale = 0;
  if (unit == "FLOPS")
    scale = 1;
  else if (unit == "GFLOPS")
    scale = 1e9;
  else if (unit == "TFLOPS")
    scale = 1e12;
  else if (unit == "PFLOPS")
    scale = 1e15;
  if (unit.empty()) return {std::nullopt, "expected " + expected + ", found the bare number '" + s + "'"};
  if (scale == 0)
    return {std::nullopt, "expected " + expected + ", found unit '" + unit + "' in '" + s + "'"};
  if (errno != 0 || !std::isfinite(x) || x <= 0)
    return {std::nullopt, "expected a positive " + expected + ", found '" + s + "'"};
  return {x * scale, ""};
}

}  // namespace fabricsim
