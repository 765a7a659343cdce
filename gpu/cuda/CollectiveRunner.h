// CollectiveRunner: times one NCCL collective over a size sweep on this process's GPUs.
//
// Models: one NCCL communicator over all ranks (processes x GPUs per process; rank = process *
// gpus + i, device = local rank * gpus + i), one non-blocking stream per GPU, send and receive
// buffers sized for the largest size. Per size and variant (out-of-place, then in-place, with
// nccl-tests' in-place offsets): warm-up calls, then `iters` calls between two CUDA events per
// stream; the time of a call is (stop - start) / iters, the slowest of this process's GPUs,
// combined over processes as --average says. The correctness check fills each rank's input with
// CollectiveCheck's pattern, runs one call, copies the result back and counts wrong elements
// (summed over ranks).
// Leaves out: nccl-tests' per-iteration buffer offsets, CUDA graphs, aggregated iterations and
// blocking mode; warm-up is per size here (nccl-tests warms up once at the largest and smallest).
// Units: bytes, microseconds, GB/s.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <vector>

#include "gpu/common/CollectiveResult.h"
#include "gpu/cuda/MpiContext.h"

namespace fabricsim::gpu {

class CollectiveRunner {
 public:
  /// `params.ranks` and `params.processes` are filled in from `mpi` and params.gpusPerProcess.
  CollectiveRunner(CollectiveSweepParams& params, const MpiContext& mpi, uint64_t seed);
  ~CollectiveRunner();
  CollectiveRunner(const CollectiveRunner&) = delete;
  CollectiveRunner& operator=(const CollectiveRunner&) = delete;

  /// Measures one size (both variants).
  CollectiveRow measure(size_t bytes);
  /// CUDA device of local GPU i.
  int device(int i) const { return devices_[i]; }
  int localGpus() const { return static_cast<int>(devices_.size()); }
  int firstRank() const { return mpi_.rank() * params_.gpusPerProcess; }

 private:
  struct Gpu {
    int device = 0;
    int rank = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    char* send = nullptr;
    char* recv = nullptr;
  };
  void issue(const CollectiveCounts& counts, bool inPlace);  // one call on every local GPU
  void synchronize();
  double timeCalls(const CollectiveCounts& counts, bool inPlace);  // seconds per call
  int64_t check(const CollectiveCounts& counts, bool inPlace, uint64_t rep);
  CollectiveMeasurement variant(const CollectiveCounts& counts, bool inPlace);

  CollectiveSweepParams& params_;
  const MpiContext& mpi_;
  uint64_t seed_;
  size_t elementSize_;
  size_t bufferBytes_ = 0;
  std::vector<int> devices_;
  std::vector<Gpu> gpus_;
  uint64_t rep_ = 0;
};

}  // namespace fabricsim::gpu
