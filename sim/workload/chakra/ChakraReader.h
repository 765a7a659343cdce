// ChakraReader: a Chakra execution trace (MLCommons Chakra ET, the format ASTRA-sim runs; one
// file per rank, PREFIX.<rank>.et) as a JobTrace, so that a job recorded from PyTorch (or
// exported by `fabricsim trace --format chakra`) runs on any fabric.
//
// Models: each rank's nodes as its own program, in an order that respects every data and control
// dependency (ties by position in the file), each op waiting for its dependencies:
//   - COMP_NODE: GPU compute of duration_micros (or the exact `fabricsim_duration_ps` attribute
//     fabricsim's writer adds); on the rank's one compute stream, one kernel after another;
//   - COMM_COLL_NODE: the collective `comm_type` (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER,
//     REDUCE_SCATTER_BLOCK, BROADCAST, ALL_TO_ALL; BARRIER as a collective of no bytes) over the
//     ranks of process group `pg_name` (from the comm-groups file, ASTRA-sim's
//     {"pg_name": [ranks]}; without `pg_name`, every rank), `comm_size` bytes being the rank's
//     input as Chakra's PyTorch converter records it (all-reduce, broadcast: the buffer;
//     all-gather: the rank's shard, N of them gathered; reduce-scatter: the whole input;
//     all-to-all: the rank's send buffer); one stream per process group, as NCCL runs a
//     communicator's calls in order on its stream;
//   - COMM_SEND_NODE / COMM_RECV_NODE: `comm_size` bytes to `comm_dst` / from `comm_src`, one
//     stream per peer and direction; the k-th send from a rank to a peer meets the peer's k-th
//     receive from it (tags are not matched);
//   - nodes that take no time on the GPU (is_cpu_op compute, METADATA, MEM_LOAD / MEM_STORE and
//     the rest) are left out and their dependencies handed to the nodes that depend on them.
// Integer attributes are read from whichever integer field the writer used. The job repeats
// `iterations` times (a Chakra trace holds one).
// Leaves out: tensor shapes and memory, collectives other than those above (REDUCE, GATHER,
// SCATTER are refused), num_ops-based compute (a node without a duration is an error), send /
// recv tags.
// Errors (InputError, exit 2): a missing or truncated file, a node that is not a valid message,
// duplicate ids, a dependency on an unknown id, a cycle, a missing attribute, an unknown process
// group, a rank outside the job, a send with no matching receive; each names the file and the
// node (its id and name).
// Units: Time (ps), Bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/workload/JobTrace.h"

namespace fabricsim {

struct ChakraInput {
  std::string prefix;      ///< files PREFIX.0.et, PREFIX.1.et, ...
  std::string commGroups;  ///< optional JSON {"pg_name": [ranks]}
  uint32_t ranks = 0;      ///< 0: every consecutive PREFIX.<r>.et from 0
  int iterations = 1;
  std::string name;    ///< the job's name
  std::string source;  ///< the workload file (for errors about the whole trace)
};

class ChakraReader {
 public:
  /// Reads and finalizes the trace; throws InputError as described above.
  static std::shared_ptr<JobTrace> read(const ChakraInput& in);
  /// PREFIX.<rank>.et.
  static std::string rankFile(const std::string& prefix, uint32_t rank);
};

}  // namespace fabricsim
