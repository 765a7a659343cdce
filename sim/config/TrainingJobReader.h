// TrainingJobReader: the keys of a `kind: training` workload: the model (a preset or its shape),
// the GPU (a preset, its figures read later over the calibration), the parallelism (Megatron's
// arguments, TP overlap settings) and the step switches (iterations, dtype, buckets, ...).
//
// Models: the keys through the workload schema, and the rules that relate them: heads divide
// hidden, kv_heads divide heads, top_k <= experts; tp x cp x ep x dp x pp and the batch
// arithmetic (global_batch a multiple of micro_batch x dp); options that need another (sequence
// parallelism needs tp > 1, overlap_param_gather the distributed optimizer, ...).
// Leaves out: whether the job fits the fabric (checked when it is placed) and the cost model.
// Units: Bytes for buckets; counts otherwise.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/config/WorkloadSpec.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

/// The `gpu:` preset of `root` into `gpu` (h100-sxm when absent); its figures come later.
void readGpuPreset(YamlReader& r, const YAML::Node& root, GpuSpec& gpu);
/// model, parallelism and the step switches of `root` into `t`; records every problem in `r`.
void readTraining(YamlReader& r, const YAML::Node& root, TrainingSpec& t);

}  // namespace fabricsim
