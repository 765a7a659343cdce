// ComputeOptions: the command line of the compute benchmark (fabricsim-gpu-compute).
//
// Models: which layer shape to time (--preset NAME, --workload FILE.yaml, or --hidden --ffn
// --heads --kv-heads --seq --mbs --tp [--gated]; flags given with a preset or workload override
// its values), which GEMM types (--dtypes bf16,fp16,fp8), whether to include the attention GEMMs,
// iteration counts, a sustained-load warm-up per GEMM (--sustain-ms), the buffer size of the HBM copy and
// reduction tests, the device, the peak rates efficiency is computed against (--peak-bf16-tflops,
// --peak-fp16-tflops,
// --peak-fp8-tflops, --peak-hbm-GBps; datasheet values for H100/H200 otherwise), which parts
// to run (--skip-gemm, --skip-memory), whether to flush the L2 before each timed GEMM
// (--no-l2-flush) and --json PATH.
// Leaves out: anything about collectives (CollectiveOptions).
// Units: elements (shapes), bytes (--bytes accepts K, M, G), TFLOP/s, GB/s.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/common/GpuPeaks.h"
#include "gpu/common/TransformerShape.h"

namespace fabricsim::gpu {

class ComputeOptions {
 public:
  TransformerShape shape;
  std::vector<std::string> gemmTypes{"bf16", "fp16", "fp8"};  ///< of bf16, fp16, fp8
  bool attention = true;
  int warmupIters = 5;
  /// --sustain-ms: run each GEMM back to back this long before timing it (0: off), so it is
  /// timed at the power-limited clock of continuous load, as in a training step.
  double sustainMs = 0;
  int iters = 20;
  size_t memoryBytes = size_t{1} << 30;  ///< per buffer, HBM copy and reduction tests
  int launchIters = 10000;
  int device = 0;
  PeakRates peakOverride;  ///< non-zero fields replace the datasheet values
  /// Evict the L2 cache before each timed GEMM (a training step's operands are not L2-resident
  /// from the previous call of the same GEMM): --no-l2-flush times back-to-back calls instead.
  bool flushL2 = true;
  bool skipGemm = false;
  bool skipMemory = false;
  std::string jsonPath;
  bool help = false;
  std::string helpText;

  /// Parses argv; throws std::invalid_argument naming the bad option. Without --preset,
  /// --workload or --hidden the shape is gpt3-175b with tp 8 and micro-batch 1.
  static ComputeOptions parse(int argc, const char* const* argv);
  /// The peaks to use for `deviceName`: datasheet values with command-line overrides applied.
  PeakRates peaksFor(const std::string& deviceName) const;
};

}  // namespace fabricsim::gpu
