// KernelFit: the training step's non-GEMM compute figures from the gpu/ harness's PyTorch
// benchmarks: fused attention, memory-bound kernels, and GEMMs slowed by communication kernels.
//
// Models:
// - attention (gpu.efficiency.attention): each fused-attention row of the attention JSON (tool
//   fabricsim-gpu-attention, schema 1: attention[] {backend, causal, flops_forward_causal,
//   forward_backward_us}) achieved a_i = 3 x flops_forward_causal / forward_backward_us (the
//   causal kernels' FLOPs, backward = 2 x forward, as the simulator counts them with
//   model.causal: true); the efficiency is the geometric mean of a_i / P over the rows of one
//   backend (cuDNN's fused attention, Transformer Engine's on Hopper, when it ran, else
//   FlashAttention's) whose kernels fill the GPU: batch x heads x ceil(seq_len / 128) query
//   tiles (one CTA each) at least kMinWaves times the SM count (system.sm_count). A smaller
//   kernel runs a fraction of a wave and measures wave quantisation, not throughput.
// - memory (gpu.efficiency.memory): each memory-bound row (memory_bound[] and optimizer:
//   {min_hbm_bytes, time_us}) moved its minimum HBM traffic at b_i = bytes / time; the efficiency
//   is the geometric mean of b_i / B (B: the HBM rate the calibration uses), over the rows that
//   move at least kMinMemoryBytes (64 MiB: a kernel launch of ~5 us is then under 10% of the
//   time at 3 TB/s, so the figure is bandwidth, not launch overhead).
// - comm_sm_share: each GEMM of the overlap JSON (tool fabricsim-gpu-overlap, schema 1:
//   gemms[] {overlap[] {kind, ctas, slowdown}}) slowed by s_i while `ctas` copy CTAs (what a
//   communication kernel is: one CTA per NCCL channel, copying) ran beside it; the share is
//   1 - 1 / (geometric mean of s_i over the `copy` rows): the fraction of throughput a compute
//   op loses while communication runs.
// Anything else (another tool or schema) is refused with the file, line and key.
// Leaves out: attention with dropout, fp8 attention, attention's dependence on the sequence
// length (short sequences run fewer key tiles per query tile, so a lower efficiency than the
// fitted one), the dependence of the slowdown on the
// number of CTAs and the GEMM's shape (one share for all, as GpuSpec has), power capping
// (the overlap rows ran at whatever clock the GPU held).
// Units: FLOP/s, B/s, fractions.
#pragma once

#include <optional>
#include <string>

namespace fabricsim {

class KernelFit {
 public:
  static constexpr const char* kAttentionTool = "fabricsim-gpu-attention";
  static constexpr const char* kOverlapTool = "fabricsim-gpu-overlap";
  static constexpr int kSchema = 1;
  static constexpr double kMinMemoryBytes = 64.0 * 1024 * 1024;
  static constexpr double kMinWaves = 2.0;

  struct Attention {
    std::string backend;               ///< cudnn | flash
    std::optional<double> efficiency;  ///< fraction of the bf16 peak, causal FLOPs
    int rows = 0;
    std::optional<double> memoryEfficiency;  ///< fraction of the HBM rate given
    int memoryRows = 0;
  };
  struct Overlap {
    std::optional<double> commSmShare;
    double meanSlowdown = 0;  ///< geometric mean of the copy rows' slowdowns
    int rows = 0;
  };

  /// Reads the attention JSON at `path`; `peakFlops` the bf16 peak (FLOP/s), `hbmBytesPerSecond`
  /// the rate memory efficiencies are relative to. Throws InputError on bad input.
  static Attention fitAttentionFile(const std::string& path, double peakFlops, double hbmBytesPerSecond);
  static Attention fitAttention(const std::string& jsonText, const std::string& fileName, double peakFlops,
                                double hbmBytesPerSecond);
  static Overlap fitOverlapFile(const std::string& path);
  static Overlap fitOverlap(const std::string& jsonText, const std::string& fileName);
};

}  // namespace fabricsim
