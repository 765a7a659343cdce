// FlowFabric's group flows (Fabric::sendGroup): the network edges of one pipeline as one fluid
// flow. A member of b bytes puts weight b / B (B: the largest member's bytes) on every port of
// its path (ACK share included), summed where members share a port, so the max-min solver
// gives the group one rate r (bytes of B per ps) and every member moves r b / B: the steady
// state of a pipeline, whose edges cannot run ahead of the edge feeding them. The group
// finishes when B bytes have passed; each member is delivered after its own path latency.
// One flow instead of one per edge: a 64-host tree all-reduce of 4 channels is 8 flows, not
// 1,008, and its recomputations touch 8.
#include <algorithm>

#include "sim/core/Error.h"
#include "sim/flow/FlowFabric.h"

namespace fabricsim {

void FlowFabric::sendGroup(std::span<const TransferRequest> members, TransferObserver* observer) {
  if (!couplesGroups() || members.size() < 2) {
    for (const TransferRequest& r : members) send(r, observer);
    return;
  }
  uint32_t gi;
  if (!freeGroups_.empty()) {
    gi = freeGroups_.back();
    freeGroups_.pop_back();
  } else {
    gi = static_cast<uint32_t>(groups_.size());
    groups_.emplace_back();
  }
  groups_[gi].paths.clear();
  groupHops_.clear();
  double most = 0;
  uint8_t tc = 0;
  uint16_t qp = 0;
  Bytes burst = 0;
  for (const TransferRequest& r : members) {
    const bool intraHost = topo_.hostOfGpu(r.srcGpu) == topo_.hostOfGpu(r.dstGpu);
    if (intraHost || r.inOrder || r.bytes == 0) {
      send(r, observer);
      continue;
    }
    const Time latency =
        route(r.srcGpu, r.dstGpu, r.trafficClass, r.qp, r.bytes, static_cast<uint32_t>(transfers_.started()));
    if (!routeWorks()) {  // no route (failures are not coupled): on its own, as send() handles it
      send(r, observer);
      continue;
    }
    const uint32_t record = openRouted(r, observer, latency);
    const auto b = static_cast<double>(r.bytes);
    for (const MaxMinSolver::Hop& h : hops_) groupHops_.emplace_back(h.resource, h.weight * b);
    if (groups_[gi].members.empty()) {
      tc = r.trafficClass;
      qp = r.qp;
    }
    GroupMember m{record, latency, r.qp, b, r.burst > 0 ? std::min(r.burst, r.bytes) : r.bytes, 0, 0};
    if (episodes_ != nullptr) {  // its path, for the episodes it meets
      Group& g = groups_[gi];
      m.pathBegin = static_cast<uint32_t>(g.paths.size());
      g.paths.insert(g.paths.end(), hops_.begin(), hops_.end() - static_cast<long>(ackHops_));
      m.pathEnd = static_cast<uint32_t>(g.paths.size());
    }
    groups_[gi].members.push_back(m);
    most = std::max(most, b);
    burst = std::max(burst, m.burst);
  }
  Group& g = groups_[gi];
  if (g.members.empty()) {
    freeGroups_.push_back(gi);
    return;
  }
  g.most = most;
  for (GroupMember& m : g.members) m.share /= most;  // its bytes, until now
  std::sort(groupHops_.begin(), groupHops_.end());
  hops_.clear();
  for (size_t i = 0; i < groupHops_.size();) {
    double w = 0;
    const uint32_t res = groupHops_[i].first;
    for (; i < groupHops_.size() && groupHops_[i].first == res; ++i) w += groupHops_[i].second;
    hops_.push_back({res, static_cast<float>(w / most)});
  }
  ackHops_ = 0;  // the ACK shares are in the merged weights
  if (episodes_ != nullptr) indexCrossings(g);
  start(g.members.front().record, most, Time::zero(), burst, tc, qp, gi);
  requestRecompute();
}

void FlowFabric::indexCrossings(Group& g) {
  // Each member's first passage through each resource, by resource (then member), laid along
  // the merged hops (hops_, sorted by resource: the solver's hop order of the group's flow).
  crossScratch_.clear();
  for (uint32_t m = 0; m < g.members.size(); ++m)
    for (uint32_t k = g.members[m].pathBegin; k < g.members[m].pathEnd; ++k)
      crossScratch_.push_back({g.paths[k].resource, m, k - g.members[m].pathBegin});
  std::sort(crossScratch_.begin(), crossScratch_.end());
  g.crossings.clear();
  g.crossBegin.assign(hops_.size() + 1, 0);
  size_t i = 0;
  for (uint32_t h = 0; h < hops_.size(); ++h) {
    g.crossBegin[h] = static_cast<uint32_t>(g.crossings.size());
    for (; i < crossScratch_.size() && crossScratch_[i][0] == hops_[h].resource; ++i)
      if (g.crossings.size() == g.crossBegin[h] || g.crossings.back().first != crossScratch_[i][1])
        g.crossings.emplace_back(crossScratch_[i][1], crossScratch_[i][2]);
  }
  g.crossBegin[hops_.size()] = static_cast<uint32_t>(g.crossings.size());
  SIM_CHECK(i == crossScratch_.size(), "a group member's path crosses a resource outside the group's hops");
}

void FlowFabric::explodeGroups(Time now) {
  // Called by reroute(), inside a recomputation: the solve that follows takes the new flows.
  for (uint32_t f = 0; f < active_.size(); ++f) {
    if (!active_[f].live || active_[f].group == kNoGroup) continue;
    settle(f, now);
    const Active grouped = active_[f];
    Group& g = groups_[grouped.group];
    const double left = std::max(0.0, grouped.remaining) / g.most;
    active_[f].live = false;
    finishes_.erase(f);
    releasePace(active_[f]);  // hybrid mode: the group's pace or hold ends with it
    active_[f].group = kNoGroup;
    solver_.removeFlow(f);
    for (const GroupMember& m : g.members) {
      const FlowRecord& rec = transfers_.record(m.record);
      const Time latency = route(rec.srcGpu, rec.dstGpu, grouped.tc, m.qp, rec.bytes, rec.id);
      // Each member's share of what the group has left (reroute() then checks its path).
      start(m.record, left * static_cast<double>(rec.bytes), latency, grouped.burst, grouped.tc, m.qp);
    }
    g.members.clear();
    g.paths.clear();
    g.crossings.clear();
    freeGroups_.push_back(grouped.group);
  }
}

}  // namespace fabricsim
