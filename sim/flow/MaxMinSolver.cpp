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
  if (logChanges_) changed_.push_back(r);
  // The flows at its top rate take the new share (those tied here with a bottleneck elsewhere
  // too: a lower capacity may bind them here); flows below join the set only if the new share
  // falls below their rate (the fill's edge check).
  expand_.push_back(r | kByTopRate);
}

void MaxMinSolver::trackLoad(bool on) {
  SIM_CHECK(active_ == 0 && flows_.empty(), "load tracking can only change before the first flow");
  trackLoad_ = on;
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
    nextBottleneck_.push_back(kNoResource);
  }
  uint32_t offset;
  const uint32_t cls = blockClass(n);
  if (cls < freeHops_.size() && !freeHops_[cls].empty()) {
    offset = freeHops_[cls].back();
    freeHops_[cls].pop_back();
  } else {
    offset = static_cast<uint32_t>(hops_.size());
    hops_.resize(hops_.size() + blockSize(n));
    hopSlot_.resize(hops_.size());
  }
  Flow& fl = flows_[f];
  fl = Flow{offset, n, 0, 0, kNoResource, true};
  for (const Hop& h : hops) __builtin_prefetch(&users_[h.resource]);  // independent misses, issued together
  for (uint32_t i = 0; i < n; ++i) {
    const Hop h = hops[i];
    SIM_DCHECK(h.resource < res_.size() && h.weight > 0, "bad hop");
    hops_[offset + i] = h;
    auto& users = users_[h.resource];
    hopSlot_[offset + i] = static_cast<uint32_t>(users.size());
    users.push_back(User{f, offset + i});
    if (trackLoad_) weightSum_[h.resource] += h.weight;
  }
  newFlows_.push_back(f);
  if (logChanges_) changed_.push_back(hops[0].resource);  // reaches its whole component
  peakActive_ = std::max(peakActive_, ++active_);
  return f;
}

void MaxMinSolver::removeFlow(uint32_t f) {
  Flow& fl = flows_[f];
  SIM_CHECK(fl.alive, "removing a flow twice");
  for (uint32_t i = 0; i < fl.count; ++i) {  // independent misses, issued together
    const uint32_t r = hops_[fl.offset + i].resource;
    __builtin_prefetch(&res_[r]);
    __builtin_prefetch(&users_[r]);
  }
  for (uint32_t i = 0; i < fl.count; ++i) {  // then the list entries they point to
    const auto& users = users_[hops_[fl.offset + i].resource];
    __builtin_prefetch(&users[hopSlot_[fl.offset + i]]);
    __builtin_prefetch(&users.back());
  }
  for (uint32_t i = 0; i < fl.count; ++i) {
    const Hop h = hops_[fl.offset + i];
    if (logChanges_) changed_.push_back(h.resource);
    // Flows bottlenecked where this one leaves may now grow: that resource must be expanded.
    if (saturated(h.resource)) expand_.push_back(h.resource);
    auto& users = users_[h.resource];
    const uint32_t slot = hopSlot_[fl.offset + i];
    const User moved = users.back();
    users[slot] = moved;
    hopSlot_[moved.slot] = slot;
    users.pop_back();
    res_[h.resource].usage -= fl.rate * h.weight;
    if (users.empty()) res_[h.resource].usage = 0;  // no drift left by float sums
    if (trackLoad_) weightSum_[h.resource] = users.empty() ? 0 : weightSum_[h.resource] - h.weight;
  }
  const uint32_t cls = blockClass(fl.count);
  if (cls >= freeHops_.size()) freeHops_.resize(cls + 1);
  freeHops_[cls].push_back(fl.offset);
  fl.alive = false;
  fl.rate = fl.next = 0;
  freeFlows_.push_back(f);
  --active_;
}

