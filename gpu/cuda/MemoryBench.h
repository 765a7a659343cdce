// MemoryBench: HBM copy bandwidth, kernel launch latency and reduction-kernel throughput.
//
// Models: three device buffers of `bytes` each; cudaMemcpyAsync device to device and a 16-byte
// vector copy kernel (2 x bytes of HBM traffic each), c = a + b in fp32 and in bf16 (3 x bytes),
// each timed with CUDA events as (stop - start) / iters after warm-up; launch latency as the
// host-timed mean of many back-to-back empty-kernel launches (async) and of launch plus
// cudaStreamSynchronize one at a time (sync).
// Leaves out: host-device copies (PCIe), L2-resident sizes (use --bytes well above the L2 size),
// and peer-to-peer copies (the collective benchmark measures NVLink through NCCL).
// Units: bytes, microseconds.
#pragma once

#include <cuda_runtime.h>

#include "gpu/common/ComputeReport.h"

namespace fabricsim::gpu {

class MemoryBench {
 public:
  MemoryBench(int device, size_t bytes);
  ~MemoryBench();
  MemoryBench(const MemoryBench&) = delete;
  MemoryBench& operator=(const MemoryBench&) = delete;

  BandwidthResult memcpyDeviceToDevice(int warmup, int iters);
  BandwidthResult copyKernel(int warmup, int iters);
  /// c = a + b; `bf16` false: fp32.
  BandwidthResult reduceAdd(bool bf16, int warmup, int iters);
  LaunchLatency launchLatency(int iters);

 private:
  template <typename F>
  double timeUs(F&& body, int warmup, int iters);
  size_t bytes_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* c_ = nullptr;
};

}  // namespace fabricsim::gpu
