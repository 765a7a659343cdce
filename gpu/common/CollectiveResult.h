// CollectiveResult: one collective sweep's measured rows and the parameters it ran with.
//
// Models: what nccl-tests prints per size (size, count, type, redop, root, then time, algbw,
// busbw and #wrong for the out-of-place and the in-place call) and the sweep's parameters.
// Plain data: NcclTestsTable prints it, CollectiveReport turns it into JSON.
// Leaves out: the system description (HostInfo, DeviceInfo).
// Each row also keeps what NCCL ran it with (algorithm, protocol, channels) when its log says so.
// Units: bytes, elements, microseconds, GB/s (10^9 B/s).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/common/Collective.h"
#include "gpu/common/DataType.h"
#include "gpu/common/NcclTuningLog.h"

namespace fabricsim::gpu {

/// One timed variant (out-of-place or in-place) of one size.
struct CollectiveMeasurement {
  double timeUs = 0;     ///< mean time of one call, microseconds (averaged over ranks per --average)
  double algBwGBps = 0;  ///< nccl-tests algbw, GB/s
  double busBwGBps = 0;  ///< nccl-tests busbw, GB/s
  /// Wrong elements summed over ranks; nullopt when not checked (check disabled, in-place alltoall).
  std::optional<int64_t> wrong;
};

struct CollectiveRow {
  size_t bytes = 0;  ///< nccl-tests' size column: max(send, recv) bytes per rank
  size_t count = 0;  ///< nccl-tests' count column (elements passed to NCCL)
  CollectiveMeasurement outOfPlace;
  CollectiveMeasurement inPlace;
  /// What NCCL ran this size with, from its tuning log (NcclTuningLog); nullopt when not known.
  std::optional<NcclChoice> nccl;
};

/// The parameters of a sweep, as nccl-tests prints them in its first line.
struct CollectiveSweepParams {
  Collective collective = Collective::kAllReduce;
  DataType type = DataType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  size_t minBytes = 0;
  size_t maxBytes = 0;
  size_t stepFactor = 1;
  size_t stepBytes = 0;
  int warmupIters = 0;
  int iters = 0;
  int checkIters = 0;      ///< nccl-tests' "validation"
  int average = 1;         ///< 0 rank 0, 1 mean, 2 min, 3 max over ranks
  int gpusPerProcess = 1;  ///< nccl-tests' nGpus
  int ranks = 1;           ///< total ranks (processes * gpusPerProcess)
  int processes = 1;
};

/// One GPU (one rank) as nccl-tests' "# Using devices" lines list it.
struct RankDevice {
  int rank = 0;
  int group = 0;
  int pid = 0;
  std::string host;
  int device = 0;
  int pciBusId = 0;
  std::string name;
};

}  // namespace fabricsim::gpu