void MaxMinSolver::expandResource(uint32_t r, bool byTopRate) {
  // The flows bottlenecked here join the set: a change here moves them. A flow at the same
  // rate whose last solve gave it its share at another resource (a tie) is held there as
  // well: it keeps its rate unless that resource changes too (then it joins from there) or
  // this one's new share falls below it, which the fill's check catches; so do the flows
  // here at lower rates, bottlenecked elsewhere.
  if (res_[r].stamp == epoch_) return;
  Scratch& sc = touch(r, 3);
  for (const User& u : users_[r]) __builtin_prefetch(&flows_[u.flow]);
  double cut = 0;
  if (byTopRate) {
    double top = 0;
    for (const User& u : users_[r]) top = std::max(top, flows_[u.flow].rate);
    cut = top * (1 - kSaturation);
  }
  bool all = true;
  for (const User& u : users_[r]) {
    const Flow& fl = flows_[u.flow];
    if (byTopRate ? fl.rate < cut : fl.bottleneck != r) {
      all = false;
      continue;
    }
    if (flowStamp_[u.flow] == epoch_) continue;
    flowStamp_[u.flow] = epoch_;
    compFlows_.push_back(u.flow);
  }
  if (all) sc.kind = 1;
}

MaxMinSolver::Scratch& MaxMinSolver::touch(uint32_t r, uint8_t kind) {
  res_[r].stamp = epoch_;
  res_[r].slot = static_cast<uint32_t>(compRes_.size());
  compRes_.push_back(r);
  Scratch& sc = scr_.emplace_back();
  sc.kind = kind;
  return sc;
}

