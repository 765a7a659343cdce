// CudaCheck: error checks for CUDA runtime, NCCL and cuBLAS calls.
//
// Models: a failed call becomes a std::runtime_error naming the call, the file and line, and the
// library's error string; the programs' main() prints it and exits non-zero.
// Leaves out: recovery (a benchmark with a failed call has no result to report).
// Units: none.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace fabricsim::gpu {

[[noreturn]] inline void throwGpuError(const char* lib, const char* call, const char* file, int line,
                                       const std::string& what) {
  throw std::runtime_error(std::string(lib) + " error at " + file + ":" + std::to_string(line) + ": " + call +
                           ": " + what);
}

}  // namespace fabricsim::gpu

#define FABRICSIM_CUDA(call)                                               \
  do {                                                                     \
    cudaError_t fabricsim_err_ = (call);                                   \
    if (fabricsim_err_ != cudaSuccess)                                     \
      ::fabricsim::gpu::throwGpuError("CUDA", #call, __FILE__, __LINE__,   \
                                      cudaGetErrorString(fabricsim_err_)); \
  } while (0)

#define FABRICSIM_NCCL(call)                                               \
  do {                                                                     \
    ncclResult_t fabricsim_res_ = (call);                                  \
    if (fabricsim_res_ != ncclSuccess)                                     \
      ::fabricsim::gpu::throwGpuError("NCCL", #call, __FILE__, __LINE__,   \
                                      ncclGetErrorString(fabricsim_res_)); \
  } while (0)

#define FABRICSIM_CUBLAS(call)                                               \
  do {                                                                       \
    cublasStatus_t fabricsim_st_ = (call);                                   \
    if (fabricsim_st_ != CUBLAS_STATUS_SUCCESS)                              \
      ::fabricsim::gpu::throwGpuError("cuBLAS", #call, __FILE__, __LINE__,   \
                                      cublasGetStatusString(fabricsim_st_)); \
  } while (0)
