#include "sim/flow/MaxMinSolver.h"

#include <algorithm>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

/// Min-heap order on (share, resource): deterministic among equal shares.
bool later(const auto& a, const auto& b) {
  return a.share != b.share ? a.share > b.share : a.resource > b.resource;
}

}  // namespace

uint32_t MaxMinSolver::addResource(double capacity) {
  SIM_CHECK(capacity > 0, "a resource needs a positive capacity");
  Res r;
  r.capacity = capacity;
  res_.push_back(r);
  weightSum_.push_back(0);
  users_.emplace_back();
  return static_cast<uint32_t>(res_.size() - 1);
}

void MaxMinSolver::setCapacity(uint32_t r, double capacity) {
  SIM_CHECK(capacity > 0, "a resource needs a positive capacity");
  if (res_[r].capacity == capacity) return;
  res_[r].capacity = capacity;
  // The flows bottlenecked here take the new share; flows bottlenecked elsewhere join the set
  // only if the new share falls below their rate (the fill's edge check).
  expand_.push_back(r);
}

uint32_t MaxMinSolver::addFlow(std::span<const Hop> hops) {
  SIM_CHECK(!hops.empty(), "a flow needs at least one resource");
  const uint32_t n = static_cast<uint32_t>(hops.size());
  uint32_t f;
  if (!freeFlows_.empty()) {
    f = freeFlows_.back();
    freeFlows_.pop_back();
  } else {
    f = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    flowStamp_.push_back(0);
    frozen_.push_back(0);
  }
  uint32_t offset;
  if (n < freeHops_.size() && !freeHops_[n].empty()) {
    offset = freeHops_[n].back();
    freeHops_[n].pop_back();
  } else {
    offset = static_cast<uint32_t>(hops_.size());
    hops_.resize(hops_.size() + n);
    hopSlot_.resize(hops_.size());
  }
  Flow& fl = flows_[f];
  fl = Flow{offset, n, 0, 0, true};
  for (uint32_t i = 0; i < n; ++i) {
    const Hop h = hops[i];
    SIM_DCHECK(h.resource < res_.size() && h.weight > 0 && h.weight <= 1, "bad hop");
    hops_[offset + i] = h;
    auto& users = users_[h.resource];
    hopSlot_[offset + i] = static_cast<uint32_t>(users.size());
    users.push_back(User{f, i});
    weightSum_[h.resource] += h.weight;
  }
  newFlows_.push_back(f);
  peakActive_ = std::max(peakActive_, ++active_);
  return f;
}

void MaxMinSolver::removeFlow(uint32_t f) {
  Flow& fl = flows_[f];
  SIM_CHECK(fl.alive, "removing a flow twice");
  for (uint32_t i = 0; i < fl.count; ++i) {
    const Hop h = hops_[fl.offset + i];
    // Flows bottlenecked where this one leaves may now grow: that resource must be expanded.
    if (saturated(h.resource)) expand_.push_back(h.resource);
    auto& users = users_[h.resource];
    const uint32_t slot = hopSlot_[fl.offset + i];
    const User moved = users.back();
    users[slot] = moved;
    hopSlot_[flows_[moved.flow].offset + moved.hop] = slot;
    users.pop_back();
    weightSum_[h.resource] -= h.weight;
    res_[h.resource].usage -= fl.rate * h.weight;
    if (users.empty()) weightSum_[h.resource] = res_[h.resource].usage = 0;  // no drift left by float sums
  }
  if (fl.count >= freeHops_.size()) freeHops_.resize(fl.count + 1);
  freeHops_[fl.count].push_back(fl.offset);
  fl.alive = false;
  fl.rate = fl.next = 0;
  freeFlows_.push_back(f);
  --active_;
}

void MaxMinSolver::expandResource(uint32_t r) {
  // The flows bottlenecked here (those at its largest rate) join the set: a change here moves
  // them. Flows here at a lower rate are bottlenecked elsewhere and keep their rates unless
  // this resource's new share falls below them, which the fill's check catches.
  if (res_[r].stamp == epoch_) return;
  res_[r].stamp = epoch_;
  compRes_.push_back(r);
  double top = 0;
  for (const User& u : users_[r]) top = std::max(top, flows_[u.flow].rate);
  const double cut = top * (1 - kSaturation);
  bool all = true;
  for (const User& u : users_[r]) {
    if (flows_[u.flow].rate < cut) {
      all = false;
      continue;
    }
    if (flowStamp_[u.flow] == epoch_) continue;
    flowStamp_[u.flow] = epoch_;
    compFlows_.push_back(u.flow);
  }
  res_[r].kind = all ? 1 : 3;
}

