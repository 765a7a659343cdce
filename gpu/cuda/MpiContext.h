// MpiContext: the processes of one benchmark run, with or without MPI.
//
// Models: rank, size and local rank of this process, and the few collectives the harness needs
// on the host (barrier, broadcast of bytes, gather of strings to rank 0, reductions of doubles and
// integers). MPI is initialised only when the program was built with MPI and started by a launcher
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK or SLURM_NTASKS in the environment); otherwise the run
// is one process and every operation is local. The local rank comes from
// OMPI_COMM_WORLD_LOCAL_RANK (or MPI_LOCALRANKID, SLURM_LOCALID), else from the host names.
// Leaves out: communicator splits (one NCCL communicator spans all ranks).
// Units: bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::gpu {

class MpiContext {
 public:
  MpiContext(int* argc, char*** argv);
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int localRank() const { return localRank_; }
  /// Whether MPI was initialised (launched under mpirun/srun).
  bool usesMpi() const { return initialised_; }

  void barrier() const;
  /// Broadcasts `bytes` bytes at `data` from rank 0.
  void broadcast(void* data, size_t bytes) const;
  /// Rank 0 gets every rank's string in rank order; other ranks get an empty vector.
  std::vector<std::string> gather(const std::string& s) const;
  enum class Reduce { kSum, kMin, kMax };
  double allReduce(double v, Reduce op) const;
  int64_t allReduce(int64_t v, Reduce op) const;

 private:
  bool initialised_ = false;
  int rank_ = 0;
  int size_ = 1;
  int localRank_ = 0;
};

}  // namespace fabricsim::gpu
