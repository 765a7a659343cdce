#include "sim/routing/PathLatency.h"

#include "sim/core/Error.h"

namespace fabricsim {

Time pathFixedLatency(const Topology& topo, const EcmpFib& fib, uint32_t srcNic, uint32_t dstNic, uint64_t tuple,
                      uint32_t frameBytes, Time switchLatency) {
  PortId p = topo.nicPort(srcNic);
  Time latency = topo.portLatency(p);
  NodeId at = topo.peerNode(p);
  while (!topo.isHost(at)) {
    const PortId next = fib.nextHop(at, dstNic, tuple);
    SIM_CHECK(next != kInvalid, "no route from switch " + topo.node(at).name + " to NIC " + std::to_string(dstNic));
    latency += switchLatency + topo.portLatency(next) + serializationTime(frameBytes, topo.portRate(next));
    at = topo.peerNode(next);
  }
  return latency;
}

}  // namespace fabricsim
