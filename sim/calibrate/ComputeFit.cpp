#include "sim/calibrate/ComputeFit.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {

ComputeFit::Result ComputeFit::fitFile(const std::string& path, double peakFlops) {
  return fit(readInputFile(path), path, peakFlops);
}

ComputeFit::Result ComputeFit::fit(const std::string& text, const std::string& file, double peakFlops) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file, 0, 0, "", std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("gemms") || !j["gemms"].is_array() || j["gemms"].empty())
    throw InputError(file, 0, 0, "gemms",
                     "expected a non-empty list `gemms` of {class, m, n, k, time_us, tflops}");
  Result res;
  res.peakFlops = peakFlops;
  if (j.contains("gpu") && j["gpu"].is_object() && j["gpu"].contains("peak_tflops") &&
      j["gpu"]["peak_tflops"].is_number() && j["gpu"]["peak_tflops"].get<double>() > 0)
    res.peakFlops = j["gpu"]["peak_tflops"].get<double>() * 1e12;
  std::map<std::string, std::vector<double>> logFraction;
  size_t i = 0;
  for (const auto& g : j["gemms"]) {
    const std::string k = "gemms[" + std::to_string(i++) + "]";
    if (!g.is_object()) throw InputError(file, 0, 0, k, "expected {class, m, n, k, time_us, tflops}");
    const std::string cls =
        g.contains("class") && g["class"].is_string() ? g["class"].get<std::string>() : "gemm";
    if (cls != "gemm" && cls != "attention")
      throw InputError(file, 0, 0, k + ".class", "expected 'gemm' or 'attention', found '" + cls + "'");
    double flops = 0;
    if (g.contains("tflops") && g["tflops"].is_number()) {
      flops = g["tflops"].get<double>() * 1e12;
    } else {
      auto dim = [&](const char* d) {
        if (!g.contains(d) || !g[d].is_number() || g[d].get<double>() <= 0)
          throw InputError(file, 0, 0, k + "." + d, "expected a positive number (or give `tflops`)");
        return g[d].get<double>();
      };
      const double t = dim("time_us");
      flops = 2 * dim("m") * dim("n") * dim("k") / (t * 1e-6);
    }
    if (!(flops > 0)) throw InputError(file, 0, 0, k + ".tflops", "expected a positive rate");
    logFraction[cls].push_back(std::log(flops / res.peakFlops));
  }
  double sq = 0;
  for (const auto& [cls, v] : logFraction) {
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    for (double x : v) sq += (x - mean) * (x - mean);
    res.gemms += static_cast<int>(v.size());
    (cls == "gemm" ? res.gemmEfficiency : res.attentionEfficiency) = std::exp(mean);
  }
  res.rmsLogTime = std::sqrt(sq / res.gemms);
  if (j.contains("hbm_copy") && j["hbm_copy"].is_object() && j["hbm_copy"].contains("bandwidth_GBps") &&
      j["hbm_copy"]["bandwidth_GBps"].is_number())
    res.hbmBytesPerSecond = j["hbm_copy"]["bandwidth_GBps"].get<double>() * 1e9;
  return res;
}

}  // namespace fabricsim
