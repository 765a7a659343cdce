#include "sim/packet/PacketFabric.h"

#include <algorithm>

#include "sim/config/SpecError.h"
#include "sim/core/Error.h"
#include "sim/fabric/RetransmitSchedule.h"
#include "sim/fabric/RoceFraming.h"
#include "sim/packet/PfcHeadroom.h"
#include "sim/routing/FlowHash.h"

namespace fabricsim {
namespace {
constexpr uint32_t kNone = 0xFFFFFFFFu;
}

PacketFabric::PacketFabric(Simulator& sim, const Topology& topo, const TopologySpec& spec, const EcmpFib& fib)
    : sim_(sim),
      topo_(topo),
      spec_(spec),
      fib_(fib),
      mtu_(static_cast<uint32_t>(spec.links.mtu)),
      path_(topo, fib, spec,
            (spec.links.technology == "infiniband" ? LinkFraming::ib() : LinkFraming::roce())
                .dataWireBytes(mtu_)) {
  SIM_CHECK(topo.nicCount() < (1u << 22), "more than 4M NICs");
  const size_t hosts = topo.hostCount();
  const bool ib = spec.links.technology == "infiniband";
  ports_.resize(topo.portCount());
  switches_.resize(topo.switchCount());
  nics_.resize(topo.nicCount());
  nicUp_.assign(topo.nicCount(), 1);
  failover_ = spec.nic.failover;

  nicParams_.framing = ib ? LinkFraming::ib() : LinkFraming::roce();
  switchParams_.buffer = static_cast<uint64_t>(spec.sw.buffer);
  switchParams_.dtAlpha = spec.sw.dtAlpha;
  switchParams_.ecn = spec.sw.ecn;
  switchParams_.pfc = spec.sw.pfc;
  if (ib) switchParams_.pfc.enabled = false;  // InfiniBand uses credits, not PFC
  switchParams_.infiniband = ib;
  switchParams_.maxFrame = nicParams_.framing.dataWireBytes(mtu_);
  switchParams_.pauseFrame = RoceFraming::pauseWireBytes();
  switchParams_.reserve =
      spec.sw.reserve >= 0 ? static_cast<uint64_t>(spec.sw.reserve) : switchParams_.maxFrame;
  if (switchParams_.pfc.enabled) {
    // A refresh may wait behind one maximum frame before it leaves (PAUSE pre-empts queues, not
    // the wire), so the half pause time between refreshes must cover a maximum frame and a PAUSE.
    const uint64_t need = 2ULL * (switchParams_.maxFrame + switchParams_.pauseFrame);
    const uint64_t minQuanta = (need + 63) / 64;  // a quantum is 512 bits = 64 bytes
    if (static_cast<uint64_t>(spec.sw.pfc.quanta) < minQuanta)
      throw specError(spec, "switch.pfc.quanta",
                      "expected at least " + std::to_string(minQuanta) +
                          " quanta (a pause long enough for two " + std::to_string(switchParams_.maxFrame) +
                          " B frames and two PAUSE frames, so that a " +
                          "refresh sent at half the pause time reaches the peer before it expires), found " +
                          std::to_string(spec.sw.pfc.quanta));
  }
  const std::string& algo = spec.routing.algorithm;
  switchParams_.selection = algo == "flowlet"    ? PathSelection::Flowlet
                            : algo == "adaptive" ? PathSelection::Adaptive
                            : algo == "spray"    ? PathSelection::Spray
                                                 : PathSelection::Ecmp;
  switchParams_.flowletGap = spec.routing.flowletGap;
  switchParams_.adaptiveBias = static_cast<uint64_t>(spec.routing.adaptiveBias);
  switchParams_.adaptiveQuantum = spec.routing.adaptiveQuantum > 0
                                      ? static_cast<uint64_t>(spec.routing.adaptiveQuantum)
                                      : 8ULL * switchParams_.maxFrame;
  switchParams_.sprayRoundRobin = spec.routing.spray == "round-robin";
  nicParams_.tolerant = spec.nic.reorder == "tolerant";

  cc_ = makeCongestionControl(spec.congestionControl);
  nicParams_.mtu = mtu_;
  nicParams_.ackEvery = spec.nic.ackEvery;
  nicParams_.windowPackets =
      spec.nic.window > 0 ? static_cast<uint32_t>((spec.nic.window + mtu_ - 1) / mtu_) : 0;
  nicParams_.retransmit = RetransmitSchedule::of(spec.nic, ib);
  nicParams_.cc = cc_.get();
  nicParams_.notify = cc_ != nullptr;
  nicParams_.notifyInterval = spec.congestionControl.algorithm == "ibcc"
                                  ? spec.congestionControl.ibcc.becnInterval
                                  : spec.congestionControl.dcqcn.cnpInterval;

  auto endpointOf = [&](NodeId n, uint32_t local) -> EgressPort::Endpoint {
    EgressPort::Endpoint e;
    if (topo.isHost(n))
      e.nic = &nics_[n * topo.nicsPerHost() + local];
    else
      e.sw = &switches_[n - hosts];
    return e;
  };
  for (PortId p = 0; p < topo.portCount(); ++p) {
    const NodeId n = topo.portNode(p);
    const PortId peer = topo.peerPort(p);
    const NodeId pn = topo.portNode(peer);
    const Time forwarding = topo.isHost(pn) ? Time::zero() : spec.sw.latency;
    ports_[p].init(&sim, &pool_, &counters_, topo.portRate(p), topo.portLatency(p), forwarding,
                   spec.sw.pfc.responseTime, endpointOf(n, topo.portLocal(p)),
                   endpointOf(pn, topo.portLocal(peer)), topo.portLocal(peer), &ports_[peer]);
    if (!topo.isHost(n)) ports_[p].enableHistogram();
    if (!topo.isHost(n) && switchParams_.pfc.enabled && spec.sw.pfc.stormDetection > Time::zero())
      ports_[p].enableStormWatchdog(spec.sw.pfc.stormDetection, spec.sw.pfc.stormRestoration);
    if (ib && !topo.isHost(pn)) {
      // The peer switch's receive buffer for this input port, per virtual lane.
      const uint64_t perVl = spec.sw.creditBuffer > 0
                                 ? static_cast<uint64_t>(spec.sw.creditBuffer)
                                 : static_cast<uint64_t>(spec.sw.buffer) / topo.degree(pn);
      SIM_CHECK(perVl >= switchParams_.maxFrame, "credit buffer smaller than one frame");
      ports_[p].enableCredits(perVl, switchParams_.maxFrame);
    }
  }
  std::vector<uint64_t> headroom;
  for (NodeId s = static_cast<NodeId>(hosts); s < topo.nodeCount(); ++s) {
    const PortId first = topo.port(s, 0);
    headroom.assign(topo.degree(s), 0);
    if (switchParams_.pfc.enabled)
      for (uint32_t i = 0; i < topo.degree(s); ++i) {
        const PortId p = first + i;
        headroom[i] = spec.sw.pfc.headroom > 0 ? static_cast<uint64_t>(spec.sw.pfc.headroom)
                                               : pfcHeadroom(topo.portRate(p), topo.portLatency(p),
                                                             spec.sw.latency, spec.sw.pfc.responseTime,
                                                             switchParams_.maxFrame, switchParams_.pauseFrame,
                                                             __builtin_popcount(switchParams_.pfc.classMask));
      }
    Switch& sw = switches_[s - hosts];
    if (!sw.init(s, &sim, &fib, &pool_, &counters_, &ports_[first], first, topo.degree(s), &switchParams_,
                 headroom)) {
      const int lossless = switchParams_.pfc.enabled ? __builtin_popcount(switchParams_.pfc.classMask) : 0;
      const uint64_t maxHeadroom = *std::max_element(headroom.begin(), headroom.end());
      throw specError(
          spec, "switch.buffer",
          "expected a buffer larger than what switch " + topo.node(s).name + " must carve out before " +
              "its shared pool: " + formatBytes(static_cast<Bytes>(sw.mmu().carved())) + " (a " +
              formatBytes(static_cast<Bytes>(switchParams_.reserve)) + " reserve" +
              (lossless ? " and up to " + formatBytes(static_cast<Bytes>(maxHeadroom)) +
                              " of PFC headroom for each of " + std::to_string(lossless) + " lossless classes"
                        : std::string()) +
              ", on each of " + std::to_string(topo.degree(s)) + " ports), found " +
              formatBytes(spec.sw.buffer) +
              (lossless > 1 ? "; make only the classes your traffic uses lossless (switch.pfc.classes)"
                            : std::string()));
    }
  }
  for (uint32_t i = 0; i < topo.nicCount(); ++i)
    nics_[i].init(i, &sim, this, &pool_, &counters_, &ports_[topo.nicPort(i)], &nicParams_);
  nicParams_.pfcClassMask = spec.sw.pfc.classMask;
  nicParams_.pfcQuanta = spec.sw.pfc.quanta;
  nicParams_.pauseFrame = switchParams_.pauseFrame;
  watchdog_ = std::make_unique<PacketWatchdog>(sim, *this, spec.watchdog);
  nvlink_ = std::make_unique<NvlinkModel>(sim, topo.gpuCount(), spec.hosts.nvlinkBandwidth,
                                          spec.hosts.nvlinkLatency,
                                          [this](uint32_t record) { complete(record, sim_.now()); });
}

void PacketFabric::setSubnetManager(const IbSubnetManager& sm) {
  SIM_CHECK(qps_.empty(), "the subnet manager must be set before any transfer");
  switchParams_.ibLft = &sm.lft();
  switchParams_.ibAdaptive = sm.adaptive();
  switchParams_.selection = PathSelection::IbLft;
  path_.setIbRouting(&sm.lft(), &sm.lids());
}

uint32_t PacketFabric::queuePairFor(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qpIndex) {
  auto [it, inserted] =
      qpIndex_.try_emplace(qpKey(srcNic, dstNic, tc, qpIndex), static_cast<uint32_t>(qps_.size()));
  if (!inserted) return it->second;
  QueuePair q;
  q.srcNic = srcNic;
  q.dstNic = dstNic;
  q.tc = tc;
  q.qpIndex = qpIndex;
  q.tuple = path_.queuePairTuple(srcNic, dstNic, tc, qpIndex);
  q.reverseTuple = path_.queuePairTuple(srcNic, dstNic, tc, qpIndex, true);
  qps_.push_back(q);
  if (cc_)
    cc_->addFlow(it->second,
                 qpLineRate_.bitsPerSecond() > 0 ? qpLineRate_ : topo_.portRate(topo_.nicPort(srcNic)),
                 sim_.now());
  return it->second;
}

void PacketFabric::send(const TransferRequest& r, TransferObserver* observer) {
  SIM_CHECK(r.srcGpu < topo_.gpuCount() && r.dstGpu < topo_.gpuCount(), "transfer between unknown GPUs");
  SIM_CHECK(r.trafficClass < kControlClass, "traffic class 7 is reserved for control packets");
  SIM_CHECK(r.bytes >= 0, "negative transfer size");
  FlowRecord rec;
  rec.srcGpu = r.srcGpu;
  rec.dstGpu = r.dstGpu;
  rec.bytes = r.bytes;
  rec.start = sim_.now();
  const uint32_t record = transfers_.open(rec, r.tag, observer);

  const NodeId srcHost = topo_.hostOfGpu(r.srcGpu);
  const NodeId dstHost = topo_.hostOfGpu(r.dstGpu);
  if (srcHost == dstHost) {
    transfers_.record(record).intraHost = true;
    transfers_.record(record).ideal = nvlink_->idealTime(r.bytes);
    nvlink_->send(r.srcGpu, r.bytes, record);
    return;
  }
  ++outstanding_;
  if (watchdog_) watchdog_->activity();
  const uint32_t srcNic = path_.sourceNic(r.srcGpu, r.dstGpu);  // PXN when its own NIC cannot reach
  const uint32_t dstNic = topo_.nicOfGpu(r.dstGpu);
  const uint32_t qpId = queuePairFor(srcNic, dstNic, r.trafficClass, r.qp);
  if (qps_[qpId].failed) {  // posted on a connection in error: flushed at once, never sent
    transfers_.fail(record);
    return;
  }
  const uint32_t npkts = r.bytes == 0 ? 1 : static_cast<uint32_t>((r.bytes + mtu_ - 1) / mtu_);
  uint32_t msg;
  if (!freeMessages_.empty()) {
    msg = freeMessages_.back();
    freeMessages_.pop_back();
  } else {
    msg = static_cast<uint32_t>(messages_.size());
    messages_.emplace_back();
  }
  QueuePair& q = qps_[qpId];
  RdmaMessage& m = messages_[msg];
  m = RdmaMessage{};
  m.firstPsn = q.psnEnd;
  m.lastPsn = q.psnEnd + npkts - 1;
  m.lastPayload = static_cast<uint32_t>(r.bytes - static_cast<Bytes>(npkts - 1) * mtu_);
  m.record = record;
  m.tag = r.tag;
  m.observer = observer;
  q.psnEnd += npkts;
  if (q.msgTail == kNone)
    q.msgHead = msg;
  else
    messages_[q.msgTail].next = msg;
  q.msgTail = msg;
  if (q.sendMsg == kNone) q.sendMsg = msg;
  if (q.rcvMsg == kNone) q.rcvMsg = msg;
  // The QP's NICs: its GPU's, or the ones it failed over to.
  transfers_.record(record).ideal = idealNetworkTime(q.srcNic, q.dstNic, q.tuple, r.bytes);
  nics_[q.srcNic].activate(qpId);
}

double PacketFabric::pathRate(uint32_t srcGpu, uint32_t dstGpu) const {
  return path_.rate(srcGpu, dstGpu);
}

Time PacketFabric::pathLatency(uint32_t srcGpu, uint32_t dstGpu) const {
  return path_.latency(srcGpu, dstGpu);
}

void PacketFabric::messageDelivered(uint32_t id) {
  // The message stays on its queue pair until acknowledged; its transfer's slot may be reused
  // once delivered, so the message lets go of it.
  const uint32_t record = messages_[id].record;
  messages_[id].record = RdmaMessage::kNoRecord;
  complete(record, sim_.now());
}

void PacketFabric::complete(uint32_t record, Time when) {
  if (!transfers_.isOpen(record)) return;  // its sender gave up first: the failure stands
  if (!transfers_.record(record).intraHost) --outstanding_;
  if (when > counters_.lastDelivery) counters_.lastDelivery = when;
  const TransferTable::Waiter w = transfers_.deliver(record, when);
  if (w.observer) w.observer->onTransferDelivered(w.tag, when);
}

std::string PacketFabric::nicName(uint32_t nic) const {
  const uint32_t perHost = static_cast<uint32_t>(topo_.nicsPerHost());
  std::string name = topo_.node(nic / perHost).name;
  if (perHost > 1) name += " nic " + std::to_string(nic % perHost);
  return name;
}

void PacketFabric::failTransfers(uint32_t qpId, TransferFailure& f) {
  QueuePair& q = qps_[qpId];
  q.failed = true;
  f.transfers = 0;
  for (uint32_t m = q.msgHead; m != kNone; m = messages_[m].next) {
    const uint32_t record = messages_[m].record;
    if (record == RdmaMessage::kNoRecord || !transfers_.isOpen(record)) continue;  // delivered, or failed
    const FlowRecord& rec = transfers_.record(record);
    transfers_.fail(record);
    --outstanding_;
    ++f.transfers;
    f.srcGpus.push_back(rec.srcGpu);
    f.dstGpus.push_back(rec.dstGpu);
  }
  for (auto* v : {&f.srcGpus, &f.dstGpus}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
}

TransferFailure PacketFabric::describeFailure(uint32_t qpId, TransferFailure::Kind kind) const {
  const QueuePair& q = qps_[qpId];
  TransferFailure f;
  f.kind = kind;
  f.at = sim_.now();
  f.source = nicName(q.srcNic);
  f.destination = nicName(q.dstNic);
  f.srcNic = q.srcNic;
  f.dstNic = q.dstNic;
  f.trafficClass = q.tc;
  f.qpIndex = q.qpIndex;
  f.retries = q.timeouts;
  return f;
}

void PacketFabric::queuePairFailed(uint32_t qpId, int retries) {
  const QueuePair& q = qps_[qpId];
  const bool nicDown = !nicsUsable(qpId);
  TransferFailure f =
      describeFailure(qpId, nicDown ? TransferFailure::Kind::NicDown : TransferFailure::Kind::RetryExceeded);
  f.retries = retries;
  failTransfers(qpId, f);
  std::string cause;
  if (nicDown) {
    const uint32_t dead = nicUp_[q.srcNic] ? q.dstNic : q.srcNic;
    cause = "NIC " + nicName(dead) + " or its host link is down and " +
            (failover_
                 ? "no other NIC of " + topo_.node(topo_.hostOfNic(dead)).name + " is up and reaches the peer"
                 : std::string("nic.failover is off")) +
            "; ";
  }
  f.message = "connection " + f.source + " -> " + f.destination + " (traffic class " +
              std::to_string(f.trafficClass) + ", QP " + std::to_string(f.qpIndex) + ") failed at " +
              formatTime(f.at) + ": " + cause +
              "transport retry counter exceeded (no acknowledgement after " + std::to_string(retries) +
              (retries == 1 ? " retry" : " retries") + "; the retransmission timer expired " +
              std::to_string(retries + 1) + " times in a row); " + std::to_string(f.transfers) +
              (f.transfers == 1 ? " transfer" : " transfers") + " not delivered";
  failures_.push_back(std::move(f));
  sim_.stop();  // the workload cannot complete: the run ends here
}

void PacketFabric::stopByWatchdog(TransferFailure::Kind kind, std::string message) {
  TransferFailure f;
  f.kind = kind;
  f.at = sim_.now();
  transfers_.forEachOpen([&](uint32_t slot, const FlowRecord& r) {
    if (r.intraHost) return;
    transfers_.fail(slot);
    ++f.transfers;
  });
  outstanding_ = 0;
  f.message = std::move(message) + "; " + std::to_string(f.transfers) +
              (f.transfers == 1 ? " transfer" : " transfers") + " not delivered";
  failures_.push_back(std::move(f));
  sim_.stop();
}

void PacketFabric::setPfcStorm(NodeId host, bool on) {
  const uint32_t perHost = static_cast<uint32_t>(topo_.nicsPerHost());
  for (uint32_t i = 0; i < perHost; ++i) nics_[host * perHost + i].setPfcStorm(on);
}

size_t PacketFabric::failStalledConnections() {
  size_t n = 0;
  for (uint32_t id = 0; id < qps_.size(); ++id) {
    const QueuePair& q = qps_[id];
    if (q.failed || q.sndUna >= q.psnEnd) continue;
    TransferFailure f =
        describeFailure(id, nicsUsable(id) ? TransferFailure::Kind::Stalled : TransferFailure::Kind::NicDown);
    failTransfers(id, f);
    f.message =
        "connection " + f.source + " -> " + f.destination + " (traffic class " +
        std::to_string(f.trafficClass) + ", QP " + std::to_string(f.qpIndex) + ") stalled at " +
        formatTime(f.at) + ": data unacknowledged and nothing left to happen" +
        (nicParams_.retransmit.enabled() ? std::string()
                                         : std::string(" (no retransmission timer: nic.local_ack_timeout 0 "
                                                       "is infinite)")) +
        "; " + std::to_string(f.transfers) + (f.transfers == 1 ? " transfer" : " transfers") +
        " not delivered";
    failures_.push_back(std::move(f));
    ++n;
  }
  return n;
}

void PacketFabric::setLinkUp(uint32_t link, bool up) {
  SIM_CHECK(link < topo_.linkCount(), "setLinkUp: unknown link");
  const LinkInfo& info = topo_.link(link);
  ports_[topo_.port(info.a, info.aPort)].setUp(up);
  ports_[topo_.port(info.b, info.bPort)].setUp(up);
  // A host's port r is its NIC r: the NIC is usable while its link is up.
  if (topo_.isHost(info.a)) nicUp_[info.a * topo_.nicsPerHost() + info.aPort] = up ? 1 : 0;
  if (topo_.isHost(info.b)) nicUp_[info.b * topo_.nicsPerHost() + info.bPort] = up ? 1 : 0;
}

bool PacketFabric::failOver(uint32_t qpId) {
  if (!failover_) return false;
  QueuePair& q = qps_[qpId];
  uint32_t src = q.srcNic, dst = q.dstNic;
  if (!path_.failoverNics(src, dst, nicUp_)) return false;
  // Out of the old NIC's lists (its pending timer event goes stale: timerAt is cleared).
  nics_[q.srcNic].detach(qpId);
  q.srcNic = src;
  q.dstNic = dst;
  q.tuple = path_.queuePairTuple(src, dst, q.tc, q.qpIndex);
  q.reverseTuple = path_.queuePairTuple(src, dst, q.tc, q.qpIndex, true);
  q.timeouts = 0;  // a new path: the retry counter starts again
  q.timerAt = Time::max();
  ++failovers_;
  nics_[src].resendAll(qpId);
  return true;
}

Time PacketFabric::idealNetworkTime(uint32_t srcNic, uint32_t dstNic, uint64_t tuple, Bytes bytes) const {
  // Path: NIC port, then one egress port per switch until the destination NIC.
  std::vector<PortId> hops;
  path_.idealPath(srcNic, dstNic, tuple, hops);
  const uint32_t npkts = bytes == 0 ? 1 : static_cast<uint32_t>((bytes + mtu_ - 1) / mtu_);
  const uint32_t firstPayload = npkts == 1 ? static_cast<uint32_t>(bytes) : mtu_;
  const uint32_t lastPayload = static_cast<uint32_t>(bytes - static_cast<Bytes>(npkts - 1) * mtu_);
  const LinkFraming& f = nicParams_.framing;
  const uint32_t wireFull = f.dataWireBytes(mtu_);
  const uint32_t wireFirst = f.dataWireBytes(firstPayload);
  const uint32_t wireLast = f.dataWireBytes(lastPayload);
  // Store-and-forward tandem with every packet ready at time 0: the last bit arrives after
  // max over hops j of [first packet through hops < j] + [all packets at hop j] + [last packet
  // through hops > j], plus every hop's fixed delay (a max-plus identity for FIFO tandems).
  Time delays = Time::zero();
  Time best = Time::zero();
  for (size_t j = 0; j < hops.size(); ++j) {
    Time t = Time::zero();
    for (size_t k = 0; k < j; ++k) t += serializationTime(wireFirst, topo_.portRate(hops[k]));
    const BitRate rj = topo_.portRate(hops[j]);
    t += serializationTime(wireFull, rj) * static_cast<int64_t>(npkts > 1 ? npkts - 1 : 0);
    t += serializationTime(npkts > 1 ? wireLast : wireFirst, rj);
    for (size_t k = j + 1; k < hops.size(); ++k) t += serializationTime(wireLast, topo_.portRate(hops[k]));
    if (t > best) best = t;
  }
  for (size_t j = 0; j < hops.size(); ++j) {
    delays += topo_.portLatency(hops[j]);
    if (!topo_.isHost(topo_.peerNode(hops[j]))) delays += spec_.sw.latency;
  }
  return best + delays;
}

Time PacketFabric::activityEnd() const {
  // The ports' own serialisation ends, read once here rather than kept per packet.
  Time end = counters_.lastDelivery;
  for (const EgressPort& e : ports_) end = std::max(end, e.busyUntil());
  return std::min(end, sim_.now());
}

NetworkCounters PacketFabric::networkCounters() const {
  NetworkCounters c;
  c.bytesSent = static_cast<Bytes>(counters_.dataBytesSent);
  c.bytesDelivered = static_cast<Bytes>(counters_.dataBytesDelivered);
  c.bytesDropped = static_cast<Bytes>(counters_.dataBytesDropped);
  c.goodputBytes = static_cast<Bytes>(counters_.goodputBytes);
  c.packetsSent = counters_.packetsSent;
  c.packetsDropped = counters_.packetsDropped;
  c.retransmittedBytes = static_cast<Bytes>(counters_.retransmittedBytes);
  c.retransmitTimeouts = counters_.timeouts;
  c.nicFailovers = failovers_;
  c.nacksSent = counters_.nacks;
  c.outOfOrderPackets = counters_.outOfOrder;
  c.linkTransmissions = counters_.linkTransmissions;
  // Activity ends with the last delivery or the last transmission, whichever is later: after a
  // failure, retransmissions that never arrive are still traffic on the links (utilisation over
  // the last delivery alone came out above 100%); a run stopped by a failure ends with its clock.
  const Time end = activityEnd();
  c.activeTime = end;
  c.ecnMarks = counters_.ecnMarks;
  c.cnps = counters_.cnps;
  c.becns = counters_.becns;
  c.pfcPauseFrames = counters_.pfcPauseFrames;
  c.pfcResumeFrames = counters_.pfcResumeFrames;
  c.pfcPausePropagated = counters_.pfcPausePropagated;
  c.losslessDrops = counters_.losslessDrops;
  c.pfcStorms = counters_.pfcStorms;
  c.pfcStormDrops = counters_.pfcStormDrops;
  c.blackholedPackets = counters_.blackholedPackets;
  c.blackholedBytes = static_cast<Bytes>(counters_.blackholedBytes);
  c.ttlExpiredPackets = counters_.ttlExpiredPackets;
  c.deadLinkPackets = counters_.deadLinkPackets;
  c.deadLinkBytes = static_cast<Bytes>(counters_.deadLinkBytes);
  c.lastRouteLoss = counters_.lastRouteLoss;

  // Per tier and direction: 0 host->leaf, 1 leaf->host, then up/down per switch tier.
  const double simTime = std::max(1.0, static_cast<double>(end.picos()));
  const int tiers = std::max(1, topo_.tiers());
  std::vector<TierCounters> tc(static_cast<size_t>(2 * tiers));
  std::vector<QueueHistogram> tierHist(tc.size());
  QueueHistogram all;
  std::vector<QueueHistogram> classHist(kTrafficClasses);
  std::vector<uint64_t> classMax(kTrafficClasses, 0);
  static const char* kTierNames[] = {"host-leaf", "leaf-spine", "spine-core", "tier3-tier4"};
  for (int t = 0; t < tiers; ++t) {
    tc[2 * t].name = std::string(kTierNames[std::min(t, 3)]) + " up";
    tc[2 * t + 1].name = std::string(kTierNames[std::min(t, 3)]) + " down";
  }
  double utilSum = 0;
  uint64_t directed = 0;
  std::vector<QueueStat> queues;
  std::vector<PausedPort> pausedList;
  int64_t minCredits = 0;
  bool anyCredits = false;
  for (PortId p = 0; p < ports_.size(); ++p) {
    const EgressPort& e = ports_[p];
    const LinkInfo& l = topo_.link(topo_.portLink(p));
    const NodeId n = topo_.portNode(p);
    const NodeId peer = topo_.peerNode(p);
    const bool up = topo_.isHost(n) || (!topo_.isHost(peer) && topo_.node(peer).tier > topo_.node(n).tier);
    const size_t idx = std::min(static_cast<size_t>(2 * l.tier + (up ? 0 : 1)), tc.size() - 1);
    const double util = static_cast<double>(e.busyTime().picos()) / simTime;
    TierCounters& t = tc[idx];
    ++t.links;
    t.utilMean += util;
    t.utilMax = std::max(t.utilMax, util);
    t.packetsDropped += e.drops();
    t.wireBytes += static_cast<Bytes>(e.wireBytesSent());
    t.ecnMarks += e.ecnMarks();
    const double paused = e.pausedTime(end).micros();
    t.pfcPausedUs += paused;
    c.pfcPausedUs += paused;
    if (e.pauseFramesReceived() > 0) {
      ++c.pausedPorts;
      pausedList.push_back(PausedPort{topo_.node(n).name, topo_.portLocal(p), topo_.node(peer).name, paused,
                                      e.pauseFramesReceived()});
    }
    if (e.creditsEnabled()) {
      c.creditsOutstanding += e.creditsOutstanding();
      minCredits = anyCredits ? std::min(minCredits, e.minCreditsSeen()) : e.minCreditsSeen();
      anyCredits = true;
    }
    if (!topo_.isHost(n)) {
      QueueHistogram portHist;
      bool any = false;
      for (uint8_t q = 0; q < kTrafficClasses; ++q)
        if (const auto h = e.histogram(q)) {
          portHist.merge(*h);
          classHist[q].merge(*h);
          classMax[q] = std::max(classMax[q], e.maxClassBytes(q));
          any = true;
        }
      t.maxQueueBytes = std::max<Bytes>(t.maxQueueBytes, static_cast<Bytes>(e.maxQueuedBytes()));
      c.maxQueueBytes = std::max<Bytes>(c.maxQueueBytes, static_cast<Bytes>(e.maxQueuedBytes()));
      tierHist[idx].merge(portHist);
      all.merge(portHist);
      if (any && portHist.count() > 0) {
        QueueStat q;
        q.node = topo_.node(n).name;
        q.port = topo_.portLocal(p);
        q.peer = topo_.node(peer).name;
        q.max = static_cast<Bytes>(e.maxQueuedBytes());
        q.p50 = std::min<Bytes>(static_cast<Bytes>(portHist.percentile(0.5)), q.max);
        q.p99 = std::min<Bytes>(static_cast<Bytes>(portHist.percentile(0.99)), q.max);
        q.samples = portHist.count();
        queues.push_back(std::move(q));
      }
      const Switch& sw = switches_[n - topo_.hostCount()];
      const uint32_t local = topo_.portLocal(p);
      if (const uint64_t peak = sw.mmu().peakHeadroom(local); peak > 0)
        c.headroomPeaks.push_back(HeadroomStat{topo_.node(n).name, local, topo_.node(peer).name,
                                               static_cast<Bytes>(peak),
                                               static_cast<Bytes>(sw.headroom(local))});
    }
    utilSum += util;
    ++directed;
    c.linkUtilMax = std::max(c.linkUtilMax, util);
  }
  for (size_t i = 0; i < tc.size(); ++i) {
    if (tc[i].links) tc[i].utilMean /= static_cast<double>(tc[i].links);
    // Bucket upper bounds can exceed the largest queue actually seen: clamp to it.
    const auto clampTo = [](uint64_t v, Bytes cap) { return std::min<Bytes>(static_cast<Bytes>(v), cap); };
    tc[i].queueP50 = clampTo(tierHist[i].percentile(0.5), tc[i].maxQueueBytes);
    tc[i].queueP90 = clampTo(tierHist[i].percentile(0.9), tc[i].maxQueueBytes);
    tc[i].queueP99 = clampTo(tierHist[i].percentile(0.99), tc[i].maxQueueBytes);
  }
  for (uint8_t q = 0; q < kTrafficClasses; ++q) {
    if (classHist[q].count() == 0) continue;
    const auto cap = static_cast<Bytes>(classMax[q]);
    ClassQueueStat st;
    st.tc = q;
    st.max = cap;
    st.p50 = std::min<Bytes>(static_cast<Bytes>(classHist[q].percentile(0.5)), cap);
    st.p90 = std::min<Bytes>(static_cast<Bytes>(classHist[q].percentile(0.9)), cap);
    st.p99 = std::min<Bytes>(static_cast<Bytes>(classHist[q].percentile(0.99)), cap);
    st.samples = classHist[q].count();
    c.queueByClass.push_back(st);
  }
  std::stable_sort(c.headroomPeaks.begin(), c.headroomPeaks.end(),
                   [](const HeadroomStat& a, const HeadroomStat& b) { return a.peak > b.peak; });
  if (!c.headroomPeaks.empty()) c.pfcMaxHeadroomUsed = c.headroomPeaks.front().peak;
  for (const Switch& sw : switches_)
    for (const Switch::Violation& v : sw.violations()) {
      const PortId gp = topo_.port(sw.id(), v.port);
      c.losslessViolations.push_back(LosslessViolation{
          topo_.node(sw.id()).name, v.port, topo_.node(topo_.peerNode(gp)).name, v.tc, v.drops, v.first});
    }
  c.queueP50 = std::min<Bytes>(static_cast<Bytes>(all.percentile(0.5)), c.maxQueueBytes);
  c.queueP90 = std::min<Bytes>(static_cast<Bytes>(all.percentile(0.9)), c.maxQueueBytes);
  c.queueP99 = std::min<Bytes>(static_cast<Bytes>(all.percentile(0.99)), c.maxQueueBytes);
  std::stable_sort(queues.begin(), queues.end(), [](const QueueStat& a, const QueueStat& b) {
    return a.p99 != b.p99 ? a.p99 > b.p99 : a.max > b.max;
  });
  if (queues.size() > 10) queues.resize(10);
  c.topQueues = std::move(queues);
  std::stable_sort(pausedList.begin(), pausedList.end(),
                   [](const PausedPort& a, const PausedPort& b) { return a.pausedUs > b.pausedUs; });
  if (pausedList.size() > 10) pausedList.resize(10);
  c.mostPausedPorts = std::move(pausedList);
  c.minCreditBytes = minCredits;
  c.linkUtilMean = directed ? utilSum / static_cast<double>(directed) : 0;
  c.perTier = std::move(tc);
  return c;
}

}  // namespace fabricsim
