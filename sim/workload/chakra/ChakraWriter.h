// ChakraWriter: a JobTrace as a Chakra execution trace (one ET per rank, ASTRA-sim's
// PREFIX.<rank>.et, and its process groups as ASTRA-sim's comm-groups JSON), so that a job
// fabricsim generated runs in other Chakra tools, and ChakraReader reads it back exactly.
//
// Models: one iteration of each rank's program (its shared program expanded per rank), node id =
// op index: compute as COMP_NODE (duration_micros, rounded to the nearest microsecond as the
// schema has it, and the exact time in the attribute fabricsim_duration_ps); collectives as
// COMM_COLL_NODE with comm_type, comm_size (the rank's input: all-gather's shard, the others'
// whole buffer; ChakraReader's convention), pg_name "<communicator>.<group>" and the exact
// nccl-tests size in fabricsim_bytes (broadcast's root in fabricsim_root); sends and receives as
// COMM_SEND_NODE / COMM_RECV_NODE with comm_src, comm_dst, comm_size and comm_tag 0. An op's
// dependencies are data_deps; the op before it on its stream is a ctrl_dep (a Chakra trace has no
// streams, so stream order becomes explicit). Every node has is_cpu_op false.
// Leaves out: tensors and memory nodes; iterations beyond the first (the reader's workload
// repeats the trace).
// Units: microseconds and picoseconds as above, bytes.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/workload/JobTrace.h"

namespace fabricsim {

class ChakraWriter {
 public:
  /// The ET file of `rank` (a length-prefixed GlobalMetadata, then the nodes), as bytes.
  static std::string rankFile(const JobTrace& trace, uint32_t rank);
  /// The process groups every COMM_COLL_NODE names: {"<communicator>.<group>": [ranks]}.
  static nlohmann::json commGroups(const JobTrace& trace);
  /// pg_name of group `group` of communicator `comm`.
  static std::string groupName(const JobTrace& trace, uint32_t comm, uint32_t group);
};

}  // namespace fabricsim
