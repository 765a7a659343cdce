#include "gpu/cuda/MpiContext.h"

#include <cstdlib>
#include <stdexcept>

#include "gpu/common/HostInfo.h"

#ifdef FABRICSIM_GPU_MPI
#include <mpi.h>
#endif

namespace fabricsim::gpu {
namespace {

bool launchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_NTASKS"})
    if (std::getenv(v)) return true;
  return false;
}

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

#ifdef FABRICSIM_GPU_MPI
void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}
MPI_Op mpiOp(MpiContext::Reduce op) {
  switch (op) {
    case MpiContext::Reduce::kSum:
      return MPI_SUM;
    case MpiContext::Reduce::kMin:
      return MPI_MIN;
    case MpiContext::Reduce::kMax:
      return MPI_MAX;
  }
  return MPI_SUM;
}
#endif

}  // namespace

MpiContext::MpiContext(int* argc, char*** argv) {
#ifdef FABRICSIM_GPU_MPI
  if (launchedByMpi()) {
    check(MPI_Init(argc, argv), "MPI_Init");
    initialised_ = true;
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    int local = envInt("OMPI_COMM_WORLD_LOCAL_RANK", envInt("MPI_LOCALRANKID", envInt("SLURM_LOCALID", -1)));
    if (local < 0) {
      // Count the lower ranks on the same host.
      const auto hosts = gather(HostInfo::hostname());
      std::string all;
      for (const auto& h : hosts) all += h + '\n';
      size_t len = all.size();
      broadcast(&len, sizeof len);
      all.resize(len);
      broadcast(all.data(), len);
      const std::string me = HostInfo::hostname();
      local = 0;
      size_t pos = 0;
      for (int r = 0; r < rank_; ++r) {
        const size_t nl = all.find('\n', pos);
        if (all.substr(pos, nl - pos) == me) ++local;
        pos = nl + 1;
      }
    }
    localRank_ = local;
    return;
  }
#else
  (void)argc;
  (void)argv;
  if (launchedByMpi() && envInt("OMPI_COMM_WORLD_SIZE", envInt("PMI_SIZE", 1)) > 1)
    throw std::runtime_error(
        "launched by an MPI launcher with several ranks, but this build has no MPI support "
        "(install libopenmpi-dev and reconfigure)");
#endif
}

MpiContext::~MpiContext() {
#ifdef FABRICSIM_GPU_MPI
  if (initialised_) MPI_Finalize();
#endif
}

void MpiContext::barrier() const {
#ifdef FABRICSIM_GPU_MPI
  if (initialised_) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
#endif
}

void MpiContext::broadcast(void* data, size_t bytes) const {
#ifdef FABRICSIM_GPU_MPI
  if (initialised_) check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
#else
  (void)data;
  (void)bytes;
#endif
}

std::vector<std::string> MpiContext::gather(const std::string& s) const {
#ifdef FABRICSIM_GPU_MPI
  if (initialised_) {
    int len = static_cast<int>(s.size());
    std::vector<int> lens(rank_ == 0 ? size_ : 0);
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    std::vector<int> displs(lens.size());
    int total = 0;
    for (size_t i = 0; i < lens.size(); ++i) {
      displs[i] = total;
      total += lens[i];
    }
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
                      MPI_COMM_WORLD),
          "MPI_Gatherv");
    std::vector<std::string> out;
    for (size_t i = 0; i < lens.size(); ++i) out.push_back(all.substr(displs[i], lens[i]));
    return out;
  }
#endif
  return {s};
}

double MpiContext::allReduce(double v, Reduce op) const {
#ifdef FABRICSIM_GPU_MPI
  if (initialised_)
    check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, mpiOp(op), MPI_COMM_WORLD), "MPI_Allreduce");
#else
  (void)op;
#endif
  return v;
}

int64_t MpiContext::allReduce(int64_t v, Reduce op) const {
#ifdef FABRICSIM_GPU_MPI
  if (initialised_)
    check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, mpiOp(op), MPI_COMM_WORLD), "MPI_Allreduce");
#else
  (void)op;
#endif
  return v;
}

}  // namespace fabricsim::gpu
