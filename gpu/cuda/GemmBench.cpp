#include "gpu/cuda/GemmBench.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "gpu/cuda/CudaCheck.h"
#include "gpu/cuda/Kernels.h"

namespace fabricsim::gpu {
namespace {

// Frees the cuBLASLt descriptors and device buffers of one run however it ends.
struct RunResources {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  void* bufA = nullptr;
  void* bufB = nullptr;
  void* bufD = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~RunResources() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
    if (bufA) cudaFree(bufA);
    if (bufB) cudaFree(bufB);
    if (bufD) cudaFree(bufD);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

void setBatch(cublasLtMatrixLayout_t layout, long batch, long long stride) {
  const int32_t count = static_cast<int32_t>(batch);
  FABRICSIM_CUBLAS(
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
  const int64_t s = stride;
  FABRICSIM_CUBLAS(
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof s));
}

}  // namespace

GemmBench::GemmBench(int device, bool flushL2) : flushL2_(flushL2) {
  FABRICSIM_CUDA(cudaSetDevice(device));
  FABRICSIM_CUDA(cudaDeviceGetAttribute(&ccMajor_, cudaDevAttrComputeCapabilityMajor, device));
  FABRICSIM_CUDA(cudaDeviceGetAttribute(&ccMinor_, cudaDevAttrComputeCapabilityMinor, device));
  FABRICSIM_CUBLAS(cublasLtCreate(&handle_));
  FABRICSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  FABRICSIM_CUDA(cudaMalloc(&workspace_, workspaceBytes_));
  if (flushL2_) {
    int l2 = 0;
    FABRICSIM_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    flushBytes_ = 2 * static_cast<size_t>(std::max(l2, 1 << 20));
    FABRICSIM_CUDA(cudaMalloc(&flush_, flushBytes_));
  }
}

GemmBench::~GemmBench() {
  if (flush_) cudaFree(flush_);
  if (workspace_) cudaFree(workspace_);
  if (stream_) cudaStreamDestroy(stream_);
  if (handle_) cublasLtDestroy(handle_);
}

GemmResult GemmBench::run(const GemmShape& shape, const std::string& dtype, int warmup, int iters,
                          double sustainMs) {
  GemmResult r{shape, dtype, std::nullopt, "", {}};
  cudaDataType_t inType = CUDA_R_16BF, outType = CUDA_R_16BF;
  size_t inBytes = 2;
  int fillKind = 0;
  if (dtype == "fp16") {
    inType = outType = CUDA_R_16F;
    fillKind = 1;
  } else if (dtype == "fp8") {
    if (!fp8Supported()) {
      r.note = "fp8 needs compute capability 8.9 or later";
      return r;
    }
    if (shape.m % 16 || shape.n % 16 || shape.k % 16) {
      r.note = "fp8 needs m, n and k to be multiples of 16";
      return r;
    }
    inType = CUDA_R_8F_E4M3;
    inBytes = 1;
    fillKind = 2;
  }
  const long m = shape.m, n = shape.n, k = shape.k, batch = shape.batch;
  const size_t elemsA = static_cast<size_t>(k) * m, elemsB = static_cast<size_t>(k) * n,
               elemsD = static_cast<size_t>(m) * n;
  const size_t need = (elemsA + elemsB) * inBytes * batch + elemsD * 2 * batch;
  size_t freeBytes = 0, totalBytes = 0;
  FABRICSIM_CUDA(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (need + (size_t{256} << 20) > freeBytes) {
    r.note = "operands (" + std::to_string(need >> 20) + " MiB) do not fit in free GPU memory";
    return r;
  }

  RunResources res;
  FABRICSIM_CUDA(cudaMalloc(&res.bufA, elemsA * inBytes * batch));
  FABRICSIM_CUDA(cudaMalloc(&res.bufB, elemsB * inBytes * batch));
  FABRICSIM_CUDA(cudaMalloc(&res.bufD, elemsD * 2 * batch));
  launchFillUniform(res.bufA, elemsA * batch, fillKind, 1u, stream_);
  launchFillUniform(res.bufB, elemsB * batch, fillKind, 2u, stream_);

  FABRICSIM_CUBLAS(cublasLtMatmulDescCreate(&res.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
  FABRICSIM_CUBLAS(
      cublasLtMatmulDescSetAttribute(res.op, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof transA));
  FABRICSIM_CUBLAS(
      cublasLtMatmulDescSetAttribute(res.op, CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof transB));
  FABRICSIM_CUBLAS(cublasLtMatrixLayoutCreate(&res.a, inType, k, m, k));
  FABRICSIM_CUBLAS(cublasLtMatrixLayoutCreate(&res.b, inType, k, n, k));
  FABRICSIM_CUBLAS(cublasLtMatrixLayoutCreate(&res.d, outType, m, n, m));
  if (batch > 1) {
    setBatch(res.a, batch, static_cast<long long>(elemsA));
    setBatch(res.b, batch, static_cast<long long>(elemsB));
    setBatch(res.d, batch, static_cast<long long>(elemsD));
  }
  FABRICSIM_CUBLAS(cublasLtMatmulPreferenceCreate(&res.pref));
  FABRICSIM_CUBLAS(cublasLtMatmulPreferenceSetAttribute(res.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                        &workspaceBytes_, sizeof workspaceBytes_));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, res.op, res.a, res.b, res.d, res.d,
                                                           res.pref, 1, &heuristic, &found);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    r.note = std::string("cuBLASLt has no algorithm for this shape and type: ") + cublasGetStatusString(st);
    return r;
  }
  const float alpha = 1.0f, beta = 0.0f;
  auto call = [&] {
    FABRICSIM_CUBLAS(cublasLtMatmul(handle_, res.op, &alpha, res.bufA, res.a, res.bufB, res.b, &beta,
                                    res.bufD, res.d, res.bufD, res.d, &heuristic.algo, workspace_,
                                    workspaceBytes_, stream_));
  };
  for (int i = 0; i < warmup; ++i) call();
  FABRICSIM_CUDA(cudaEventCreate(&res.start));
  FABRICSIM_CUDA(cudaEventCreate(&res.stop));
  if (sustainMs > 0) {
    // Back-to-back batches until sustainMs of GPU time has passed: the clock then sits where
    // the power limit holds it under continuous GEMMs.
    double busyMs = 0;
    while (busyMs < sustainMs) {
      FABRICSIM_CUDA(cudaEventRecord(res.start, stream_));
      for (int i = 0; i < 16; ++i) call();
      FABRICSIM_CUDA(cudaEventRecord(res.stop, stream_));
      FABRICSIM_CUDA(cudaEventSynchronize(res.stop));
      float ms = 0;
      FABRICSIM_CUDA(cudaEventElapsedTime(&ms, res.start, res.stop));
      busyMs += static_cast<double>(ms);
    }
  }
  double totalMs = 0;
  if (flushL2_) {
    // Each call alone, after the L2 has been overwritten.
    for (int i = 0; i < iters; ++i) {
      FABRICSIM_CUDA(cudaMemsetAsync(flush_, i & 0xff, flushBytes_, stream_));
      FABRICSIM_CUDA(cudaEventRecord(res.start, stream_));
      call();
      FABRICSIM_CUDA(cudaEventRecord(res.stop, stream_));
      FABRICSIM_CUDA(cudaEventSynchronize(res.stop));
      float ms = 0;
      FABRICSIM_CUDA(cudaEventElapsedTime(&ms, res.start, res.stop));
      totalMs += static_cast<double>(ms);
    }
  } else {
    FABRICSIM_CUDA(cudaEventRecord(res.start, stream_));
    for (int i = 0; i < iters; ++i) call();
    FABRICSIM_CUDA(cudaEventRecord(res.stop, stream_));
    FABRICSIM_CUDA(cudaEventSynchronize(res.stop));
    float ms = 0;
    FABRICSIM_CUDA(cudaEventElapsedTime(&ms, res.start, res.stop));
    totalMs = static_cast<double>(ms);
  }
  r.timeUs = totalMs * 1e3 / iters;
  r.note =
      "cuBLASLt heuristic #1, workspace " + std::to_string(heuristic.workspaceSize >> 10) + " KiB" +
      (flushL2_ ? ", L2 flushed before each call" : ", back-to-back calls") +
      (sustainMs > 0 ? ", after " + std::to_string(static_cast<long>(sustainMs)) + " ms of sustained load"
                     : "");
  return r;
}

}  // namespace fabricsim::gpu