bool MaxMinSolver::collectAndFill() {
  if (++epoch_ == 0) {  // stamps wrapped: clear them once every 2^32 rounds
    for (Res& r : res_) r.stamp = 0;
    std::fill(flowStamp_.begin(), flowStamp_.end(), 0);
    epoch_ = 1;
  }
  compRes_.clear();
  scr_.clear();
  compFlows_.clear();
  for (const auto* list : {&newFlows_, &extraFlows_}) {
    for (uint32_t f : *list) {
      if (!flows_[f].alive || flowStamp_[f] == epoch_) continue;
      flowStamp_[f] = epoch_;
      compFlows_.push_back(f);
    }
  }
  for (uint32_t r : expand_) expandResource(r & ~kByTopRate, (r & kByTopRate) != 0);
  // Grow through saturated resources; unsaturated ones become edge constraints.
  // The tables are far larger than the caches and the set visits them in no order: the flows a
  // few places ahead are prefetched (their record, then their hops, then their resources).
  for (size_t i = 0; i < compFlows_.size(); ++i) {
    if (i + 8 < compFlows_.size()) __builtin_prefetch(&flows_[compFlows_[i + 8]]);
    if (i + 4 < compFlows_.size()) __builtin_prefetch(&hops_[flows_[compFlows_[i + 4]].offset]);
    if (i + 2 < compFlows_.size()) {
      const Flow& ahead = flows_[compFlows_[i + 2]];
      for (uint32_t k = 0; k < ahead.count; ++k) __builtin_prefetch(&res_[hops_[ahead.offset + k].resource]);
    }
    const Flow& fl = flows_[compFlows_[i]];
    for (uint32_t k = 0; k < fl.count; ++k) {
      const uint32_t r = hops_[fl.offset + k].resource;
      if (res_[r].stamp == epoch_) continue;
      if (saturated(r)) {
        expandResource(r, false);
      } else {
        touch(r, 2);
      }
    }
  }
  flowsRecomputed_ += compFlows_.size();

  // Capacity left to the set on each resource, and the set's weight there.
  for (uint32_t f : compFlows_) {
    frozen_[f] = 0;
    const Flow& fl = flows_[f];
    for (uint32_t k = 0; k < fl.count; ++k) {
      const Hop h = hops_[fl.offset + k];
      Scratch& sc = scr(h.resource);
      sc.weight += h.weight;
      sc.setUsage += fl.rate * h.weight;
      ++sc.setUsers;
    }
  }
  heap_.clear();
  for (uint32_t i = 0; i < compRes_.size(); ++i) {
    const Res& res = res_[compRes_[i]];
    Scratch& sc = scr_[i];
    const double background = sc.kind == 1 ? 0.0 : std::max(0.0, res.usage - sc.setUsage);
    sc.remaining = std::max(0.0, res.capacity - background);
    if (sc.weight > 0) heap_.push_back(HeapEntry{sc.remaining / sc.weight, compRes_[i], i});
  }
  auto cmp = [](const HeapEntry& a, const HeapEntry& b) { return later(a, b); };
  std::make_heap(heap_.begin(), heap_.end(), cmp);
  // Until every flow of the set is frozen: the resources left then have no flow to give a share.
  size_t unfrozen = compFlows_.size();
  while (unfrozen > 0 && !heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    const HeapEntry e = heap_.back();
    heap_.pop_back();
    Scratch& top = scr_[e.slot];
    if (top.done) continue;
    // Keys are lower bounds (a resource's share only grows as flows elsewhere freeze below it):
    // an entry whose resource's share has grown goes back with its current share.
    const double current = std::max(0.0, top.remaining) / top.weight;
    if (current > e.share * (1 + 1e-12)) {
      heap_.push_back(HeapEntry{current, e.resource, e.slot});
      std::push_heap(heap_.begin(), heap_.end(), cmp);
      continue;
    }
    top.done = 1;
    top.bottleneck = 1;
    top.popShare = current;
    // Every unfrozen flow here is bottlenecked here: it gets this resource's fair share.
    const double share = current;
    for (const User& u : users_[e.resource]) {
      if (flowStamp_[u.flow] != epoch_ || frozen_[u.flow]) continue;
      frozen_[u.flow] = 1;
      nextBottleneck_[u.flow] = e.resource;
      --unfrozen;
      Flow& fl = flows_[u.flow];
      fl.next = share;
      for (uint32_t k = 0; k < fl.count; ++k) {
        const Hop h = hops_[fl.offset + k];
        Scratch& sc = scr(h.resource);
        if (sc.done) continue;
        sc.remaining -= share * h.weight;
        sc.weight -= h.weight;
        if (sc.weight <= 1e-9) sc.done = 1;  // every set flow on it is frozen
      }
    }
  }
  // A resource that became a bottleneck of the set while carrying flows outside it: any such
  // flow faster than the set's share there must come down to it, so it joins the set.
  bool complete = true;
  for (uint32_t i = 0; i < compRes_.size(); ++i) {
    const uint32_t r = compRes_[i];
    const Scratch& sc = scr_[i];
    if (sc.kind == 1 || !sc.bottleneck || users_[r].size() == sc.setUsers) continue;
    const double limit = sc.popShare * (1 + kSaturation);
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
    Flow& fl = flows_[f];
    fl.bottleneck = nextBottleneck_[f];
    const double delta = fl.next - fl.rate;
    if (delta == 0) continue;
    for (uint32_t k = 0; k < fl.count; ++k) {
      const Hop h = hops_[fl.offset + k];
      if (scr(h.resource).kind != 1) res_[h.resource].usage += delta * h.weight;
    }
  }
  // Expanded resources hold only set flows: their usage is summed afresh (no drift).
  for (uint32_t i = 0; i < compRes_.size(); ++i) {
    if (scr_[i].kind != 1) continue;
    double u = 0;
    for (const User& x : users_[compRes_[i]]) u += flows_[x.flow].next * hops_[x.slot].weight;
    res_[compRes_[i]].usage = u;
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
  b += flowStamp_.capacity() * sizeof(uint32_t) + frozen_.capacity() +
       nextBottleneck_.capacity() * sizeof(uint32_t) + scr_.capacity() * sizeof(Scratch);
  return b;
}

}  // namespace fabricsim
