// TpOverlapReader: `parallelism.tp_comm_overlap_cfg` of a training workload, Transformer
// Engine's userbuffers config (Megatron's tp_comm_overlap_cfg, NeMo's ub_cfg) as a map from
// TE's slot names to {method, num_sm, set_sm_margin, num_splits}.
//
// Models: the ten slot names (qkv_fprop, proj_fprop, fc1_fprop, fc2_fprop, qkv_dgrad,
// qkv_wgrad, proj_dgrad, fc1_dgrad, fc1_wgrad, fc2_dgrad); per slot, the method
// (ring_exchange | pipeline | bulk), the SMs its communication kernel takes (1 .. 32, TE's
// UB_MAX_SM, and below the GPU's SMs)
// and whether the GEMM gives them up for its whole duration, and a pipelined GEMM's chunks
// (num_splits, 1 .. 64; the exposed last chunk of an output projection's reduce-scatter). A slot
// not given keeps TE's default (TpOverlapConfig); a key given replaces only that field.
// Leaves out: TE's other kernel keys (cga_size, aggregate, atomic_gemm, fp8_buf): they are
// refused with an error naming the keys read, since nothing here models them.
// Units: SM counts.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/config/WorkloadSpec.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

/// Reads parallelism["tp_comm_overlap_cfg"] (if present) into cfg; records every problem in `r`.
void readTpOverlapConfig(YamlReader& r, const YAML::Node& parallelism, TpOverlapConfig& cfg);

}  // namespace fabricsim
