#include "sim/calibrate/ComputeFit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/calibrate/HarnessJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

/// The class of a harness GEMM by its name: the attention products, or the layer's GEMMs.
std::optional<std::string> classOf(const std::string& name) {
  if (name == "attn_scores" || name == "attn_values") return "attention";
  if (name == "qkv" || name == "attn_proj" || name == "mlp_up" || name == "mlp_down") return "gemm";
  return std::nullopt;
}

}  // namespace

ComputeFit::Result ComputeFit::fitFile(const std::string& path, double peakFlops) {
  return fit(readInputFile(path), path, peakFlops);
}

ComputeFit::Result ComputeFit::fit(const std::string& text, const std::string& file, double peakFlops) {
  const nlohmann::json j = HarnessJson::parse(text, file);
  HarnessJson::require(
      j, text, file, kHarnessTool, kHarnessSchema, "compute result", "fabricsim-gpu-collectives",
      std::string("expected the gpu/ harness's compute result, found tool "
                  "'fabricsim-gpu-collectives' (a collective sweep: give it as a measurement)"));
  auto lineOf = [&](const std::string& key) { return HarnessJson::lineOf(text, key); };
  if (!j.contains("gemms") || !j["gemms"].is_array())
    throw InputError(file, lineOf("gemms"), 0, "gemms",
                     "expected a list `gemms` of {name, dtype, flops, time_us}");
  Result res;
  res.peakFlops = peakFlops;
  if (j.contains("peaks") && j["peaks"].is_object() && j["peaks"].contains("bf16_tflops") &&
      j["peaks"]["bf16_tflops"].is_number() && j["peaks"]["bf16_tflops"].get<double>() > 0)
    res.peakFlops = j["peaks"]["bf16_tflops"].get<double>() * 1e12;
  if (j.contains("peaks") && j["peaks"].is_object() && j["peaks"].contains("fp8_tflops") &&
      j["peaks"]["fp8_tflops"].is_number() && j["peaks"]["fp8_tflops"].get<double>() > 0)
    res.peakFp8Flops = j["peaks"]["fp8_tflops"].get<double>() * 1e12;
  std::map<std::string, std::vector<double>> logFraction;
  std::vector<double> fp8LogFraction;
  size_t i = 0;
  for (const auto& g : j["gemms"]) {
    const std::string k = "gemms[" + std::to_string(i++) + "]";
    if (!g.is_object() || !g.contains("name") || !g["name"].is_string())
      throw InputError(file, lineOf("gemms"), 0, k, "expected {name, dtype, flops, time_us}");
    const auto cls = classOf(g["name"].get<std::string>());
    if (!cls)
      throw InputError(file, lineOf("gemms"), 0, k + ".name",
                       "expected qkv, attn_proj, mlp_up, mlp_down, attn_scores or attn_values, found '" +
                           g["name"].get<std::string>() + "'");
    const bool fp8 = g.contains("dtype") && g["dtype"] == "fp8";
    if (!g.contains("dtype") || (g["dtype"] != "bf16" && !fp8)) continue;  // fp16: not fitted
    if (fp8 && (*cls != "gemm" || res.peakFp8Flops <= 0)) continue;    // fp8 attention stays bf16
    if (!g.contains("time_us") || g["time_us"].is_null()) continue;    // not run (its note says why)
    auto positive = [&](const char* key) {
      if (!g.contains(key) || !g[key].is_number() || !std::isfinite(g[key].get<double>()) ||
          g[key].get<double>() <= 0)
        throw InputError(file, lineOf("gemms"), 0, k + "." + key, "expected a positive number");
      return g[key].get<double>();
    };
    const double flopsPerSecond = positive("flops") / (positive("time_us") * 1e-6);
    if (fp8)
      fp8LogFraction.push_back(std::log(flopsPerSecond / res.peakFp8Flops));
    else
      logFraction[*cls].push_back(std::log(flopsPerSecond / res.peakFlops));
  }
  if (!fp8LogFraction.empty()) {
    double mean = 0;
    for (double x : fp8LogFraction) mean += x;
    mean /= static_cast<double>(fp8LogFraction.size());
    res.fp8GemmEfficiency = std::exp(mean);
    res.fp8Gemms = static_cast<int>(fp8LogFraction.size());
  }
  if (logFraction.empty())
    throw InputError(file, lineOf("gemms"), 0, "gemms",
                     "expected at least one bf16 GEMM that ran (time_us not null): nothing to fit");
  double sq = 0;
  for (const auto& [cls, v] : logFraction) {
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    for (double x : v) sq += (x - mean) * (x - mean);
    res.gemms += static_cast<int>(v.size());
    (cls == "gemm" ? res.gemmEfficiency : res.unfusedAttentionEfficiency) = std::exp(mean);
  }
  res.rmsLogTime = std::sqrt(sq / res.gemms);
  if (j.contains("memory") && j["memory"].is_array())
    for (const auto& m : j["memory"])
      if (m.is_object() && (m.value("name", "") == "memcpy_d2d" || m.value("name", "") == "copy_kernel") &&
          m.contains("hbm_GBps") && m["hbm_GBps"].is_number() && m["hbm_GBps"].get<double>() > 0)
        res.hbmBytesPerSecond =
            std::max(res.hbmBytesPerSecond.value_or(0.0), m["hbm_GBps"].get<double>() * 1e9);
  return res;
}

}  // namespace fabricsim
