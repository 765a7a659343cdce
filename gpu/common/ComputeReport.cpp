#include "gpu/common/ComputeReport.h"

#include <map>

namespace fabricsim::gpu {
namespace {

nlohmann::json ratio(double value, double peak) {
  return peak > 0 ? nlohmann::json(value / peak) : nlohmann::json(nullptr);
}

}  // namespace

double ComputeReport::tflops(double flops, double us) {
  return us > 0 ? flops / (us * 1e-6) / 1e12 : 0;
}

double ComputeReport::peakFor(const PeakRates& p, const std::string& dtype) {
  if (dtype == "bf16") return p.bf16Tflops;
  if (dtype == "fp16") return p.fp16Tflops;
  if (dtype == "fp8") return p.fp8Tflops;
  return 0;
}

nlohmann::json ComputeReport::toJson(const ComputeOptions& o, const std::string& deviceName,
                                     const nlohmann::json& system, const PeakRates& peaks,
                                     const std::vector<GemmResult>& gemms,
                                     const std::vector<BandwidthResult>& memory,
                                     const std::optional<LaunchLatency>& launch) {
  nlohmann::json j;
  j["tool"] = kTool;
  j["schema"] = kSchema;
  j["device"] = deviceName;
  j["system"] = system;
  j["peaks"] = {{"bf16_tflops", peaks.bf16Tflops},
                {"fp16_tflops", peaks.fp16Tflops},
                {"fp8_tflops", peaks.fp8Tflops},
                {"hbm_GBps", peaks.hbmGBps},
                {"source", peaks.source}};
  const auto& s = o.shape;
  j["shape"] = {{"name", s.name},
                {"hidden", s.hidden},
                {"ffn_hidden", s.ffnHidden},
                {"heads", s.heads},
                {"kv_heads", s.kvHeads},
                {"seq_len", s.seqLen},
                {"gated_mlp", s.gatedMlp},
                {"micro_batch", s.microBatch},
                {"tp", s.tp},
                {"attention_gemms", o.attention}};
  j["params"] = {{"warmup_iters", o.warmupIters}, {"sustain_ms", o.sustainMs},     {"iters", o.iters},
                 {"memory_bytes", o.memoryBytes}, {"launch_iters", o.launchIters}, {"l2_flush", o.flushL2}};

  struct Sum {
    double flops = 0, us = 0;
  };
  std::map<std::string, std::map<std::string, Sum>> sums;  // dtype -> forward/backward/total
  nlohmann::json list = nlohmann::json::array();
  for (const auto& g : gemms) {
    nlohmann::json e = {{"name", g.shape.name},   {"pass", g.shape.pass},     {"m", g.shape.m},
                        {"n", g.shape.n},         {"k", g.shape.k},           {"batch", g.shape.batch},
                        {"dtype", g.dtype},       {"flops", g.shape.flops()}, {"note", g.note},
                        {"gpu_state", g.gpuState}};
    if (g.timeUs) {
      const double tf = tflops(g.shape.flops(), *g.timeUs);
      e["time_us"] = *g.timeUs;
      e["tflops"] = tf;
      e["efficiency"] = ratio(tf, peakFor(peaks, g.dtype));
      const std::string pass = g.shape.pass == "forward" ? "forward" : "backward";
      for (const std::string& key : {pass, std::string("total")}) {
        sums[g.dtype][key].flops += g.shape.flops();
        sums[g.dtype][key].us += *g.timeUs;
      }
    } else {
      e["time_us"] = nullptr;
      e["tflops"] = nullptr;
      e["efficiency"] = nullptr;
    }
    list.push_back(e);
  }
  j["gemms"] = list;
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& [dtype, parts] : sums) {
    for (const auto& [key, sum] : parts) {
      const double tf = tflops(sum.flops, sum.us);
      summary[dtype][key] = {{"flops", sum.flops},
                             {"time_us", sum.us},
                             {"tflops", tf},
                             {"efficiency", ratio(tf, peakFor(peaks, dtype))}};
    }
  }
  j["gemm_summary"] = summary;

  nlohmann::json mem = nlohmann::json::array();
  for (const auto& m : memory) {
    const double gbps =
        m.timeUs > 0 ? m.trafficFactor * static_cast<double>(m.bytes) / (m.timeUs * 1e-6) / 1e9 : 0;
    mem.push_back({{"name", m.name},
                   {"bytes", m.bytes},
                   {"time_us", m.timeUs},
                   {"traffic_factor", m.trafficFactor},
                   {"hbm_GBps", gbps},
                   {"efficiency", ratio(gbps, peaks.hbmGBps)},
                   {"gpu_state", m.gpuState}});
  }
  j["memory"] = mem;
  j["launch"] = launch ? nlohmann::json{{"async_us", launch->asyncUs}, {"sync_us", launch->syncUs}}
                       : nlohmann::json(nullptr);
  return j;
}

}  // namespace fabricsim::gpu
