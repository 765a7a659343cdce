#include "gpu/cuda/MemoryBench.h"

#include <chrono>

#include "gpu/cuda/CudaCheck.h"
#include "gpu/cuda/Kernels.h"

namespace fabricsim::gpu {

MemoryBench::MemoryBench(int device, size_t bytes) : bytes_(bytes / 16 * 16) {
  FABRICSIM_CUDA(cudaSetDevice(device));
  FABRICSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  FABRICSIM_CUDA(cudaEventCreate(&start_));
  FABRICSIM_CUDA(cudaEventCreate(&stop_));
  FABRICSIM_CUDA(cudaMalloc(&a_, bytes_));
  FABRICSIM_CUDA(cudaMalloc(&b_, bytes_));
  FABRICSIM_CUDA(cudaMalloc(&c_, bytes_));
  // Small finite values in both formats: bf16 fill (0.x) read as fp32 stays finite too.
  launchFillUniform(a_, bytes_ / 2, 0, 3u, stream_);
  launchFillUniform(b_, bytes_ / 2, 0, 4u, stream_);
  FABRICSIM_CUDA(cudaStreamSynchronize(stream_));
}

MemoryBench::~MemoryBench() {
  cudaFree(a_);
  cudaFree(b_);
  cudaFree(c_);
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

template <typename F>
double MemoryBench::timeUs(F&& body, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) body();
  FABRICSIM_CUDA(cudaEventRecord(start_, stream_));
  for (int i = 0; i < iters; ++i) body();
  FABRICSIM_CUDA(cudaEventRecord(stop_, stream_));
  FABRICSIM_CUDA(cudaEventSynchronize(stop_));
  float ms = 0;
  FABRICSIM_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1e3 / iters;
}

BandwidthResult MemoryBench::memcpyDeviceToDevice(int warmup, int iters) {
  const double us =
      timeUs([&] { FABRICSIM_CUDA(cudaMemcpyAsync(c_, a_, bytes_, cudaMemcpyDeviceToDevice, stream_)); },
             warmup, iters);
  return {"memcpy_d2d", bytes_, us, 2.0, {}};
}

BandwidthResult MemoryBench::copyKernel(int warmup, int iters) {
  const double us = timeUs([&] { launchCopyKernel(c_, a_, bytes_, stream_); }, warmup, iters);
  return {"copy_kernel", bytes_, us, 2.0, {}};
}

BandwidthResult MemoryBench::reduceAdd(bool bf16, int warmup, int iters) {
  double us = 0;
  if (bf16) {
    us = timeUs([&] { launchAddBfloat16(c_, a_, b_, bytes_ / 2, stream_); }, warmup, iters);
  } else {
    us = timeUs(
        [&] {
          launchAddFloat(static_cast<float*>(c_), static_cast<const float*>(a_),
                         static_cast<const float*>(b_), bytes_ / 4, stream_);
        },
        warmup, iters);
  }
  return {bf16 ? "reduce_add_bfloat16" : "reduce_add_float", bytes_, us, 3.0, {}};
}

LaunchLatency MemoryBench::launchLatency(int iters) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < 100; ++i) launchEmptyKernel(stream_);
  FABRICSIM_CUDA(cudaStreamSynchronize(stream_));
  LaunchLatency l;
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) launchEmptyKernel(stream_);
  FABRICSIM_CUDA(cudaStreamSynchronize(stream_));
  l.asyncUs = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
  t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    launchEmptyKernel(stream_);
    FABRICSIM_CUDA(cudaStreamSynchronize(stream_));
  }
  l.syncUs = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
  return l;
}

}  // namespace fabricsim::gpu
