#include "sim/calibrate/ModelParameters.h"

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
}

ModelParameters ModelParameters::from(const TopologySpec& topology, const CollectiveTuning& tuning) {
  ModelParameters p;
  p.nvlinkBandwidthGBps = static_cast<double>(topology.hosts.nvlinkBandwidth.bitsPerSecond()) / 8e9;
  p.nicBandwidthGBps = static_cast<double>(topology.links.hostSpeed.bitsPerSecond()) / 8e9;
  p.stepLatencyNvlinkUs = tuning.stepLatencyNvlink.micros();
  p.stepLatencyNetworkUs = tuning.stepLatencyNetwork.micros();
  return p;
}

const std::vector<std::string>& ModelParameters::names() {
  static const std::vector<std::string> n = {"nvlink_bandwidth_GBps", "step_latency_nvlink_us",
                                             "nic_bandwidth_GBps", "step_latency_network_us"};
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
  }
  SIM_CHECK(false, "parameter index out of range");
}

}  // namespace fabricsim
