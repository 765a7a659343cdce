#include "sim/calibrate/KernelFit.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/calibrate/HarnessJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

double geometricMean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

/// A positive finite number at j[key], or nullopt when absent or null (a row that did not run).
std::optional<double> positiveOrNull(const nlohmann::json& j, const char* key, const std::string& text,
                                     const std::string& file, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number() || !std::isfinite(j[key].get<double>()) || j[key].get<double>() <= 0)
    throw InputError(file, HarnessJson::lineOf(text, key), 0, where + "." + key,
                     "expected a positive number");
  return j[key].get<double>();
}

const nlohmann::json& listAt(const nlohmann::json& j, const char* key, const std::string& text,
                             const std::string& file, const char* what) {
  if (!j.contains(key) || !j[key].is_array())
    throw InputError(file, HarnessJson::lineOf(text, key), 0, key,
                     std::string("expected a list `") + key + "` of " + what);
  return j[key];
}

}  // namespace

KernelFit::Attention KernelFit::fitAttentionFile(const std::string& path, double peakFlops,
                                                 double hbmBytesPerSecond) {
  return fitAttention(readInputFile(path), path, peakFlops, hbmBytesPerSecond);
}

KernelFit::Attention KernelFit::fitAttention(const std::string& text, const std::string& file,
                                             double peakFlops, double hbmBytesPerSecond) {
  const nlohmann::json j = HarnessJson::parse(text, file);
  HarnessJson::require(j, text, file, kAttentionTool, kSchema, "attention result", "fabricsim-gpu-compute",
                       "expected the gpu/ harness's attention result, found its compute result (give it "
                       "with --compute)");
  Attention res;
  double sms = 132;  // H100 SXM's, when the result does not say
  if (j.contains("system") && j["system"].is_object() && j["system"].contains("sm_count") &&
      j["system"]["sm_count"].is_number() && j["system"]["sm_count"].get<double>() > 0)
    sms = j["system"]["sm_count"].get<double>();
  std::vector<double> cudnn, flash;
  size_t i = 0;
  for (const auto& row : listAt(j, "attention", text, file, "{backend, causal, flops_forward_causal, ...}")) {
    const std::string where = "attention[" + std::to_string(i++) + "]";
    if (!row.is_object() || !row.contains("backend") || !row["backend"].is_string())
      throw InputError(file, HarnessJson::lineOf(text, "attention"), 0, where, "expected {backend, ...}");
    if (row.contains("error")) continue;  // a backend this build or GPU lacks
    if (!row.value("causal", false)) continue;
    // Only kernels that fill the GPU: at least kMinWaves waves of 128-row query tiles (one CTA
    // each) over the SMs; a smaller one is bound by wave quantisation, not by its throughput.
    const double tiles =
        row.value("batch", 1.0) * row.value("heads", 1.0) * std::ceil(row.value("seq_len", 0.0) / 128.0);
    if (tiles < kMinWaves * sms) continue;
    const auto flops = positiveOrNull(row, "flops_forward_causal", text, file, where);
    const auto us = positiveOrNull(row, "forward_backward_us", text, file, where);
    if (!flops || !us) continue;
    const double fraction = 3.0 * *flops / (*us * 1e-6) / peakFlops;
    const std::string backend = row["backend"].get<std::string>();
    if (backend == "cudnn") cudnn.push_back(fraction);
    if (backend == "flash") flash.push_back(fraction);
  }
  const std::vector<double>& use = !cudnn.empty() ? cudnn : flash;
  if (!use.empty()) {
    res.backend = !cudnn.empty() ? "cudnn" : "flash";
    res.efficiency = geometricMean(use);
    res.rows = static_cast<int>(use.size());
  }
  std::vector<double> memory;
  auto addMemory = [&](const nlohmann::json& row, const std::string& where) {
    if (!row.is_object() || row.contains("error")) return;
    const auto bytes = positiveOrNull(row, "min_hbm_bytes", text, file, where);
    const auto us = positiveOrNull(row, "time_us", text, file, where);
    if (bytes && us && *bytes >= kMinMemoryBytes) memory.push_back(*bytes / (*us * 1e-6) / hbmBytesPerSecond);
  };
  if (j.contains("memory_bound")) {
    i = 0;
    for (const auto& row : listAt(j, "memory_bound", text, file, "{kernel, min_hbm_bytes, time_us}"))
      addMemory(row, "memory_bound[" + std::to_string(i++) + "]");
  }
  if (j.contains("optimizer")) addMemory(j["optimizer"], "optimizer");
  if (!memory.empty()) {
    res.memoryEfficiency = std::min(1.0, geometricMean(memory));
    res.memoryRows = static_cast<int>(memory.size());
  }
  if (!res.efficiency && !res.memoryEfficiency)
    throw InputError(file, HarnessJson::lineOf(text, "attention"), 0, "attention",
                     "expected at least one causal fused-attention row or one memory-bound row of at least "
                     "64 MiB that ran: nothing to fit");
  return res;
}

KernelFit::Overlap KernelFit::fitOverlapFile(const std::string& path) {
  return fitOverlap(readInputFile(path), path);
}

KernelFit::Overlap KernelFit::fitOverlap(const std::string& text, const std::string& file) {
  const nlohmann::json j = HarnessJson::parse(text, file);
  HarnessJson::require(j, text, file, kOverlapTool, kSchema, "overlap result", "fabricsim-gpu-compute",
                       "expected the gpu/ harness's overlap result, found its compute result (give it "
                       "with --compute)");
  std::vector<double> slowdowns;
  size_t i = 0;
  for (const auto& g : listAt(j, "gemms", text, file, "{m, n, k, overlap[]}")) {
    const std::string where = "gemms[" + std::to_string(i++) + "]";
    if (!g.is_object() || !g.contains("overlap") || !g["overlap"].is_array())
      throw InputError(file, HarnessJson::lineOf(text, "overlap"), 0, where + ".overlap",
                       "expected a list of {kind, ctas, slowdown}");
    size_t k = 0;
    for (const auto& o : g["overlap"]) {
      const std::string w = where + ".overlap[" + std::to_string(k++) + "]";
      if (!o.is_object() || o.value("kind", "") != "copy") continue;
      if (const auto s = positiveOrNull(o, "slowdown", text, file, w)) slowdowns.push_back(*s);
    }
  }
  if (slowdowns.empty())
    throw InputError(file, HarnessJson::lineOf(text, "gemms"), 0, "gemms",
                     "expected at least one `copy` overlap row with a slowdown: nothing to fit");
  Overlap res;
  res.meanSlowdown = geometricMean(slowdowns);
  res.commSmShare = std::max(0.0, 1.0 - 1.0 / res.meanSlowdown);
  res.rows = static_cast<int>(slowdowns.size());
  return res;
}

}  // namespace fabricsim
