// CollectiveReport: the JSON document of one collective sweep.
//
// Models: the harness's machine-readable output, read by `fabricsim calibrate` next to nccl-tests
// text logs. Top-level keys: tool, schema (1), collective (fabricsim's name), nccl_tests_name,
// ranks, processes, gpus_per_process, datatype, redop, root, params {min_bytes, max_bytes,
// step_factor, step_bytes, warmup_iters, iters, check, average}, system (as given by the caller:
// GPUs, hosts, NICs, versions, NCCL environment), results[] {size_bytes, count, type, redop, root,
// out_of_place and in_place {time_us, algbw_GBps, busbw_GBps, wrong (null when unchecked)}},
// avg_busbw_GBps and failed_checks (as nccl-tests' closing lines).
// Leaves out: the text table (NcclTestsTable).
// Units: bytes, elements, microseconds, GB/s (10^9 B/s).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/common/CollectiveResult.h"

namespace fabricsim::gpu {

class CollectiveReport {
 public:
  static constexpr int kSchema = 1;
  static nlohmann::json toJson(const CollectiveSweepParams& params, const std::vector<CollectiveRow>& rows,
                               const nlohmann::json& system);
  static nlohmann::json measurementJson(const CollectiveMeasurement& m);
};

}  // namespace fabricsim::gpu
