// GpuPath: the facts about a GPU-to-GPU path that both backends share.
//
// Models: which NIC a transfer leaves through (the source GPU's own, or, when that NIC's rail
// cannot reach the destination's, the source host's NIC on the destination's rail: PXN, as
// NCCL does); the fixed latency of the routed path on an idle fabric (every link's
// propagation, every switch's forwarding latency, and one frame's store-and-forward at every
// hop after the first); and the path's payload rate (the host links' line rate less framing;
// the Clos fabric is no slower per flow). Inside a host the path is NVLink: its latency and
// bandwidth.
// Leaves out: queueing (an idle path). The path is the one the ECMP tables give the QP tuple
// (the fault-free reference tables when the run sets them).
// Units: Time (ps); frame bytes on the wire; rates in bytes per second.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Time.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/IbLft.h"
#include "sim/routing/IbLidMap.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class GpuPath {
 public:
  /// `frameBytes`: a full data frame on the wire (MTU payload plus framing).
  GpuPath(const Topology& topo, const EcmpFib& fib, const TopologySpec& spec, uint32_t frameBytes);

  /// InfiniBand subnet-manager routing: paths follow `lft`, and a QP's `tuple` is its DLID.
  void setIbRouting(const IbLft* lft, const IbLidMap* lids) {
    lft_ = lft;
    lids_ = lids;
  }
  /// The egress of switch `sw` toward `dstNic` for a packet carrying `tuple` (kInvalid: none).
  PortId nextHop(NodeId sw, uint32_t dstNic, uint64_t tuple) const {
    return lft_ ? lft_->port(sw, tuple) : fib_.nextHop(sw, dstNic, tuple);
  }
  /// The `tuple` packets of QP `qpIndex` (class `tc`) from srcNic to dstNic carry: the five-tuple
  /// digest of the header fields the switches hash, or the DLID on InfiniBand subnet-manager
  /// routing; `reverse`: the tuple of its ACKs (reversed five-tuple, or the source's DLID).
  uint64_t queuePairTuple(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex,
                          bool reverse = false) const;

  /// The NIC a transfer from srcGpu to dstGpu (on different hosts) leaves through.
  /// Throws (SIM_CHECK) when no NIC of the source host can reach the destination.
  uint32_t sourceNic(uint32_t srcGpu, uint32_t dstGpu) const;
  /// Failover (nic.failover): the NIC pair a connection from `src` to `dst` moves to when one of
  /// them is unusable (`nicUp[n]` is 0 for a NIC that is down or whose host link is). Keeps an end
  /// that is up, and otherwise takes the lowest-numbered NIC of the same host that is up; the pair
  /// must reach each other in the live tables (as sourceNic requires: on unconnected rails both
  /// ends may have to move to a common rail). Returns false, leaving both unchanged, when no pair
  /// of usable NICs of the two hosts can reach each other.
  bool failoverNics(uint32_t& src, uint32_t& dst, const std::vector<uint8_t>& nicUp) const;
  /// Fixed latency from NIC `srcNic` to NIC `dstNic` along the path of `tuple`, for frames of
  /// `frame` wire bytes.
  Time networkLatency(uint32_t srcNic, uint32_t dstNic, uint64_t tuple, uint32_t frame) const;
  /// Fixed latency from one GPU to another (NVLink inside a host), over the path of QP 0.
  Time latency(uint32_t srcGpu, uint32_t dstGpu) const;
  /// Payload rate from one GPU to another in bytes per second.
  double rate(uint32_t srcGpu, uint32_t dstGpu) const;
  /// Walks `tables` from now on (the fault-free reference when a run changes its live tables:
  /// unloaded latencies and ideal times are those of the intact fabric).
  void setReferenceTables(const EcmpFib& tables) { reference_ = &tables; }
  /// The path of the intact fabric from srcNic to dstNic for `tuple` into `hops` (the NIC's port,
  /// then one egress port per switch): along the live InfiniBand LFTs while they route it, else
  /// along the reference tables (a subnet manager rerouting, or a control plane reconverging,
  /// must not change what "unloaded" means).
  void idealPath(uint32_t srcNic, uint32_t dstNic, uint64_t tuple, std::vector<PortId>& hops) const;

 private:
  const Topology& topo_;
  const EcmpFib& fib_;
  const EcmpFib* reference_;
  const TopologySpec& spec_;
  uint32_t frameBytes_;
  const IbLft* lft_ = nullptr;
  const IbLidMap* lids_ = nullptr;
};

}  // namespace fabricsim
