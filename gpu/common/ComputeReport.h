// ComputeReport: the JSON document of one compute-benchmark run.
//
// Models: per GEMM (name, pass, m, n, k, batch, dtype) the mean time, achieved TFLOP/s and the
// efficiency against the peak for its type; per type a layer summary (forward, backward, total:
// summed FLOPs over summed time); HBM copy bandwidth (cudaMemcpy device to device and a copy
// kernel), kernel launch latency, and reduction-kernel throughput (c = a + b, the local work of an
// all-reduce step). Bandwidths count bytes moved through HBM: 2 x size for a copy (read + write),
// 3 x size for a + b (two reads, one write); efficiency is against the HBM peak.
// `fabricsim calibrate --compute` reads it (ComputeFit).
// Top-level keys: tool, schema (1), device, system, peaks {bf16_tflops, fp16_tflops, fp8_tflops,
// hbm_GBps, source}, shape {...}, params {warmup_iters, iters, memory_bytes,
// launch_iters, l2_flush}, gemms[] (each with gpu_state: clocks, power and clock-event reasons
// just after its timed calls, or null without NVML), gemm_summary {dtype: {forward, backward, total}},
// memory[] (copies and reductions), launch. Efficiencies are null where the peak is unknown.
// Leaves out: the measuring itself (gpu/cuda/).
// Units: microseconds, TFLOP/s (10^12 FLOP/s), GB/s (10^9 B/s), bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/common/ComputeOptions.h"
#include "gpu/common/TransformerGemms.h"

namespace fabricsim::gpu {

struct GemmResult {
  GemmShape shape;
  std::string dtype;             ///< "bf16", "fp16", "fp8"
  std::optional<double> timeUs;  ///< nullopt: not run (see note)
  std::string note;              ///< why it was not run, or the cuBLASLt algorithm used
  nlohmann::json gpuState;       ///< GpuTelemetry sample just after the timed calls (null: none)
};

struct BandwidthResult {
  std::string name;          ///< "memcpy_d2d", "copy_kernel", "reduce_add_float", "reduce_add_bfloat16"
  size_t bytes = 0;          ///< size of one buffer
  double timeUs = 0;         ///< one pass
  double trafficFactor = 2;  ///< HBM bytes moved per buffer byte (2 copy, 3 a + b)
  nlohmann::json gpuState;   ///< GpuTelemetry sample just after the timed passes (null: none)
};

struct LaunchLatency {
  double asyncUs = 0;  ///< per launch of an empty kernel, many in flight (throughput of launches)
  double syncUs = 0;   ///< launch of an empty kernel plus cudaStreamSynchronize, one at a time
};

class ComputeReport {
 public:
  static constexpr int kSchema = 1;
  static constexpr const char* kTool = "fabricsim-gpu-compute";
  static nlohmann::json toJson(const ComputeOptions& options, const std::string& deviceName,
                               const nlohmann::json& system, const PeakRates& peaks,
                               const std::vector<GemmResult>& gemms,
                               const std::vector<BandwidthResult>& memory,
                               const std::optional<LaunchLatency>& launch);
  /// Achieved TFLOP/s of `flops` in `us` microseconds (0 when us <= 0).
  static double tflops(double flops, double us);
  /// Peak TFLOP/s of a GEMM type ("bf16", "fp16", "fp8"); 0 when unknown.
  static double peakFor(const PeakRates& peaks, const std::string& dtype);
};

}  // namespace fabricsim::gpu
