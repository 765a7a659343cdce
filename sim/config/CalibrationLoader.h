// CalibrationLoader: reads a calibration file and applies it to a GPU model and collective tuning.
//
// Models: the calibration YAML written by a fit against measurements (or by hand):
//   gpu:         {peak: 989TFLOPS, efficiency: {gemm: 0.62, attention: 0.41}, hbm_bandwidth: 3.35TBps}
//   collectives: {algorithm, channels, nvlink_channels, step_latency_nvlink, step_latency_network,
//                 protocol_efficiency, chunk_size, traffic_class, ring_model, protocol,
//                 ll_latency_scale, ll128_latency_scale, ll_network_latency_scale,
//                 ll128_network_latency_scale, ll_max_bandwidth, ll128_channel_bandwidth,
//                 net_overhead, nvls, nvls_efficiency, nvls_latency,
//                 nvls_pipeline, nvls_tree_efficiency, nvls_tree_hop_latency}
//                                                        (as a workload's `collectives:`)
//   fabric:      {nvlink_bandwidth: 480GBps, nic_bandwidth: 390Gbps}   effective rates fitted by
//                `fabricsim calibrate`; they describe the testbed, not a workload, so a workload
//                checks them and leaves them out; calibrationTopologySets() turns them into the
//                topology `--set` overrides (hosts.nvlink.bandwidth, links.host_speed) that
//                `fabricsim validate` applies and `fabricsim run --set` accepts
//   fit:         {...}   statistics of the fit; accepted and ignored
//   source:      "..."   free text; accepted and ignored
// Every key is optional; a key given replaces the value it was applied to (a workload applies the
// GPU preset first, then this file, then its own explicit keys). Also the shared readers of the
// `collectives:` block and of the GPU figures (peak, hbm_bandwidth, efficiency), which the
// workload loader uses for the same keys, so both files accept and check them identically.
// Problems are InputErrors naming the calibration file, line, column and key path; all at once.
// Leaves out: producing calibration files (sim/calibrate) and GPU presets (GpuPresets).
// Units: FLOP/s and bytes/s as double, Time (ps), Bytes, efficiencies as fractions in (0, 1].
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "sim/config/WorkloadSpec.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

/// Reads the calibration file at `path` and overwrites the fields of `gpu` and `tuning` it
/// gives. Throws InputError (naming `path`) on any problem, leaving both unchanged.
void applyCalibrationFile(const std::string& path, GpuSpec& gpu, CollectiveTuning& tuning);

/// Same, from text; `fileNameForMessages` names it in diagnostics.
void applyCalibrationYaml(const std::string& yamlText, const std::string& fileNameForMessages, GpuSpec& gpu,
                          CollectiveTuning& tuning);

/// Checks the calibration file at `path` and returns its `fabric:` block as topology overrides
/// ("hosts.nvlink.bandwidth=480GBps", "links.host_speed=390Gbps"), empty when it has none.
/// Throws InputError (naming `path`, line and key) on any problem in the file.
std::vector<std::string> calibrationTopologySets(const std::string& path);

/// Reads the `fabric:` map `node` (keys checked, rates with units) and appends its overrides.
void readFabricCalibration(YamlReader& r, const YAML::Node& node, std::vector<std::string>& sets);

/// Reads a `collectives:` map at `path` (its keys are checked) into `tuning`; problems go to `r`.
void readCollectiveTuning(YamlReader& r, const YAML::Node& node, const std::string& path,
                          CollectiveTuning& tuning);

/// Reads `peak`, `hbm_bandwidth` and `efficiency` (a number in (0, 1] for both kinds, or
/// {gemm, attention}) from the map `node` at `path` into `gpu`. The caller checks `node`'s keys.
void readGpuFigures(YamlReader& r, const YAML::Node& node, const std::string& path, GpuSpec& gpu);

}  // namespace fabricsim
