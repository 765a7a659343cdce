// CollectiveReport: the JSON document of one collective sweep.
//
// Models: the harness's machine-readable output, the format `fabricsim calibrate` and `validate`
// read (MeasurementReader), schema 2. Top-level keys: tool ("fabricsim-gpu-collectives"), schema,
// op (fabricsim's name: all_reduce, all_gather, ...), nccl_tests_name, ranks, processes,
// gpus_per_process, hosts (the host names, in rank order), gpus_per_host, gpu {model, count},
// nccl {version, env (the NCCL_* variables of the run)}, datatype, redop, root, params
// {min_bytes, max_bytes, step_factor, step_bytes, warmup_iters, iters, check, average}, system
// (as given by the caller: GPUs with their clocks, hosts with their NICs, versions), results[]
// {size_bytes, count, type, redop, root, out_of_place and in_place {time_us, algbw_GBps,
// busbw_GBps, wrong (null when unchecked)}, nccl {algorithm, protocol, channels} (null when its
// log did not say)}, avg_busbw_GBps and failed_checks (as nccl-tests' closing lines). hosts, gpu
// and nccl come from the system description (its hosts[].hostname, gpu_model, gpu_count,
// gpus_per_host, nccl_version and nccl_env; missing ones are null or empty).
// Leaves out: the text table (NcclTestsTable).
// Units: bytes, elements, microseconds, GB/s (10^9 B/s).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/common/CollectiveResult.h"

namespace fabricsim::gpu {

class CollectiveReport {
 public:
  static constexpr int kSchema = 2;
  static constexpr const char* kTool = "fabricsim-gpu-collectives";
  static nlohmann::json toJson(const CollectiveSweepParams& params, const std::vector<CollectiveRow>& rows,
                               const nlohmann::json& system);
  static nlohmann::json measurementJson(const CollectiveMeasurement& m);
};

}  // namespace fabricsim::gpu
