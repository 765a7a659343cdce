#include "sim/flow/FlowFabric.h"

#include <algorithm>
#include <cmath>

#include "sim/config/SpecError.h"
#include "sim/core/Error.h"
#include "sim/routing/FlowHash.h"

namespace fabricsim {
namespace {

/// Bytes per picosecond of a bit rate.
double bytesPerPs(BitRate r) {
  return static_cast<double>(r.bitsPerSecond()) / 8e12;
}

}  // namespace

FlowFabric::FlowFabric(Simulator& sim, const Topology& topo, const TopologySpec& spec, const EcmpFib& fib)
    : sim_(sim),
      topo_(topo),
      spec_(spec),
      fib_(fib),
      framing_(spec.links.technology == "infiniband" ? LinkFraming::ib() : LinkFraming::roce()),
      mtu_(static_cast<uint32_t>(spec.links.mtu)),
      path_(topo, fib, spec, framing_.dataWireBytes(mtu_)),
      retransmit_(RetransmitSchedule::of(spec.nic, spec.links.technology == "infiniband")),
      nakRecovery_(spec.nic.reorder != "tolerant"),
      failover_(spec.nic.failover) {
  const std::string& algo = spec.routing.algorithm;
  selection_ = algo == "flowlet"    ? Selection::Flowlet
               : algo == "adaptive" ? Selection::Adaptive
               : algo == "spray"    ? Selection::Spray
                                    : Selection::Ecmp;
  // Modes without a fluid form are refused (README "Routing").
  if (selection_ == Selection::Adaptive && spec.routing.adaptiveBias > 0)
    throw specError(
        spec, "routing.adaptive_bias",
        "the flow and hybrid backends split an adaptive flow evenly over the members (per-packet "
        "adaptive routing in fluid form) and cannot keep it on its hashed member until a queue differs "
        "by a bias: remove routing.adaptive_bias or use --backend packet");
  // A per-QP window limits a flow to window / round trip only while queues are short; with the
  // fluid's converged rates and no queueing delay that is not what the packet backend does, so
  // the setting is refused rather than ignored.
  if (spec.nic.window > 0)
    throw specError(spec, "nic.window",
                    "the flow and hybrid backends do not model a per-QP window (rates are the converged "
                    "max-min shares, without queueing delay): remove nic.window or use --backend packet");
  solver_.trackLoad(selection_ == Selection::Flowlet);  // only flowlet placement reads loads
  pfcClasses_ = PfcSpreading::pausingClasses(spec);
  solver_.logChanges(pfcClasses_ != 0);  // applyPfcSpreading redoes the components it reaches
  // Payload capacity: a full MTU of payload costs its framed size on the wire.
  const double efficiency = static_cast<double>(mtu_) / framing_.dataWireBytes(mtu_);
  for (PortId p = 0; p < topo.portCount(); ++p)
    solver_.addResource(bytesPerPs(topo.portRate(p)) * efficiency);
  nominal_.resize(topo.portCount());
  for (PortId p = 0; p < topo.portCount(); ++p) nominal_[p] = solver_.capacity(p);
  nvlink_ = std::make_unique<NvlinkModel>(sim, topo.gpuCount(), spec.hosts.nvlinkBandwidth,
                                          spec.hosts.nvlinkLatency,
                                          [this](uint32_t record) { finishRecord(record); });
  portBytes_.assign(topo.portCount(), 0.0);
  ackWeight_ =
      static_cast<double>(framing_.ack) / (std::max(1, spec.nic.ackEvery) * framing_.dataWireBytes(mtu_));
}

void FlowFabric::setSubnetManager(const IbSubnetManager& sm) {
  SIM_CHECK(flowsStarted_ == 0, "the subnet manager must be set before any transfer");
  path_.setIbRouting(&sm.lft(), &sm.lids());
  if (sm.adaptive()) {
    selection_ = Selection::Adaptive;
    solver_.trackLoad(true);
  }
}

std::vector<std::string> FlowFabric::unmodelledEffects() {
  return {"congestion-control transients (rates are the converged max-min fair share at once)",
          "queueing delay and buffer occupancy",
          "ECN marking",
          "PFC pauses and InfiniBand credit stalls under a congestion control (its converged rates are "
          "taken; the pauses of its transients are left out; without one, paused ports and their victims "
          "are modelled)",
          "PFC and credit pause dynamics (XOFF/XON cycles, pause frames, headroom), PFC storms and "
          "deadlocks",
          "packet drops other than at failed links and missing routes (buffer overflow, lossless violations)",
          "link capacity burnt by packets sent into a failed link before the flow notices",
          "congestion-notification traffic (ACKs are counted as a share of the NIC links)",
          "packet reordering"};
}

Time FlowFabric::route(uint32_t srcGpu, uint32_t dstGpu, uint8_t tc, uint16_t qp, Bytes bytes,
                       uint32_t transferId) {
  hops_.clear();
  ackHops_ = 0;
  routeBroken_ = false;
  if (cacheStale_) {
    routeCache_.clear();
    routeHops_.clear();
    flowlets_.clear();  // a flowlet's path may cross what failed: the next transfer re-places it
    flowletHops_.clear();
    cacheStale_ = false;
  }
  if (topo_.hostOfGpu(srcGpu) == topo_.hostOfGpu(dstGpu))
    return spec_.hosts.nvlinkLatency;  // NVLink: no hops
  uint32_t srcNic, dstNic;             // PXN when its own NIC cannot reach; the failed-over NICs if it moved
  uint64_t key;
  nicsOf(srcGpu, dstGpu, tc, qp, srcNic, dstNic, key);
  // A hashed path of full frames depends only on the queue pair: ring steps, buckets and
  // micro-batches repeat the same ones, so they are looked up once.
  const bool cacheable = selection_ == Selection::Ecmp && bytes >= static_cast<Bytes>(mtu_) &&
                         dstNic < (1u << 21) && srcNic < (1u << 23);
  if (cacheable) {
    if (const CachedRoute* c = routeCache_.find(key)) {
      hops_.assign(routeHops_.begin() + c->offset, routeHops_.begin() + c->offset + c->count);
      ackHops_ = c->ackHops;
      return c->latency;
    }
  }
  const bool keyed = dstNic < (1u << 21) && srcNic < (1u << 23);
  if (selection_ == Selection::Flowlet && keyed) {
    // The queue pair's flowlet goes on while it has a transfer in the fluid or has been idle no
    // longer than the gap; a new one is placed afresh (hashedRoute) and replaces it.
    Flowlet* f = flowlets_.find(key);
    if (f && (f->active > 0 || (f->ended && sim_.now() - f->lastEnd <= spec_.routing.flowletGap))) {
      hops_.assign(flowletHops_.begin() + f->offset, flowletHops_.begin() + f->offset + f->count);
      ackHops_ = f->ackHops;
      return latencyOf(bytes);
    }
    const Time latency = hashedRoute(srcNic, dstNic, tc, qp, bytes, transferId);
    if (routeBroken_) return latency;     // black-holed: nothing to remember
    if (f && f->count == hops_.size()) {  // every member is a minimal path: the same length
      std::copy(hops_.begin(), hops_.end(), flowletHops_.begin() + f->offset);
      f->ackHops = static_cast<uint16_t>(ackHops_);
    } else if (!f) {
      flowlets_.insert(
          key, Flowlet{static_cast<uint32_t>(flowletHops_.size()), static_cast<uint16_t>(hops_.size()),
                       static_cast<uint16_t>(ackHops_), 0, false, Time::zero()});
      if (flowlets_.find(key)) flowletHops_.insert(flowletHops_.end(), hops_.begin(), hops_.end());
    }
    return latency;
  }
  const Time latency = hashedRoute(srcNic, dstNic, tc, qp, bytes, transferId);
  if (cacheable && !routeBroken_ && routeCache_.size() < kRouteCacheEntries) {
    routeCache_.insert(
        key, CachedRoute{static_cast<uint32_t>(routeHops_.size()), static_cast<uint16_t>(hops_.size()),
                         static_cast<uint16_t>(ackHops_), latency});
    routeHops_.insert(routeHops_.end(), hops_.begin(), hops_.end());
  }
  return latency;
}

void FlowFabric::nicsOf(uint32_t srcGpu, uint32_t dstGpu, uint8_t tc, uint16_t qp, uint32_t& src,
                        uint32_t& dst, uint64_t& key) const {
  src = path_.sourceNic(srcGpu, dstGpu);
  dst = topo_.nicOfGpu(dstGpu);
  key = (static_cast<uint64_t>(src) << 40) | (static_cast<uint64_t>(dst) << 19) |
        (static_cast<uint64_t>(tc & 7) << 16) | qp;
  if (movedQps_.empty()) return;
  if (const auto it = movedQps_.find(key); it != movedQps_.end()) {
    src = it->second.first;
    dst = it->second.second;
  }
}

Time FlowFabric::hashedRoute(uint32_t srcNic, uint32_t dstNic, uint8_t tc, uint16_t qp, Bytes bytes,
                             uint32_t transferId) {
  uint64_t tuple = path_.queuePairTuple(srcNic, dstNic, tc, qp);
  if (selection_ == Selection::Flowlet)
    tuple = FlowHash::mix(tuple ^ (static_cast<uint64_t>(transferId) << 1));
  // The hashed (or least-loaded) path, hop by hop; it also gives the fixed latency.
  const uint32_t firstPayload = static_cast<uint32_t>(std::min<Bytes>(bytes, mtu_));
  const uint32_t frame = framing_.dataWireBytes(firstPayload);
  PortId p = topo_.nicPort(srcNic);
  hops_.push_back({p, 1.0f});
  Time latency = topo_.portLatency(p);
  NodeId at = topo_.peerNode(p);
  while (!topo_.isHost(at)) {
    latency += spec_.sw.latency;
    PortId next = path_.nextHop(at, dstNic, tuple);
    if (next == kInvalid) {  // no route (a control plane reconverging): black-holed here
      routeBroken_ = true;
      break;
    }
    if (selection_ == Selection::Flowlet) {
      const auto group = fib_.group(at, dstNic);
      if (group.size() > 1) {
        // The least-loaded member; scanning from the transfer's hashed member breaks ties as the
        // packet backend's random choice would, reproducibly.
        const uint32_t start =
            FlowHash::select(tuple, fib_.switchSeed(at), static_cast<uint32_t>(group.size()));
        double best = solver_.load(group[start]);
        next = group[start];
        for (size_t k = 1; k < group.size(); ++k) {
          const PortId cand = group[(start + k) % group.size()];
          const double l = solver_.load(cand);
          if (l < best) {
            best = l;
            next = cand;
          }
        }
      }
    }
    hops_.push_back({next, 1.0f});
    latency += topo_.portLatency(next) + serializationTime(frame, topo_.portRate(next));
    at = topo_.peerNode(next);
  }
  if ((selection_ == Selection::Spray || selection_ == Selection::Adaptive) && !routeBroken_) {
    // Even split: at each switch the fraction arriving is divided equally over its group.
    hops_.resize(1);
    frontier_.assign(1, {topo_.peerNode(hops_[0].resource), 1.0});
    while (!frontier_.empty()) {
      nextFrontier_.clear();
      for (const auto& [node, frac] : frontier_) {
        const auto group = fib_.group(node, dstNic);
        auto add = [&](PortId port, double f) {
          hops_.push_back({port, static_cast<float>(f)});
          const NodeId nn = topo_.peerNode(port);
          if (topo_.isHost(nn)) return;
          for (auto& e : nextFrontier_)
            if (e.first == nn) {
              e.second += f;
              return;
            }
          nextFrontier_.emplace_back(nn, f);
        };
        if (group.empty()) {
          const PortId only = fib_.nextHop(node, dstNic, tuple);
          if (only == kInvalid) {
            routeBroken_ = true;
            continue;
          }
          add(only, frac);
        } else
          for (PortId m : group) add(m, frac / static_cast<double>(group.size()));
      }
      frontier_.swap(nextFrontier_);
    }
    // A port reached along several branches appears once, with the summed weight.
    std::sort(hops_.begin(), hops_.end(),
              [](const MaxMinSolver::Hop& a, const MaxMinSolver::Hop& b) { return a.resource < b.resource; });
    size_t out = 0;
    for (size_t i = 0; i < hops_.size(); ++i) {
      if (out > 0 && hops_[out - 1].resource == hops_[i].resource)
        hops_[out - 1].weight += hops_[i].weight;
      else
        hops_[out++] = hops_[i];
    }
    hops_.resize(out);
    for (auto& h : hops_) h.weight = std::min(h.weight, 1.0f);
  }
  // Acknowledgements ride the reverse direction of the two NIC links: the destination's uplink
  // and the source's downlink carry ack / (ackEvery x framed MTU) of the flow's rate.
  ackHops_ = 0;
  if (ackWeight_ > 0) {
    hops_.push_back({topo_.nicPort(dstNic), static_cast<float>(ackWeight_)});
    hops_.push_back({topo_.peerPort(topo_.nicPort(srcNic)), static_cast<float>(ackWeight_)});
    ackHops_ = 2;
  }
  return latency;
}

Time FlowFabric::latencyOf(Bytes bytes) const {
  const uint32_t frame = framing_.dataWireBytes(static_cast<uint32_t>(std::min<Bytes>(bytes, mtu_)));
  Time latency = topo_.portLatency(hops_[0].resource);
  for (size_t i = 1; i + ackHops_ < hops_.size(); ++i)
    latency += spec_.sw.latency + topo_.portLatency(hops_[i].resource) +
               serializationTime(frame, topo_.portRate(hops_[i].resource));
  return latency;
}

double FlowFabric::pathRate(uint32_t srcGpu, uint32_t dstGpu) const {
  return path_.rate(srcGpu, dstGpu);
}

Time FlowFabric::pathLatency(uint32_t srcGpu, uint32_t dstGpu) const {
  // Collectives ask for the latency of every hop of their rings at each call; the tables do not
  // change during a flow-level run, so each pair's walk through them is done once.
  const uint64_t key = (static_cast<uint64_t>(srcGpu) << 32) | dstGpu;
  if (const Time* t = latencyCache_.find(key)) return *t;
  const Time t = path_.latency(srcGpu, dstGpu);
  latencyCache_.insert(key, t);
  return t;
}

std::vector<MaxMinSolver::Hop> FlowFabric::pathOf(const TransferRequest& r) {
  route(r.srcGpu, r.dstGpu, r.trafficClass, r.qp, r.bytes, static_cast<uint32_t>(transfers_.started()));
  return {hops_.begin(), hops_.end() - static_cast<long>(ackHops_)};
}

void FlowFabric::send(const TransferRequest& r, TransferObserver* observer) {
  SIM_CHECK(r.srcGpu < topo_.gpuCount() && r.dstGpu < topo_.gpuCount(), "transfer between unknown GPUs");
  SIM_CHECK(r.trafficClass < 7, "traffic class 7 is reserved for control packets");
  SIM_CHECK(r.bytes >= 0, "negative transfer size");
  uint64_t orderKey = 0;
  if (r.inOrder && r.bytes > 0 && topo_.hostOfGpu(r.srcGpu) != topo_.hostOfGpu(r.dstGpu)) {
    // (NVLink transfers are served in order per GPU already.)
    const uint64_t key = (static_cast<uint64_t>(r.srcGpu) << 39) ^ (static_cast<uint64_t>(r.dstGpu) << 19) ^
                         (static_cast<uint64_t>(r.trafficClass) << 16) ^ r.qp;
    const auto [it, idle] = ordered_.try_emplace(key);
    if (!idle) {
      it->second.push_back({r, observer});
      return;
    }
    orderKey = key + 1;
  }
  dispatch(r, observer, orderKey);
}

void FlowFabric::releaseOrder(uint64_t orderKey) {
  if (orderKey == 0) return;
  const auto it = ordered_.find(orderKey - 1);
  SIM_CHECK(it != ordered_.end(), "an in-order connection without its entry");
  if (it->second.empty()) {
    ordered_.erase(it);
    return;
  }
  const Queued next = it->second.front();
  it->second.pop_front();
  dispatch(next.request, next.observer, orderKey);
}

FlowRecord FlowFabric::recordOf(const TransferRequest& r) const {
  FlowRecord rec;
  rec.srcGpu = r.srcGpu;
  rec.dstGpu = r.dstGpu;
  rec.bytes = r.bytes;
  rec.start = sim_.now();
  return rec;
}

void FlowFabric::dispatch(const TransferRequest& r, TransferObserver* observer, uint64_t orderKey) {
  FlowRecord rec = recordOf(r);
  rec.intraHost = topo_.hostOfGpu(r.srcGpu) == topo_.hostOfGpu(r.dstGpu);
  if (rec.intraHost) {
    // NVLink, as on the packet backend: each GPU's egress serves its transfers in order.
    rec.ideal = nvlink_->idealTime(r.bytes);
    const uint32_t record = transfers_.open(rec, r.tag, observer);
    ++flowsStarted_;
    nvlink_->send(r.srcGpu, r.bytes, record);
    return;
  }
  const Time latency =
      route(r.srcGpu, r.dstGpu, r.trafficClass, r.qp, r.bytes, static_cast<uint32_t>(transfers_.started()));
  const Bytes burst = r.burst > 0 ? std::min(r.burst, r.bytes) : r.bytes;
  if (routeWorks()) {
    const uint32_t record = openRouted(r, observer, latency);
    if (r.bytes == 0) {
      scheduleDelivery(record, sim_.now() + latency);  // nothing to share: after the path latency
      return;
    }
    const uint32_t f = start(record, static_cast<double>(r.bytes), latency, burst, r.trafficClass, r.qp);
    active_[f].orderKey = orderKey;
    requestRecompute();
    return;
  }
  // Posted into a failure: its ideal is that of the intact fabric; black-holed from its first
  // packet, it waits for a working path.
  const double nic = nominal_[topo_.nicPort(topo_.nicOfGpu(r.srcGpu))];
  rec.ideal =
      pathLatency(r.srcGpu, r.dstGpu) + Time::ps(static_cast<int64_t>(std::ceil(static_cast<double>(r.bytes) / nic)));
  const uint32_t record = transfers_.open(rec, r.tag, observer);
  ++flowsStarted_;
  bytesSent_ += r.bytes;
  releaseOrder(orderKey);  // (a failure ends the connection's order: the next goes now)
  const uint32_t slot = newStalled();
  Stalled& st = stalled_[slot];
  st.record = record;
  st.srcGpu = r.srcGpu;
  st.dstGpu = r.dstGpu;
  st.bytes = r.bytes;
  st.remaining = static_cast<double>(r.bytes);
  st.rate = nominal_[topo_.nicPort(topo_.nicOfGpu(r.srcGpu))];  // it sends at line rate, into the hole
  st.burst = burst;
  st.tc = r.trafficClass;
  st.qp = r.qp;
  st.since = sim_.now();
  ++stalls_;
  armTimer(slot);
}

uint32_t FlowFabric::openRouted(const TransferRequest& r, TransferObserver* observer, Time latency) {
  FlowRecord rec = recordOf(r);
  double bottleneck = 0;
  for (size_t i = 0; i + ackHops_ < hops_.size(); ++i) {
    const MaxMinSolver::Hop h = hops_[i];
    const double c = nominal_[h.resource] / h.weight;
    bottleneck = bottleneck == 0 ? c : std::min(bottleneck, c);
  }
  rec.ideal = latency + Time::ps(static_cast<int64_t>(std::ceil(static_cast<double>(r.bytes) / bottleneck)));
  const uint32_t record = transfers_.open(rec, r.tag, observer);
  ++flowsStarted_;
  bytesSent_ += r.bytes;
  for (size_t i = 0; i + ackHops_ < hops_.size(); ++i)
    portBytes_[hops_[i].resource] += static_cast<double>(r.bytes) * hops_[i].weight;
  return record;
}

uint32_t FlowFabric::start(uint32_t record, double remaining, Time latency, Bytes burst, uint8_t tc,
                           uint16_t qp, uint32_t group) {
  const auto dataHops = static_cast<uint32_t>(hops_.size() - ackHops_);
  uint32_t pace = kNoPace;
  if (episodes_ != nullptr) {
    // Its own resource, after the path and the ACK share: the pace an episode holds it to.
    if (freePaces_.empty()) {
      pace = solver_.addResource(kUnpaced);
    } else {
      pace = freePaces_.back();
      freePaces_.pop_back();
    }
    hops_.push_back({pace, 1.0f});
  }
  const uint32_t f = solver_.addFlow(hops_);
  if (pace != kNoPace) hops_.pop_back();
  if (f >= active_.size()) active_.resize(f + 1);
  Active& a = active_[f];
  a = Active{};
  a.pace = pace;
  if (selection_ == Selection::Flowlet) {
    const FlowRecord& rec = transfers_.record(record);
    const uint32_t srcNic = path_.sourceNic(rec.srcGpu, rec.dstGpu), dstNic = topo_.nicOfGpu(rec.dstGpu);
    const uint64_t key = (static_cast<uint64_t>(srcNic) << 40) | (static_cast<uint64_t>(dstNic) << 19) |
                         (static_cast<uint64_t>(tc & 7) << 16) | qp;
    if (Flowlet* fl = flowlets_.find(key)) {
      ++fl->active;
      a.flowletKey = key;
    }
  }
  a.remaining = remaining;
  a.dataHops = dataHops;
  a.burst = burst;
  a.last = sim_.now();
  a.latency = latency;
  a.record = record;
  a.tc = tc;
  a.qp = qp;
  a.live = true;
  a.group = group;
  // A message on a queue pair an earlier episode left cut starts held to that state's rate.
  if (qpCc_ != nullptr && pace != kNoPace) {
    if (group != kNoGroup) {
      holdGroupAtCarriedRate(f);
    } else if (const auto it = qpSlots_.find(queuePairKey(record, tc, qp)); it != qpSlots_.end()) {
      a.ccSlot = it->second;
      holdAtCarriedRate(f);
      if (a.held) ++carriedHolds_;
    }
  }
  return f;
}

void FlowFabric::requestRecompute() {
  if (recomputeScheduled_) return;
  recomputeScheduled_ = true;
  sim_.schedule(sim_.now(), this, kRecompute);
}

void FlowFabric::settle(uint32_t f, Time now) {
  Active& a = active_[f];
  a.remaining -= a.rate * static_cast<double>((now - a.last).picos());
  a.last = now;
}

void FlowFabric::updateFinish(uint32_t f) {
  Active& a = active_[f];
  if (a.rate <= 0) {
    finishes_.erase(f);
    return;
  }
  const double ps = std::max(0.0, a.remaining) / a.rate;
  finishes_.set(f, a.last + Time::ps(static_cast<int64_t>(std::ceil(ps))));
}

void FlowFabric::recompute() {
  const Time now = sim_.now();
  if (rerouteAll_) {
    rerouteAll_ = false;
    reroute();
  }
  // With a congestion-episode model, the capacities of the links the solve left congested
  // depend on the solution: rounds of (solve, new capacities) run to a fixed point.
  const auto solve = [&] {
    solver_.solve([&](uint32_t f, double /*old*/) {
      settle(f, now);
      Active& a = active_[f];
      a.rate = solver_.rate(f);
      updateFinish(f);
      if (a.paced) setPaceExpiry(f);
    });
  };
  solve();
  if (episodes_ != nullptr) {
    // Rounds of (episodes from the solution, their flows held to their paces, solve) until a
    // solution leaves no new episode (each round holds at least one more flow), or max_rounds.
    const EpisodeSpec& ep = spec_.episodes;
    refreshHolds();
    expirePaces(now);
    if (solver_.pending()) solve();
    uint32_t updates = 0;
    while (commitEpisodes(ep.tolerance) > 0) {
      solve();
      if (++updates == static_cast<uint32_t>(ep.maxRounds)) {
        ++coupling_.unconverged;
        break;
      }
    }
    ++coupling_.recomputations;
    coupling_.rounds += updates;
    coupling_.maxRounds = std::max(coupling_.maxRounds, updates);
    schedulePaceExpiry();
  }
  if (pfcClasses_ != 0) applyPfcSpreading(now);  // paused ports and their victims (PfcSpreading)
  scheduleCompletion();
}

void FlowFabric::scheduleCompletion() {
  if (finishes_.empty()) return;
  const Time at = finishes_.top().at;
  if (at < nextCompletion_) {
    nextCompletion_ = at;
    sim_.schedule(at, this, kCompletion);
  }
}

void FlowFabric::completeDue() {
  const Time now = sim_.now();
  bool any = false;
  released_.clear();
  while (!finishes_.empty() && finishes_.top().at <= now) {
    const uint32_t f = finishes_.top().flow;
    finishes_.erase(f);
    Active& a = active_[f];
    a.live = false;
    endFlowlet(a, now);
    releasePace(a);
    solver_.removeFlow(f);
    if (a.group != kNoGroup) {
      // Every member of a pipeline left together; each arrives after its own path latency.
      // (Groups are split at the first failure's recomputation, so their ACKs need no check.)
      for (const GroupMember& m : groups_[a.group].members) scheduleDelivery(m.record, now + m.latency);
      groups_[a.group].members.clear();
      groups_[a.group].paths.clear();
      groups_[a.group].crossings.clear();
      freeGroups_.push_back(a.group);
      a.group = kNoGroup;
    } else {
      scheduleDelivery(a.record, now + a.latency);
      if (failuresSeen_) checkAcks(a);
    }
    if (a.orderKey != 0) released_.push_back(a.orderKey);
    a.orderKey = 0;
    any = true;
  }
  // The next message of each connection whose message left (after the loop: starting one may
  // grow active_).
  for (const uint64_t key : released_) releaseOrder(key);
  if (any) requestRecompute();
}

void FlowFabric::endFlowlet(const Active& a, Time now) {
  if (a.flowletKey == 0) return;
  if (Flowlet* fl = flowlets_.find(a.flowletKey)) {
    --fl->active;
    fl->ended = true;
    fl->lastEnd = now;
  }
}

void FlowFabric::scheduleDelivery(uint32_t record, Time at) {
  uint32_t slot;
  if (!freeDeliveries_.empty()) {
    slot = freeDeliveries_.back();
    freeDeliveries_.pop_back();
    deliveries_[slot] = record;
  } else {
    slot = static_cast<uint32_t>(deliveries_.size());
    deliveries_.push_back(record);
  }
  sim_.schedule(at, this, kDeliveryBase + slot);
}

void FlowFabric::deliver(uint32_t slot) {
  const uint32_t record = deliveries_[slot];
  freeDeliveries_.push_back(slot);
  finishRecord(record);
}

void FlowFabric::finishRecord(uint32_t record) {
  const Time now = sim_.now();
  const FlowRecord& rec = transfers_.record(record);
  if (!rec.intraHost) {
    bytesDelivered_ += rec.bytes;
    lastDelivery_ = std::max(lastDelivery_, now);
  }
  const TransferTable::Waiter w = transfers_.deliver(record, now);  // frees the slot
  if (w.observer) w.observer->onTransferDelivered(w.tag, now);
}

void FlowFabric::onEvent(uint32_t tag) {
  if (tag & kStallBit) {
    onStallEvent(tag & ~kStallBit);
  } else if (tag == kPaceExpiry) {
    if (sim_.now() != nextPaceExpiry_) return;  // superseded
    nextPaceExpiry_ = Time::max();
    requestRecompute();
  } else if (tag == kRecompute) {
    recomputeScheduled_ = false;
    recompute();
  } else if (tag == kCompletion) {
    if (sim_.now() != nextCompletion_) return;  // superseded by an earlier completion event
    nextCompletion_ = Time::max();
    completeDue();
    scheduleCompletion();
  } else {
    deliver(tag - kDeliveryBase);
  }
}

}  // namespace fabricsim
