#include "sim/calibrate/ModelParameters.h"

#include <algorithm>
#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {

void ModelParameters::apply(TopologySpec& topology, CollectiveTuning& tuning) const {
  if (std::isfinite(nvlinkBandwidthGBps))
    topology.hosts.nvlinkBandwidth = BitRate::bps(std::llround(nvlinkBandwidthGBps * 8e9));
  if (std::isfinite(nicBandwidthGBps))
    topology.links.hostSpeed = BitRate::bps(std::llround(nicBandwidthGBps * 8e9));
  if (std::isfinite(stepLatencyNvlinkUs))
    tuning.stepLatencyNvlink = Time::ps(std::llround(stepLatencyNvlinkUs * 1e6));
  if (std::isfinite(stepLatencyNetworkUs))
    tuning.stepLatencyNetwork = Time::ps(std::llround(stepLatencyNetworkUs * 1e6));
  if (std::isfinite(nvlsEfficiency)) tuning.nvlsEfficiency = nvlsEfficiency;
  if (std::isfinite(nvlsLatencyUs)) tuning.nvlsLatency = Time::ps(std::llround(nvlsLatencyUs * 1e6));
  if (std::isfinite(nvlsTreeEfficiency)) tuning.nvlsTreeEfficiency = nvlsTreeEfficiency;
  if (std::isfinite(nvlsTreeHopUs)) tuning.nvlsTreeHopLatency = Time::ps(std::llround(nvlsTreeHopUs * 1e6));
  if (std::isfinite(nvlsPipelineMiB))
    tuning.nvlsPipeline = std::max<Bytes>(1, std::llround(nvlsPipelineMiB * 1024 * 1024));
}

ModelParameters ModelParameters::from(const TopologySpec& topology, const CollectiveTuning& tuning) {
  ModelParameters p;
  p.nvlinkBandwidthGBps = static_cast<double>(topology.hosts.nvlinkBandwidth.bitsPerSecond()) / 8e9;
  p.nicBandwidthGBps = static_cast<double>(topology.links.hostSpeed.bitsPerSecond()) / 8e9;
  p.stepLatencyNvlinkUs = tuning.stepLatencyNvlink.micros();
  p.stepLatencyNetworkUs = tuning.stepLatencyNetwork.micros();
  p.nvlsEfficiency = tuning.nvlsEfficiency;
  p.nvlsLatencyUs = tuning.nvlsLatency.micros();
  p.nvlsPipelineMiB = static_cast<double>(tuning.nvlsPipeline) / (1024 * 1024);
  p.nvlsTreeEfficiency = tuning.nvlsTreeEfficiency;
  p.nvlsTreeHopUs = tuning.nvlsTreeHop().micros();
  return p;
}

const std::vector<std::string>& ModelParameters::names() {
  static const std::vector<std::string> n = {"nvlink_bandwidth_GBps", "step_latency_nvlink_us",
                                             "nic_bandwidth_GBps", "step_latency_network_us",
                                             "nvls_efficiency", "nvls_latency_us", "nvls_pipeline_MiB", "nvls_tree_efficiency",
                                             "nvls_tree_hop_latency_us"};
  return n;
}

double ModelParameters::get(size_t i) const {
  switch (i) {
    case 0:
      return nvlinkBandwidthGBps;
    case 1:
      return stepLatencyNvlinkUs;
    case 2:
      return nicBandwidthGBps;
    case 3:
      return stepLatencyNetworkUs;
    case 4:
      return nvlsEfficiency;
    case 5:
      return nvlsLatencyUs;
    case 6:
      return nvlsPipelineMiB;
    case 7:
      return nvlsTreeEfficiency;
    case 8:
      return nvlsTreeHopUs;
  }
  SIM_CHECK(false, "parameter index out of range");
  return kUnset;
}

void ModelParameters::set(size_t i, double v) {
  switch (i) {
    case 0:
      nvlinkBandwidthGBps = v;
      return;
    case 1:
      stepLatencyNvlinkUs = v;
      return;
    case 2:
      nicBandwidthGBps = v;
      return;
    case 3:
      stepLatencyNetworkUs = v;
      return;
    case 4:
      nvlsEfficiency = v;
      return;
    case 5:
      nvlsLatencyUs = v;
      return;
    case 6:
      nvlsPipelineMiB = v;
      return;
    case 7:
      nvlsTreeEfficiency = v;
      return;
    case 8:
      nvlsTreeHopUs = v;
      return;
  }
  SIM_CHECK(false, "parameter index out of range");
}

}  // namespace fabricsim
