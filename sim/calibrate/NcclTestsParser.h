// NcclTestsParser: reads the text that an nccl-tests binary (all_reduce_perf, all_gather_perf,
// ...) or the gpu/ harness prints, verbatim, into a Measurement.
//
// Models the layout of nccl-tests 2.x: '#' comment lines (the parameter line, '# Using
// devices', one '#  Rank  r Group  g Pid  p on HOST device  d [bus] GPU MODEL' line per rank,
// the two-line column header with 'out-of-place' / 'in-place', '# Out of bounds values' and
// '# Avg bus bandwidth    : x'), and one data row per size: size, count, type, redop, root
// (the last two absent in old versions), then time, algbw, busbw, #wrong for out-of-place and
// for in-place; any figure may read 'N/A'. Lines that are neither (NCCL INFO/WARN lines, mpirun
// chatter, a shell prompt) are skipped. The operation comes from a '<op>_perf' binary name in
// the text (a 'Collective test starting' line or a command line), else from the file name, else
// from the caller. NCCL_ALGO=<algo> anywhere in the text (an environment dump or NCCL's 'set by
// environment' INFO line) sets the algorithm.
// Leaves out: several runs in one file (an error: split the log), nccl-tests' -R / -G modes'
// extra columns, per-rank host ranges under MPI with several GPUs per process (each rank line is
// still printed, so those work).
// Units: bytes, microseconds, GB/s as printed.
#pragma once

#include <optional>
#include <string>

#include "sim/calibrate/Measurement.h"

namespace fabricsim {

class NcclTestsParser {
 public:
  /// Parses `text`; `fileName` names it in diagnostics and may give the op ("all_gather_perf.log").
  /// `op` overrides what the text says. Throws InputError naming file and line for a malformed
  /// data row, no data rows, ranks that do not divide evenly over hosts, an unknown op.
  static Measurement parse(const std::string& text, const std::string& fileName,
                           std::optional<CollectiveOp> op = std::nullopt);
  /// Reads and parses the file at `path`.
  static Measurement parseFile(const std::string& path, std::optional<CollectiveOp> op = std::nullopt);
  /// True when `text` looks like nccl-tests output (has a data-table header or rank lines).
  static bool looksLikeNcclTests(const std::string& text);
};

}  // namespace fabricsim
