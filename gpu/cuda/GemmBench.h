// GemmBench: times one GEMM shape with cuBLASLt in bf16, fp16 or fp8.
//
// Models: D[m x n] = A^T B with A stored k x m and B stored k x n (the "TN" layout fp8 requires on
// Hopper, used for every type so the types compare like for like), fp32 accumulation, outputs
// in the input type (bf16 for fp8 inputs), `batch` strided products in one call; operands filled
// with bounded pseudo-random values; the algorithm is cuBLASLt's first heuristic choice with a
// 64 MiB workspace. Each timed call runs after a write of twice the L2 size to a scratch buffer
// (evicting the operands from L2, as a training step's other kernels do) and is timed alone
// between two events; time = the mean of those. With flushL2 false: back-to-back calls,
// (stop - start) / iters. Warm-up calls first, on the same stream.
// fp8 (e4m3) runs only on compute capability 8.9 and up and with m, n, k multiples of 16.
// Leaves out: autotuning over algorithms, fp8 scaling factors (all 1), epilogues (bias, GELU)
// and fast fp8 accumulation.
// Units: microseconds.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "gpu/common/ComputeReport.h"

namespace fabricsim::gpu {

class GemmBench {
 public:
  /// `flushL2`: evict the L2 before each timed call (see above).
  explicit GemmBench(int device, bool flushL2 = true);
  ~GemmBench();
  GemmBench(const GemmBench&) = delete;
  GemmBench& operator=(const GemmBench&) = delete;

  /// Whether fp8 tensor-core GEMMs exist on this device (compute capability >= 8.9).
  bool fp8Supported() const { return ccMajor_ * 10 + ccMinor_ >= 89; }
  /// Times `shape` in `dtype` ("bf16", "fp16", "fp8"); a result without time says why in its note.
  /// sustainMs > 0: after the warm-up, runs the GEMM back to back for that long first, so it is
  /// timed at the clock the GPU holds under continuous load (its power limit), as in training.
  GemmResult run(const GemmShape& shape, const std::string& dtype, int warmup, int iters,
                 double sustainMs = 0);

 private:
  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspaceBytes_ = size_t{64} << 20;
  int ccMajor_ = 0, ccMinor_ = 0;
  bool flushL2_ = true;
  void* flush_ = nullptr;  ///< 2 x L2 bytes written before each timed call
  size_t flushBytes_ = 0;
};

}  // namespace fabricsim::gpu
