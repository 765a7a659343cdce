#include "sim/routing/GpuPath.h"

#include <algorithm>

#include "sim/core/Error.h"
#include "sim/routing/FlowHash.h"

namespace fabricsim {

GpuPath::GpuPath(const Topology& topo, const EcmpFib& fib, const TopologySpec& spec, uint32_t frameBytes)
    : topo_(topo), fib_(fib), reference_(&fib), spec_(spec), frameBytes_(frameBytes) {}

uint32_t GpuPath::sourceNic(uint32_t srcGpu, uint32_t dstGpu) const {
  const uint32_t own = topo_.nicOfGpu(srcGpu);
  const uint32_t dstNic = topo_.nicOfGpu(dstGpu);
  if (fib_.reachable(topo_.attachedSwitch(own), dstNic)) return own;
  const uint32_t alt = topo_.hostOfGpu(srcGpu) * topo_.nicsPerHost() + topo_.localNic(dstNic);
  SIM_CHECK(fib_.reachable(topo_.attachedSwitch(alt), dstNic),
            "GPU " + std::to_string(srcGpu) + " cannot reach GPU " + std::to_string(dstGpu));
  return alt;
}

bool GpuPath::failoverNics(uint32_t& src, uint32_t& dst, const std::vector<uint8_t>& nicUp) const {
  const uint32_t perHost = static_cast<uint32_t>(topo_.nicsPerHost());
  // Candidates in order of preference: the current NIC if it is up, then the host's others.
  auto options = [&](uint32_t current, std::vector<uint32_t>& out) {
    out.clear();
    if (nicUp[current]) out.push_back(current);
    const uint32_t first = topo_.hostOfNic(current) * perHost;
    for (uint32_t n = first; n < first + perHost; ++n)
      if (n != current && nicUp[n]) out.push_back(n);
  };
  std::vector<uint32_t> srcs, dsts;
  options(src, srcs);
  options(dst, dsts);
  for (uint32_t s : srcs)
    for (uint32_t d : dsts)
      if (fib_.reachable(topo_.attachedSwitch(s), d)) {
        src = s;
        dst = d;
        return true;
      }
  return false;
}

void GpuPath::idealPath(uint32_t srcNic, uint32_t dstNic, uint64_t tuple, std::vector<PortId>& hops) const {
  auto walk = [&](auto next) {
    hops.clear();
    PortId p = topo_.nicPort(srcNic);
    hops.push_back(p);
    for (NodeId at = topo_.peerNode(p); !topo_.isHost(at); at = topo_.peerNode(p)) {
      p = next(at);
      if (p == kInvalid || hops.size() > topo_.nodeCount()) return false;  // no route, or a loop
      hops.push_back(p);
    }
    return true;
  };
  if (lft_ && walk([&](NodeId at) { return lft_->port(at, tuple); })) return;
  // Ethernet, or LFTs being recomputed: the reference tables (any minimal path of a Clos has the
  // same links per tier, so any tuple gives the same unloaded time).
  const uint64_t hash = lft_ ? reference_->queuePairTuple(srcNic, dstNic, 0, 0) : tuple;
  SIM_CHECK(walk([&](NodeId at) { return reference_->nextHop(at, dstNic, hash); }),
            "the reference tables have no loop-free route to NIC " + std::to_string(dstNic));
}

Time GpuPath::networkLatency(uint32_t srcNic, uint32_t dstNic, uint64_t tuple, uint32_t frame) const {
  std::vector<PortId> hops;
  idealPath(srcNic, dstNic, tuple, hops);
  Time latency = topo_.portLatency(hops[0]);
  for (size_t i = 1; i < hops.size(); ++i)
    latency +=
        spec_.sw.latency + topo_.portLatency(hops[i]) + serializationTime(frame, topo_.portRate(hops[i]));
  return latency;
}

Time GpuPath::latency(uint32_t srcGpu, uint32_t dstGpu) const {
  if (topo_.hostOfGpu(srcGpu) == topo_.hostOfGpu(dstGpu)) return spec_.hosts.nvlinkLatency;
  const uint32_t srcNic = sourceNic(srcGpu, dstGpu);
  const uint32_t dstNic = topo_.nicOfGpu(dstGpu);
  return networkLatency(srcNic, dstNic, queuePairTuple(srcNic, dstNic, 0, 0), frameBytes_);
}

uint64_t GpuPath::queuePairTuple(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex,
                                 bool reverse) const {
  // InfiniBand forwards on the DLID: the data direction carries the destination's, the ACKs the
  // source's. Ethernet hashes the configured header fields of the five-tuple.
  if (lids_) return lids_->dlid(reverse ? srcNic : dstNic, qpIndex);
  return fib_.queuePairTuple(srcNic, dstNic, tc, qpIndex, reverse);
}

double GpuPath::rate(uint32_t srcGpu, uint32_t dstGpu) const {
  if (topo_.hostOfGpu(srcGpu) == topo_.hostOfGpu(dstGpu))
    return static_cast<double>(spec_.hosts.nvlinkBandwidth.bitsPerSecond()) / 8;
  const BitRate nic = std::min(topo_.portRate(topo_.nicPort(topo_.nicOfGpu(srcGpu))),
                               topo_.portRate(topo_.nicPort(topo_.nicOfGpu(dstGpu))));
  return static_cast<double>(nic.bitsPerSecond()) / 8 * static_cast<double>(spec_.links.mtu) / frameBytes_;
}

}  // namespace fabricsim
