// CollectiveOptions: the command line of the collective benchmark (fabricsim-gpu-collectives).
//
// Models: nccl-tests' flags with the same letters and defaults where they exist (-b minbytes,
// -e maxbytes, -f stepfactor, -i stepbytes, -g ngpus, -n iters, -w warmup_iters, -c check,
// -o op, -d datatype, -r root, -a average), plus the collective (-C / --collective, since one
// binary runs all six), --json PATH for the JSON document, --seed and --help.
// Leaves out: nccl-tests' -t (threads), -m (aggregated iterations), -G (CUDA graphs), -z, -y,
// -p, -T, -F.
// Units: bytes (sizes accept K, M, G suffixes as nccl-tests does), iteration counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/common/CollectiveResult.h"

namespace fabricsim::gpu {

class CollectiveOptions {
 public:
  CollectiveSweepParams params;  ///< ranks and processes are filled in at run time
  std::string jsonPath;          ///< empty: no JSON document
  uint64_t seed = 1;
  bool help = false;
  std::string helpText;

  /// Parses argv (argv[0] is the program name). Throws std::invalid_argument with a message that
  /// names the bad option on any error (unknown option, bad size, type, op or collective, min > max,
  /// factor < 2 with step 0, iters < 1, negative warm-up, check or root, average outside 0-3, ngpus < 1).
  static CollectiveOptions parse(int argc, const char* const* argv);
  /// The sizes this sweep visits (SizeSweep over min, max, factor, step).
  std::vector<size_t> sizes() const;
};

}  // namespace fabricsim::gpu
