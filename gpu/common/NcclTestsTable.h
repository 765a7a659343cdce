// NcclTestsTable: writes a collective sweep in nccl-tests' exact text layout.
//
// Models: the output of nccl-tests (2.13 and later) byte for byte where it matters to parsers:
// the "# Collective test starting" and "# nThread ..." lines, "# Using devices" with one
// "#  Rank ..." line per rank, the three '#' header lines (out-of-place / in-place; size, count,
// type, redop, root, time, algbw, busbw, #wrong; units), one row per size with the same printf
// formats ("%12li  %12li  %8s  %6s  %6i" then "  %7s  %6.2f  %6.2f  %5s" per variant, the time
// printed with 2, 1 or 0 decimals below 100 us, below 10 ms and above), and the closing
// "# Out of bounds values" and "# Avg bus bandwidth" lines (the mean busbw over every printed
// out-of-place and in-place value, printed with %g). A parser of nccl-tests logs reads ours.
// Leaves out: nccl-tests' CSV output (-F) and its per-thread lines (this harness has no -t).
// Units: as CollectiveResult (bytes, elements, us, GB/s).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gpu/common/CollectiveResult.h"

namespace fabricsim::gpu {

class NcclTestsTable {
 public:
  /// nccl-tests' program name for a collective ("all_reduce_perf", "alltoall_perf", ...).
  static std::string programName(Collective c);
  /// Everything above the first row: test name, parameters, devices, column headers.
  static void writePreamble(std::ostream& os, const CollectiveSweepParams& params,
                            const std::vector<RankDevice>& devices);
  /// One row (no trailing text after the last column; ends with '\n').
  static void writeRow(std::ostream& os, const CollectiveSweepParams& params, const CollectiveRow& row);
  /// The closing lines; `rows` gives the average bus bandwidth and the error count.
  static void writeFooter(std::ostream& os, const std::vector<CollectiveRow>& rows);
  /// nccl-tests' time column text (7 characters) for `us` microseconds.
  static std::string formatTime(double us);
  /// The mean busbw over all printed values (out-of-place and in-place), 0 without rows.
  static double averageBusBandwidth(const std::vector<CollectiveRow>& rows);
  /// Variants (out-of-place or in-place calls) with a non-zero #wrong, as nccl-tests counts them.
  static int failedChecks(const std::vector<CollectiveRow>& rows);
};

}  // namespace fabricsim::gpu
