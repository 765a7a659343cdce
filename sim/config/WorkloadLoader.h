// WorkloadLoader: reads a workload YAML file into a WorkloadSpec.
//
// Models: the workload schema of DESIGN.md section 5, `kind:` one of
//   pattern     pattern (permutation | incast | all-to-all), message_size, start, repetitions, gap,
//               incast {senders, receiver}, traffic_class, gpus {first, count}, qps_per_pair;
//   collective  operation, algorithm (shorthand for collectives.algorithm), sizes {min, max,
//               factor | step}, ranks | hosts [+ gpus_per_host], warmup, iterations, data_type, root;
//   training    model (preset name or map, optionally on a preset), gpu (preset name or map:
//               preset, peak, hbm_bandwidth, efficiency), parallelism {tp, pp, dp, micro_batch,
//               global_batch, schedule, virtual_stages, sequence_parallel, distributed_optimizer,
//               recompute}, iterations, dtype, dp_bucket, communication, tp_granularity;
//   trace       trace (a path relative to the workload file);
// and, for collective, training and trace, the common keys name, start, collectives {...}
// (CollectiveTuning), placement (policy name or {policy, first_gpu}) and calibration (a
// calibration file relative to the workload file, applied with precedence preset < calibration
// file < the workload's explicit keys). `--set key.path=value` overrides are applied to the
// document before validation. Units, ranges, cross-key rules (global_batch divisible by
// micro_batch * dp, hidden by heads, heads by kv_heads, ...) and unknown keys are checked, and
// every problem (including the calibration file's) is reported in one InputError naming file,
// line, column and key path.
// Leaves out: checks against a particular topology (e.g. a receiver or rank count beyond the
// fabric's GPUs) and the trace file's existence and contents, which the runtime checks once it
// knows the fabric.
// Units: Bytes, Time (ps), FLOP/s and bytes/s as double.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

/// Reads and validates the workload file at `path`, after applying each "key.path=value" of
/// `sets` in order. Throws InputError on any problem.
WorkloadSpec loadWorkloadFile(const std::string& path, const std::vector<std::string>& sets = {});

/// Same, from text; `fileNameForMessages` names it in diagnostics, gives the default name and
/// the directory that `calibration` and `trace` paths are relative to.
WorkloadSpec parseWorkloadYaml(const std::string& yamlText, const std::string& fileNameForMessages,
                               const std::vector<std::string>& sets = {});

const char* toString(PatternKind k);
/// "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv".
const char* toString(CollectiveOp op);
/// "auto", "ring", "tree", "hierarchical", "direct".
const char* toString(CollectiveAlgorithm a);
const char* toString(CollectiveProtocol p);
std::optional<CollectiveProtocol> parseCollectiveProtocol(std::string_view s);
/// An NCCL_PROTO list ("LL,Simple", "^LL128"; names in any case) as CollectiveTuning::
/// protocolsAllowed bits; nullopt for an unknown name or a list that allows nothing.
std::optional<uint8_t> parseNcclProtoList(std::string_view s);
/// The bits as an NCCL_PROTO list ("LL,LL128,Simple" order).
std::string ncclProtoList(uint8_t allowed);
/// An NCCL_ALGO list ("Ring,Tree", "^NVLS,NVLSTree"; NCCL's names in any case, nvls_tree too) as
/// CollectiveTuning::algorithmsAllowed bits; nullopt for an unknown name or a list that allows
/// nothing.
std::optional<uint8_t> parseNcclAlgoList(std::string_view s);
/// A collectives.algorithm / collectives.protocol setting: one choice (every algorithm or
/// protocol allowed), or an NCCL_ALGO / NCCL_PROTO list (auto among those); nullopt for neither.
std::optional<std::pair<CollectiveAlgorithm, uint8_t>> parseAlgorithmSetting(std::string_view s);
std::optional<std::pair<CollectiveProtocol, uint8_t>> parseProtocolSetting(std::string_view s);
/// The bits as an NCCL_ALGO list (NCCL's order and spelling).
std::string ncclAlgoList(uint8_t allowed);
/// "rail-aligned", "in-order", "random-hosts", "random".
const char* toString(PlacementPolicy p);

/// Inverses of toString; nullopt for an unknown spelling.
std::optional<CollectiveOp> parseCollectiveOp(std::string_view s);
std::optional<CollectiveAlgorithm> parseCollectiveAlgorithm(std::string_view s);
std::optional<PlacementPolicy> parsePlacementPolicy(std::string_view s);

}  // namespace fabricsim
