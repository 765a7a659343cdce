// GpuPresets: compute and memory figures of well-known GPUs, by name, and FLOP/s parsing.
//
// Models: h100-sxm (NVIDIA H100 SXM5 datasheet: 989 TFLOP/s dense BF16 tensor core, 3.35 TB/s
// HBM3) and h200-sxm (NVIDIA H200 SXM datasheet: 989 TFLOP/s dense BF16, 4.8 TB/s HBM3e). The
// achieved-fraction efficiencies are GpuSpec's defaults (a calibration file or `efficiency:`
// replaces them). parseFlops reads "989TFLOPS"-style rates.
// Leaves out: sparsity, FP8 peak rates, power and clock limits.
// Units: FLOP/s and bytes/s as double.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Units.h"

namespace fabricsim {

/// The preset called `name` (GpuSpec::preset set to it), or nullopt if there is none.
std::optional<GpuSpec> gpuPreset(std::string_view name);

/// Every preset name, in a fixed order (for messages).
const std::vector<std::string>& gpuPresetNames();

/// "989TFLOPS", "1.2PFLOPS", "500GFLOPS", "1e15FLOPS" -> FLOP/s. A bare number, a negative or
/// zero rate, or another unit is an error naming the accepted units.
Parsed<double> parseFlops(std::string_view text);

}  // namespace fabricsim
