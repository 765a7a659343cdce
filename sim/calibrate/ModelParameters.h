// ModelParameters: the free parameters of the collective model that a calibration fits.
//
// Models: nine effective figures of the simulator's own collective model: the NVLink bandwidth
// per GPU and direction (topology hosts.nvlink.bandwidth), the per-step (per-hop) software
// latency of steps inside a host and of steps across the network (collectives.
// step_latency_nvlink / step_latency_network), the NIC bandwidth (topology links.host_speed),
// and, for hosts with NVLink SHARP (collectives.nvls), the NVLS all-reduce's efficiency (the
// fraction of the NVLink bandwidth it reaches), its fixed latency and the data in flight in its
// pipeline (collectives.nvls_efficiency / nvls_latency / nvls_pipeline), and the factor on
// that efficiency inside the multi-host nvls_tree (collectives.nvls_tree_efficiency) and the
// step latency of its inter-host hops (collectives.nvls_tree_hop_latency). Each is a physical figure
// fitted only within its bounds (CalibrationFit::bounds states them with their sources: link
// rates, NCCL's hardware latencies and efficiencies, NVLS channels x chunk for the pipeline). The NVLink and wire latencies of the topology add to each hop's latency exactly as the
// step latencies do, so they are not separately identifiable: the fit holds them at the
// testbed's values and moves the step latencies. A NaN figure is not set (the testbed's or the
// tuning's value stands).
// Leaves out: the values themselves (sim/calibrate/CalibrationFit finds them) and the compute
// side (GpuSpec efficiencies, fitted by ComputeFit).
// Units: bandwidths in GB/s (1e9 bytes/s), latencies in microseconds, efficiency a fraction.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

struct ModelParameters {
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
  double nvlinkBandwidthGBps = kUnset;
  double stepLatencyNvlinkUs = kUnset;
  double nicBandwidthGBps = kUnset;
  double stepLatencyNetworkUs = kUnset;
  double nvlsEfficiency = kUnset;
  double nvlsLatencyUs = kUnset;
  double nvlsPipelineMiB = kUnset;
  double nvlsTreeEfficiency = kUnset;
  double nvlsTreeHopUs = kUnset;

  /// Index of each figure in names(), get() and set().
  enum Index : size_t { kNvlinkBandwidth, kStepLatencyNvlink, kNicBandwidth, kStepLatencyNetwork,
                        kNvlsEfficiency, kNvlsLatency, kNvlsPipeline,
                        kNvlsTreeEfficiency, kNvlsTreeHop, kCount };

  /// Writes the set figures into the testbed spec and the collective tuning.
  void apply(TopologySpec& topology, CollectiveTuning& tuning) const;
  /// The testbed's and tuning's values of all nine (the starting point of a fit).
  static ModelParameters from(const TopologySpec& topology, const CollectiveTuning& tuning);

  /// Parameter names as the calibration file's fit block writes them, in this order:
  /// nvlink_bandwidth_GBps, step_latency_nvlink_us, nic_bandwidth_GBps, step_latency_network_us,
  /// nvls_efficiency, nvls_latency_us, nvls_pipeline_MiB, nvls_tree_efficiency,
  /// nvls_tree_hop_latency_us.
  static const std::vector<std::string>& names();
  double get(size_t i) const;
  void set(size_t i, double v);
};

}  // namespace fabricsim
