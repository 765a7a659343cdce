#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "gpu/cuda/CudaCheck.h"
#include "gpu/cuda/Kernels.h"

namespace fabricsim::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void emptyKernel() {}

__global__ void copyKernel(uint4* __restrict__ dst, const uint4* __restrict__ src, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void addFloatKernel(float4* __restrict__ c, const float4* __restrict__ a,
                               const float4* __restrict__ b, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

__global__ void addFloatTail(float* c, const float* a, const float* b, size_t from, size_t n) {
  const size_t i = from + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void addBf16Kernel(__nv_bfloat162* __restrict__ c, const __nv_bfloat162* __restrict__ a,
                              const __nv_bfloat162* __restrict__ b, size_t n2) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n2;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float2 x = __bfloat1622float2(a[i]), y = __bfloat1622float2(b[i]);
    c[i] = __floats2bfloat162_rn(x.x + y.x, x.y + y.y);
  }
}

__global__ void addBf16Tail(__nv_bfloat16* c, const __nv_bfloat16* a, const __nv_bfloat16* b, size_t from,
                            size_t n) {
  const size_t i = from + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) c[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

__global__ void fillUniformKernel(void* p, size_t n, int kind, unsigned seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed ^ static_cast<unsigned>(i >> 32) * 40503u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    const float v = static_cast<float>(x & 0xffffu) / 32768.0f - 1.0f;
    if (kind == 0)
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
    else if (kind == 1)
      static_cast<__half*>(p)[i] = __float2half(v);
    else
      static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v);
  }
}

}  // namespace

void launchFillUniform(void* p, size_t n, int kind, unsigned seed, cudaStream_t stream) {
  fillUniformKernel<<<gridBlocks(), kThreads, 0, stream>>>(p, n, kind, seed);
  FABRICSIM_CUDA(cudaGetLastError());
}

int gridBlocks() {
  int device = 0, sms = 0;
  FABRICSIM_CUDA(cudaGetDevice(&device));
  FABRICSIM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms * 4;
}

void launchEmptyKernel(cudaStream_t stream) {
  emptyKernel<<<1, 1, 0, stream>>>();
  FABRICSIM_CUDA(cudaGetLastError());
}

void launchCopyKernel(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  copyKernel<<<gridBlocks(), kThreads, 0, stream>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src),
                                                    bytes / sizeof(uint4));
  FABRICSIM_CUDA(cudaGetLastError());
}

void launchAddFloat(float* c, const float* a, const float* b, size_t n, cudaStream_t stream) {
  const size_t n4 = n / 4;
  addFloatKernel<<<gridBlocks(), kThreads, 0, stream>>>(reinterpret_cast<float4*>(c),
                                                        reinterpret_cast<const float4*>(a),
                                                        reinterpret_cast<const float4*>(b), n4);
  if (n % 4) addFloatTail<<<1, 4, 0, stream>>>(c, a, b, n4 * 4, n);
  FABRICSIM_CUDA(cudaGetLastError());
}

void launchAddBfloat16(void* c, const void* a, const void* b, size_t n, cudaStream_t stream) {
  const size_t n2 = n / 2;
  addBf16Kernel<<<gridBlocks(), kThreads, 0, stream>>>(static_cast<__nv_bfloat162*>(c),
                                                       static_cast<const __nv_bfloat162*>(a),
                                                       static_cast<const __nv_bfloat162*>(b), n2);
  if (n % 2)
    addBf16Tail<<<1, 2, 0, stream>>>(static_cast<__nv_bfloat16*>(c), static_cast<const __nv_bfloat16*>(a),
                                     static_cast<const __nv_bfloat16*>(b), n2 * 2, n);
  FABRICSIM_CUDA(cudaGetLastError());
}

}  // namespace fabricsim::gpu
