// Measurement: one measured collective sweep (an nccl-tests run, a harness run or a published
// table), the unit that `fabricsim calibrate` fits and `fabricsim validate` compares against.
//
// Models: the operation, the ranks and how they sit on hosts (ranks = hosts x gpusPerHost), the
// GPU model, the NCCL algorithm when the run forced one (NCCL_ALGO), and one point per message
// size with the out-of-place and in-place time and bandwidths as nccl-tests prints them.
// Leaves out: per-rank timings (nccl-tests prints the slowest rank's), data types beyond their
// element size, and anything the source did not print (a missing figure is NaN).
// Units: bytes; time in microseconds; algbw and busbw in GB/s (1e9 bytes per second), the
// nccl-tests convention.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

struct Measurement {
  /// One row of a sweep. NaN marks a figure the source did not give ('N/A', or a table that
  /// publishes busbw only).
  struct Point {
    int64_t sizeBytes = 0;
    uint64_t count = 0;  ///< elements (0 when not given)
    double oopTimeUs = std::numeric_limits<double>::quiet_NaN();
    double oopAlgbwGBps = std::numeric_limits<double>::quiet_NaN();
    double oopBusbwGBps = std::numeric_limits<double>::quiet_NaN();
    int64_t oopWrong = 0;  ///< -1 when 'N/A'
    double ipTimeUs = std::numeric_limits<double>::quiet_NaN();
    double ipAlgbwGBps = std::numeric_limits<double>::quiet_NaN();
    double ipBusbwGBps = std::numeric_limits<double>::quiet_NaN();
    int64_t ipWrong = 0;
    int line = 0;  ///< where it was read (0 when not from a text file)
    /// What NCCL ran this size with, where the source recorded it (the gpu/ harness's JSON):
    /// algorithm ("ring", "tree", "nvls", "nvls_tree", ...), protocol ("ll", "ll128", "simple")
    /// and channels; empty / 0 when not recorded.
    std::string ncclAlgorithm;
    std::string ncclProtocol;
    int ncclChannels = 0;

    /// The time the fit uses (us): out-of-place when printed, else in-place, else derived from
    /// busbw with the op's factor. NaN when none is available.
    double timeUs(CollectiveOp op, uint32_t ranks) const;
    /// busbw the comparison uses (GB/s): out-of-place when printed, else in-place, else from time.
    double busbwGBps(CollectiveOp op, uint32_t ranks) const;
  };

  std::string file;   ///< where it was read from
  std::string label;  ///< file, or file#table-id for a file with several tables
  CollectiveOp op = CollectiveOp::AllReduce;
  uint32_t ranks = 0;
  uint32_t hosts = 0;
  uint32_t gpusPerHost = 0;
  std::string gpuModel;   ///< e.g. "NVIDIA H100 80GB HBM3"; empty when not given
  std::string algorithm;  ///< NCCL_ALGO of the run, lower case ("ring", "tree", ...); empty = NCCL's choice
  /// NCCL_PROTO of the run as written ("Simple", "LL,LL128", "^LL128"); empty = NCCL's choice.
  std::string protocol;
  /// The run's channel bounds, NCCL_MIN_CTAS / NCCL_MIN_NCHANNELS and NCCL_MAX_CTAS /
  /// NCCL_MAX_NCHANNELS (the larger minimum, the smaller maximum); 0 = not set.
  int minChannels = 0;
  int maxChannels = 0;
  /// Reads NCCL_{MIN,MAX}_{CTAS,NCHANNELS} from `name` = `value` into minChannels/maxChannels
  /// (other names are ignored); false for a value that is not a whole number from 1 to 64.
  bool setChannelBound(const std::string& name, const std::string& value);
  std::string dataType = "float";
  double avgBusbwGBps = std::numeric_limits<double>::quiet_NaN();  ///< the '# Avg bus bandwidth' line
  std::vector<std::string> hostNames;  ///< distinct hosts in rank order (nccl-tests rank lines)
  std::vector<Point> points;           ///< ascending size
};

/// nccl-tests' busbw/algbw factor for `op` on `ranks` ranks (PERFORMANCE.md).
double busbwFactor(CollectiveOp op, uint32_t ranks);

}  // namespace fabricsim
