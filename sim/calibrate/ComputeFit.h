// ComputeFit: compute efficiency per GEMM class from the gpu/ harness's compute results.
//
// Models: each measured bf16 GEMM i of class c achieved a_i = flops_i / time_i against the
// GPU's bf16 peak P; the model time is flops_i / (e_c P), and the least-squares fit of ln(time)
// gives e_c = exp(mean_i ln(a_i / P)) (the geometric mean of the achieved fractions), per class
// ("gemm": the layers' matrix multiplies qkv, attn_proj, mlp_up, mlp_down; "attention": the
// harness's unfused score and value products attn_scores, attn_values, reported as a lower bound
// of FlashAttention's efficiency and not used as it). HBM bandwidth: the fastest of the harness's
// copies (memcpy_d2d, copy_kernel; bytes moved through HBM over time).
// The input is the harness's compute JSON (tool fabricsim-gpu-compute, schema 1; the document
// gpu/common/ComputeReport.h describes): gemms[] {name, pass, m, n, k, batch, dtype, flops,
// time_us (null: not run)}, peaks {bf16_tflops}, memory[] {name, hbm_GBps}. P is peaks.bf16_tflops
// when the file gives it, else the caller's peak. Anything else (the collective JSON, another
// schema or tool) is refused with the file, line and key.
// fp8 GEMMs the same way against peaks.fp8_tflops (gpu.efficiency.fp8_gemm).
// Leaves out: fp16 GEMMs, shape-dependent efficiency (one figure per class, as GpuSpec has).
// Units: FLOP/s as double, fractions of peak, HBM bytes/s.
#pragma once

#include <optional>
#include <string>

namespace fabricsim {

class ComputeFit {
 public:
  /// The harness compute JSON this reads (gpu/common/ComputeReport's tool and schema; a test
  /// checks that the two agree).
  static constexpr const char* kHarnessTool = "fabricsim-gpu-compute";
  static constexpr int kHarnessSchema = 1;

  struct Result {
    double peakFlops = 0;
    std::optional<double> gemmEfficiency;  ///< fraction of peak
    /// Fraction of peak of the harness's unfused score and value products. Not the simulator's
    /// attention efficiency (gpu.efficiency.attention), which is FlashAttention's: fused, it keeps
    /// the s x s scores on chip, where these batched GEMMs write and read them through HBM, so
    /// this is only a lower bound of it and is reported, never written to a calibration.
    std::optional<double> unfusedAttentionEfficiency;
    std::optional<double> hbmBytesPerSecond;
    /// From the harness's attention and overlap results (KernelFit), when given.
    std::optional<double> attentionEfficiency;  ///< fused, causal FLOPs
    std::optional<double> memoryEfficiency;     ///< of hbmBytesPerSecond (or the datasheet's)
    std::optional<double> commSmShare;
    double peakFp8Flops = 0;                  ///< peaks.fp8_tflops (0: not given)
    std::optional<double> fp8GemmEfficiency;  ///< fraction of peakFp8Flops
    int fp8Gemms = 0;
    int gemms = 0;          ///< results used
    double rmsLogTime = 0;  ///< of the fitted classes' GEMMs
  };

  /// Reads and fits the compute JSON at `path`; `peakFlops` applies when the file gives no
  /// bf16 peak. Throws InputError naming the file, line and key on bad input.
  static Result fitFile(const std::string& path, double peakFlops);
  static Result fit(const std::string& jsonText, const std::string& fileName, double peakFlops);
};

}  // namespace fabricsim