bool MaxMinSolver::collectAndFill() {
  if (++epoch_ == 0) {  // stamps wrapped: clear them once every 2^32 rounds
    for (Res& r : res_) r.stamp = 0;
    std::fill(flowStamp_.begin(), flowStamp_.end(), 0);
    epoch_ = 1;
  }
  compRes_.clear();
  compFlows_.clear();
  for (const auto* list : {&newFlows_, &extraFlows_}) {
    for (uint32_t f : *list) {
      if (!flows_[f].alive || flowStamp_[f] == epoch_) continue;
      flowStamp_[f] = epoch_;
      compFlows_.push_back(f);
    }
  }
  for (uint32_t r : expand_) expandResource(r);
  // Grow through saturated resources; unsaturated ones become edge constraints.
  for (size_t i = 0; i < compFlows_.size(); ++i) {
    const Flow& fl = flows_[compFlows_[i]];
    for (uint32_t k = 0; k < fl.count; ++k) {
      const uint32_t r = hops_[fl.offset + k].resource;
      if (res_[r].stamp == epoch_) continue;
      if (saturated(r)) {
        expandResource(r);
      } else {
        res_[r].stamp = epoch_;
        res_[r].kind = 2;
        compRes_.push_back(r);
      }
    }
  }
  flowsRecomputed_ += compFlows_.size();

  // Capacity left to the set on each resource, and the set's weight there.
  for (uint32_t r : compRes_) {
    res_[r].weight = 0;
    res_[r].setUsage = 0;
    res_[r].setUsers = 0;
    res_[r].done = 0;
    res_[r].bottleneck = 0;
  }
  for (uint32_t f : compFlows_) {
    frozen_[f] = 0;
    const Flow& fl = flows_[f];
    for (uint32_t k = 0; k < fl.count; ++k) {
      const Hop h = hops_[fl.offset + k];
      res_[h.resource].weight += h.weight;
      res_[h.resource].setUsage += fl.rate * h.weight;
      ++res_[h.resource].setUsers;
    }
  }
  heap_.clear();
  for (uint32_t r : compRes_) {
    const double background = res_[r].kind == 1 ? 0.0 : std::max(0.0, res_[r].usage - res_[r].setUsage);
    res_[r].remaining = std::max(0.0, res_[r].capacity - background);
    if (res_[r].weight > 0) heap_.push_back(HeapEntry{res_[r].remaining / res_[r].weight, r, 0});
  }
  auto cmp = [](const HeapEntry& a, const HeapEntry& b) { return later(a, b); };
  std::make_heap(heap_.begin(), heap_.end(), cmp);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    const HeapEntry e = heap_.back();
    heap_.pop_back();
    if (res_[e.resource].done) continue;
    // Keys are lower bounds (a resource's share only grows as flows elsewhere freeze below it):
    // an entry whose resource's share has grown goes back with its current share.
    const double current = std::max(0.0, res_[e.resource].remaining) / res_[e.resource].weight;
    if (current > e.share * (1 + 1e-12)) {
      heap_.push_back(HeapEntry{current, e.resource, 0});
      std::push_heap(heap_.begin(), heap_.end(), cmp);
      continue;
    }
    res_[e.resource].done = 1;
    res_[e.resource].bottleneck = 1;
    res_[e.resource].popShare = current;
    // Every unfrozen flow here is bottlenecked here: it gets this resource's fair share.
    const double share = current;
    for (const User& u : users_[e.resource]) {
      if (flowStamp_[u.flow] != epoch_ || frozen_[u.flow]) continue;
      frozen_[u.flow] = 1;
      Flow& fl = flows_[u.flow];
      fl.next = share;
      for (uint32_t k = 0; k < fl.count; ++k) {
        const Hop h = hops_[fl.offset + k];
        if (res_[h.resource].done) continue;
        res_[h.resource].remaining -= share * h.weight;
        res_[h.resource].weight -= h.weight;
        if (res_[h.resource].weight <= 1e-9) res_[h.resource].done = 1;  // every set flow on it is frozen
      }
    }
  }
  // A resource that became a bottleneck of the set while carrying flows outside it: any such
  // flow faster than the set's share there must come down to it, so it joins the set.
  bool complete = true;
  for (uint32_t r : compRes_) {
    if (res_[r].kind == 1 || !res_[r].bottleneck || users_[r].size() == res_[r].setUsers) continue;
    const double limit = res_[r].popShare * (1 + kSaturation);
    for (const User& u : users_[r]) {
      if (flowStamp_[u.flow] == epoch_ || flows_[u.flow].rate <= limit) continue;
      extraFlows_.push_back(u.flow);
      complete = false;
    }
  }
  return complete;
}

void MaxMinSolver::commit() {
  for (uint32_t f : compFlows_) {
    const Flow& fl = flows_[f];
    const double delta = fl.next - fl.rate;
    if (delta == 0) continue;
    for (uint32_t k = 0; k < fl.count; ++k) {
      const Hop h = hops_[fl.offset + k];
      if (res_[h.resource].kind != 1) res_[h.resource].usage += delta * h.weight;
    }
  }
  // Expanded resources hold only set flows: their usage is summed afresh (no drift).
  for (uint32_t r : compRes_) {
    if (res_[r].kind != 1) continue;
    double u = 0;
    for (const User& x : users_[r]) u += flows_[x.flow].next * hops_[flows_[x.flow].offset + x.hop].weight;
    res_[r].usage = u;
  }
  expand_.clear();
  newFlows_.clear();
  extraFlows_.clear();
}

size_t MaxMinSolver::memoryBytes() const {
  size_t b = res_.capacity() * sizeof(Res) + weightSum_.capacity() * sizeof(double) +
             users_.capacity() * sizeof(std::vector<User>) + flows_.capacity() * sizeof(Flow) +
             hops_.capacity() * sizeof(Hop) + hopSlot_.capacity() * sizeof(uint32_t);
  for (const auto& u : users_) b += u.capacity() * sizeof(User);
  b += flowStamp_.capacity() * sizeof(uint32_t) + frozen_.capacity();
  return b;
}

}  // namespace fabricsim
