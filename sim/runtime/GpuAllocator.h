// GpuAllocator: hands out the fabric's GPUs to jobs (several jobs can share one fabric, each
// on its own GPUs) and orders a job's ranks on the GPUs it got.
//
// Models: whole hosts per job. First fit takes the first run of consecutive free hosts that is
// long enough (else the first free hosts in order); an explicit `first_gpu` takes the range
// starting there (it must be free and host-aligned when the job spans several hosts).
// Policies: rail-aligned (default) keeps a training job's TP group inside a host and puts DP
// peers on the same local GPU index, hence the same rail; random-hosts takes free hosts at
// random across the cluster (a fragmented scheduler); in-order takes hosts as rail-aligned does
// and keeps the ranks in Megatron's order (rank r on the job's r-th GPU: with tp < GPUs per
// host, the next CP/EP/DP peers share the host, as a Megatron job lays out on a cluster);
// random scatters the ranks over random
// free GPUs (TP groups leave their host). Random choices come from the run's seed.
// Leaves out: partial hosts shared by two jobs, topology-aware (leaf/pod) packing.
// Units: GPU ranks of the topology (host h, local g -> h * gpusPerHost + g).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/core/Rng.h"

namespace fabricsim {

/// A 3D-parallel layout (Megatron rank order: tp fastest, then dp, then pp).
struct ParallelLayout {
  int tp = 1;
  int dp = 1;
  int pp = 1;
};

class GpuAllocator {
 public:
  GpuAllocator(size_t gpus, int gpusPerHost, uint64_t seed);

  /// GPUs of the job's ranks (index = rank). `layout` (may be null) is used by rail-aligned
  /// placement of training jobs. Throws InputError (file `file`, key "placement") if the job
  /// does not fit in the free GPUs or its explicit range is taken.
  std::vector<uint32_t> allocate(const PlacementSpec& placement, uint32_t ranks, const ParallelLayout* layout,
                                 const std::string& file);
  /// Marks explicit GPUs (e.g. a trace's recorded placement) as taken; throws InputError if
  /// any is out of range or already taken.
  void reserve(const std::vector<uint32_t>& gpus, const std::string& file);
  size_t freeGpus() const;

  /// Position of each rank among a job's GPUs (host-major) under rail-aligned placement:
  /// each host holds gpusPerHost/tp TP groups of consecutive pipeline stages of one DP
  /// replica, so every DP group sits on one local index. Falls back to the identity when
  /// tp does not divide gpusPerHost or the stages per host do not divide pp.
  static std::vector<uint32_t> railAlignedOrder(const ParallelLayout& layout, int gpusPerHost);

 private:
  size_t gpus_;
  int gpusPerHost_;
  std::vector<uint8_t> taken_;  // per GPU
  Rng rng_;
};

}  // namespace fabricsim
