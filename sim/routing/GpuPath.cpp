#include "sim/routing/GpuPath.h"

#include <algorithm>

#include "sim/core/Error.h"
#include "sim/routing/FlowHash.h"

namespace fabricsim {

GpuPath::GpuPath(const Topology& topo, const EcmpFib& fib, const TopologySpec& spec, uint32_t frameBytes)
    : topo_(topo), fib_(fib), spec_(spec), frameBytes_(frameBytes) {}

uint32_t GpuPath::sourceNic(uint32_t srcGpu, uint32_t dstGpu) const {
  const uint32_t own = topo_.nicOfGpu(srcGpu);
  const uint32_t dstNic = topo_.nicOfGpu(dstGpu);
  if (fib_.reachable(topo_.attachedSwitch(own), dstNic)) return own;
  const uint32_t alt = topo_.hostOfGpu(srcGpu) * topo_.nicsPerHost() + topo_.localNic(dstNic);
  SIM_CHECK(fib_.reachable(topo_.attachedSwitch(alt), dstNic),
            "GPU " + std::to_string(srcGpu) + " cannot reach GPU " + std::to_string(dstGpu));
  return alt;
}

Time GpuPath::networkLatency(uint32_t srcNic, uint32_t dstNic, uint64_t tuple, uint32_t frame) const {
  PortId p = topo_.nicPort(srcNic);
  Time latency = topo_.portLatency(p);
  NodeId at = topo_.peerNode(p);
  while (!topo_.isHost(at)) {
    const PortId next = fib_.nextHop(at, dstNic, tuple);
    SIM_CHECK(next != kInvalid, "no route from switch " + topo_.node(at).name + " to NIC " + std::to_string(dstNic));
    latency += spec_.sw.latency + topo_.portLatency(next) + serializationTime(frame, topo_.portRate(next));
    at = topo_.peerNode(next);
  }
  return latency;
}

Time GpuPath::latency(uint32_t srcGpu, uint32_t dstGpu) const {
  if (topo_.hostOfGpu(srcGpu) == topo_.hostOfGpu(dstGpu)) return spec_.hosts.nvlinkLatency;
  const uint32_t srcNic = sourceNic(srcGpu, dstGpu);
  const uint32_t dstNic = topo_.nicOfGpu(dstGpu);
  return networkLatency(srcNic, dstNic, fib_.queuePairTuple(srcNic, dstNic, 0, 0), frameBytes_);
}

double GpuPath::rate(uint32_t srcGpu, uint32_t dstGpu) const {
  if (topo_.hostOfGpu(srcGpu) == topo_.hostOfGpu(dstGpu))
    return static_cast<double>(spec_.hosts.nvlinkBandwidth.bitsPerSecond()) / 8;
  const BitRate nic = std::min(topo_.portRate(topo_.nicPort(topo_.nicOfGpu(srcGpu))),
                               topo_.portRate(topo_.nicPort(topo_.nicOfGpu(dstGpu))));
  return static_cast<double>(nic.bitsPerSecond()) / 8 * static_cast<double>(spec_.links.mtu) / frameBytes_;
}

}  // namespace fabricsim
