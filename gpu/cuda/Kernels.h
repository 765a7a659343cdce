// Kernels: the few CUDA kernels the compute benchmark times, callable from plain C++.
//
// Models: a fill of GEMM operands with bounded pseudo-random values (zeros would flatter the
// tensor cores' power draw), an empty kernel (launch latency), a grid-stride 16-byte-vector copy (HBM copy
// bandwidth without the copy engines), and c = a + b over fp32 or bf16 (the local reduction inside every
// all-reduce step: two reads and one write per element, the sum in fp32).
// Leaves out: NCCL's own reduction kernels (their throughput is what a collective measures).
// Units: bytes, elements.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace fabricsim::gpu {

void launchEmptyKernel(cudaStream_t stream);
/// Copies `bytes` (a multiple of 16; both pointers 16-byte aligned) from src to dst.
void launchCopyKernel(void* dst, const void* src, size_t bytes, cudaStream_t stream);
/// c[i] = a[i] + b[i] for i < n, fp32.
void launchAddFloat(float* c, const float* a, const float* b, size_t n, cudaStream_t stream);
/// c[i] = a[i] + b[i] for i < n, bf16 storage (raw 16-bit words), fp32 arithmetic.
void launchAddBfloat16(void* c, const void* a, const void* b, size_t n, cudaStream_t stream);
/// Fills n elements with deterministic values in [-1, 1): kind 0 bf16, 1 fp16, 2 fp8 (e4m3).
void launchFillUniform(void* p, size_t n, int kind, unsigned seed, cudaStream_t stream);
/// Blocks a grid-stride kernel uses on the current device (4 per SM, 256 threads each).
int gridBlocks();

}  // namespace fabricsim::gpu
