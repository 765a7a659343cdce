// PacketFabric: the packet-level backend behind the Fabric interface.
//
// Models: every packet of every inter-host transfer through NICs, links and switch queues
// (see Nic, EgressPort, Switch), routed by the ECMP tables of EcmpFib; intra-host transfers
// through NvlinkModel. Transfers between GPUs whose NICs sit in different, unconnected rails
// leave through this host's NIC on the destination's rail (PXN, as NCCL does); the NVLink hop
// to that NIC is not timed (it is pipelined with the network transfer and faster than the NIC).
// Link technology (RoCEv2 or InfiniBand framing and flow control), ECN, PFC and congestion
// control (DCQCN, IB CC) follow the topology spec.
// A connection whose retransmission timer runs out of retries fails with its undelivered
// transfers (failures()) and stops the simulator.
// Host links and NICs fail too (setLinkUp on a host link; a NIC down is its link down): a QP
// whose NIC, or the peer's, is unusable when its retransmission timer expires moves to another
// NIC of that host (nic.failover; GpuPath::failoverNics) and resends from its oldest
// unacknowledged PSN there, with a fresh retry counter; the receiver's state is kept (the
// simulator owns both ends). Without failover it retries and fails as `nic_down`. A failed-over
// QP stays on its new NIC; QPs created later use their GPU's NIC again once it is up.
// Links fail and recover during the run (setLinkUp); the tables are changed by their owners (a
// control plane, local fast failover). Ideal times are those of the intact fabric.
// Units: bytes, Time (ps).
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/cc/CongestionControl.h"
#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/fabric/LinkFraming.h"
#include "sim/fabric/NvlinkModel.h"
#include "sim/packet/EgressPort.h"
#include "sim/packet/Nic.h"
#include "sim/packet/NicParams.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"
#include "sim/packet/PacketWatchdog.h"
#include "sim/packet/QueuePair.h"
#include "sim/packet/RdmaMessage.h"
#include "sim/packet/ReorderBuffer.h"
#include "sim/packet/Switch.h"
#include "sim/packet/SwitchParams.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/GpuPath.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class PacketFabric final : public Fabric {
 public:
  PacketFabric(Simulator& sim, const Topology& topo, const TopologySpec& spec, const EcmpFib& fib);

  /// InfiniBand: forward by the subnet manager's LFTs (and its adaptive-routing groups) instead of
  /// ECMP; QPs carry DLIDs. Call before any transfer; `sm` must outlive the fabric.
  void setSubnetManager(const IbSubnetManager& sm);

  void send(const TransferRequest& request, TransferObserver* observer) override;
  std::string backendName() const override { return "packet"; }
  Time pathLatency(uint32_t srcGpu, uint32_t dstGpu) const override;
  double pathRate(uint32_t srcGpu, uint32_t dstGpu) const override;
  const TransferTable& transfers() const override { return transfers_; }
  void keepFlowRecords(bool keep) override { transfers_.keepAll(keep); }
  NetworkCounters networkCounters() const override;
  /// The end of network activity (NetworkCounters::activeTime): the last delivery or the end of
  /// the last transmission, whichever is later, and no later than the clock.
  Time activityEnd() const;
  std::vector<TransferFailure> failures() const override { return failures_; }
  void setLinkUp(uint32_t link, bool up) override;
  /// Tables of the fault-free fabric, for unloaded latencies and ideal times (default: the live
  /// tables, which a control plane may empty while it reconverges). Must outlive the fabric.
  void setReferenceTables(const EcmpFib& reference) { path_.setReferenceTables(reference); }

  // ---- used by Nic ----
  QueuePair& qp(uint32_t id) { return qps_[id]; }
  RdmaMessage& message(uint32_t id) { return messages_[id]; }
  /// The reorder buffer of QP `qp` (created on first use).
  ReorderBuffer& reorderBuffer(uint32_t qp) {
    QueuePair& q = qps_[qp];
    if (q.reorder == 0xFFFFFFFFu) {
      q.reorder = static_cast<uint32_t>(reorder_.size());
      reorder_.emplace_back();
    }
    return reorder_[q.reorder];
  }
  /// The receiver has accepted the last packet of message `id`.
  void messageDelivered(uint32_t id);
  /// The sender has seen every PSN of message `id` acknowledged: its record can be reused.
  void releaseMessage(uint32_t id) { freeMessages_.push_back(id); }
  /// QP `qp` timed out once more after `retries` retries without progress: it fails, every
  /// transfer posted on it and not yet delivered fails, and the simulator stops (the run ends).
  void queuePairFailed(uint32_t qp, int retries);
  /// True while both NICs of QP `qp` and their host links are up.
  bool nicsUsable(uint32_t qp) const { return nicUp_[qps_[qp].srcNic] && nicUp_[qps_[qp].dstNic]; }
  /// QP `qp`'s retransmission timer expired with one of its NICs unusable: with nic.failover, moves
  /// it to a usable NIC pair of the same hosts (the new source NIC resends everything
  /// unacknowledged) and returns true; false when failover is off or no pair can reach each other.
  bool failOver(uint32_t qp);
  /// Connections moved to another NIC so far.
  uint64_t failovers() const { return failovers_; }
  Nic& nic(uint32_t index) { return nics_[index]; }

  // ---- inspection (tests, benchmarks) ----
  const PacketCounters& counters() const { return counters_; }
  const Topology& topology() const { return topo_; }
  /// Classes with PFC (bit per class; 0 when PFC is off or on InfiniBand).
  uint8_t losslessClasses() const { return switchParams_.pfc.enabled ? switchParams_.pfc.classMask : 0; }
  /// Network transfers requested and neither delivered nor failed.
  uint64_t outstandingTransfers() const { return outstanding_; }
  /// The watchdog found a run that cannot finish: every outstanding transfer fails, the failure
  /// (with `message`) joins failures(), and the simulator stops.
  void stopByWatchdog(TransferFailure::Kind kind, std::string message);
  /// Starts or stops a PFC storm from every NIC of host `host` (failures: pfc-storm).
  void setPfcStorm(NodeId host, bool on);
  const PacketPool& pool() const { return pool_; }
  EgressPort& mutablePort(PortId p) { return ports_[p]; }
  const Switch& switchAt(NodeId n) const { return switches_[n - topo_.hostCount()]; }
  CongestionControl* congestionControl() const { return cc_.get(); }
  /// Queue pairs' congestion control starts at (and never exceeds) `rate` instead of their NIC
  /// port's rate; 0 restores that. For a congestion episode (PacketEpisodeModel), whose sender
  /// port carries only the share a real NIC's scheduler gives the QPs: their congestion control
  /// still starts at the real NIC's line rate. Applies to the queue pairs created after the
  /// call (a transfer creates its queue pair when it is the first between its endpoints).
  void setQueuePairLineRate(BitRate rate) { qpLineRate_ = rate; }
  const LinkFraming& framing() const { return nicParams_.framing; }
  const EgressPort& port(PortId p) const { return ports_[p]; }
  size_t queuePairs() const { return qps_.size(); }
  /// The QP carrying (srcNic -> dstNic, class, index), or kInvalid if none was created yet.
  uint32_t findQueuePair(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex) const {
    const auto it = qpIndex_.find(qpKey(srcNic, dstNic, tc, qpIndex));
    return it == qpIndex_.end() ? kInvalid : it->second;
  }
  /// After the event queue drained with transfers undelivered: fails every QP that still has data
  /// unacknowledged (with no timer, as an infinite InfiniBand local ACK timeout leaves it, nothing
  /// would ever recover it) and returns how many. Their failures join failures().
  size_t failStalledConnections();
  /// After a run: gives back the buffers of empty queues and wires and, with no packet left, the
  /// packet pool, so that building the results reuses that memory instead of adding to the peak.
  void releaseIdleMemory() {
    for (EgressPort& p : ports_) p.releaseIdleMemory();
    pool_.releaseIfEmpty();
  }
  /// Unloaded time for `bytes` from srcNic to dstNic along the path the hash picks for `tuple`
  /// in the fault-free reference tables.
  Time idealNetworkTime(uint32_t srcNic, uint32_t dstNic, uint64_t tuple, Bytes bytes) const;

 private:
  uint32_t queuePairFor(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex);
  static uint64_t qpKey(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex) {
    return (static_cast<uint64_t>(srcNic) << 41) | (static_cast<uint64_t>(dstNic) << 19) |
           (static_cast<uint64_t>(tc & 7) << 16) | qpIndex;
  }
  void complete(uint32_t record, Time when);
  /// "host-3", or "host-3 nic 1" when hosts have several NICs.
  std::string nicName(uint32_t nic) const;
  /// Marks QP `qp` failed and its undelivered transfers failed; sets f.transfers and the GPUs.
  void failTransfers(uint32_t qp, TransferFailure& f);
  TransferFailure describeFailure(uint32_t qp, TransferFailure::Kind kind) const;

  Simulator& sim_;
  const Topology& topo_;
  const TopologySpec& spec_;
  const EcmpFib& fib_;
  uint32_t mtu_;
  GpuPath path_;
  SwitchParams switchParams_;
  NicParams nicParams_;
  std::unique_ptr<CongestionControl> cc_;
  BitRate qpLineRate_{};  ///< setQueuePairLineRate (0: the NIC port's)
  PacketPool pool_;
  PacketCounters counters_;
  std::vector<EgressPort> ports_;  // one per directed port of the topology
  std::vector<Switch> switches_;   // index: node - hostCount
  std::vector<Nic> nics_;
  std::vector<QueuePair> qps_;
  std::unordered_map<uint64_t, uint32_t> qpIndex_;
  std::vector<RdmaMessage> messages_;
  std::deque<ReorderBuffer> reorder_;  // stable references
  std::vector<uint32_t> freeMessages_;
  TransferTable transfers_;  ///< transfers in flight (by slot) and the delivered ones' statistics
  std::vector<TransferFailure> failures_;
  uint64_t outstanding_ = 0;
  std::vector<uint8_t> nicUp_;  ///< per NIC: 1 while it and its host link are up
  bool failover_ = false;       ///< nic.failover
  uint64_t failovers_ = 0;
  std::unique_ptr<PacketWatchdog> watchdog_;
  std::unique_ptr<NvlinkModel> nvlink_;
};

}  // namespace fabricsim
