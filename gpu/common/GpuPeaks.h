// GpuPeaks: the datasheet peak rates a measurement's efficiency is computed against.
//
// Models: dense (no sparsity) tensor-core peaks for bf16, fp16 and fp8 and the HBM bandwidth of
// the GPUs this harness targets, recognised from the CUDA device name: H100 SXM (989.4 / 1978.9
// TFLOP/s, 3350 GB/s), H100 PCIe (756 / 1513, 2000), H100 NVL (835 / 1671, 3900), H200 (989.4 /
// 1978.9, 4800). Command-line values override them.
// Leaves out: clocks below boost (a throttled GPU shows as lower efficiency) and other GPUs (give
// the peaks on the command line).
// Units: TFLOP/s (10^12), GB/s (10^9 B/s).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fabricsim::gpu {

struct PeakRates {
  double bf16Tflops = 0;  ///< 0: unknown
  double fp16Tflops = 0;
  double fp8Tflops = 0;  ///< 0: no fp8 tensor cores, or unknown
  double hbmGBps = 0;
  std::string source;  ///< "datasheet:<model>", "command line", or "unknown"
};

/// Datasheet peaks for a CUDA device name ("NVIDIA H100 80GB HBM3", "NVIDIA H200"); nullopt when unknown.
std::optional<PeakRates> datasheetPeaks(std::string_view deviceName);

}  // namespace fabricsim::gpu
