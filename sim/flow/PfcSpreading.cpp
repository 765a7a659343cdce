#include "sim/flow/PfcSpreading.h"

#include <algorithm>

#include "sim/core/Error.h"

namespace fabricsim {

uint8_t PfcSpreading::pausingClasses(const TopologySpec& spec) {
  if (spec.congestionControl.algorithm != "none") return 0;
  if (spec.links.technology == "infiniband") return 0x7F;  // credits: every virtual lane is lossless
  return spec.sw.pfc.enabled ? static_cast<uint8_t>(spec.sw.pfc.classMask & 0x7F) : 0;
}

void PfcSpreading::clear(size_t resources) {
  flows_.clear();
  hops_.clear();
  res_.clear();
  if (localOf_.size() < resources) {
    localOf_.resize(resources, 0);
    stamp_.resize(resources, 0);
  }
  if (++epoch_ == 0) {  // stamps wrapped
    std::fill(stamp_.begin(), stamp_.end(), 0);
    epoch_ = 1;
  }
  pausedPorts_ = 0;
  victims_ = 0;
}

void PfcSpreading::addFlow(uint32_t id, std::span<const MaxMinSolver::Hop> hops, uint32_t dataHops,
                           uint8_t tc, bool pausing, bool ordered) {
  SIM_CHECK(!hops.empty() && dataHops <= hops.size(), "a flow needs its hops");
  if (slotOf_.size() <= id) slotOf_.resize(id + 1, 0);
  slotOf_[id] = static_cast<uint32_t>(flows_.size());
  Flow f;
  f.offset = static_cast<uint32_t>(hops_.size());
  f.count = static_cast<uint32_t>(hops.size());
  f.dataHops = dataHops;
  f.tc = tc;
  f.pausing = pausing;
  f.ordered = ordered;
  flows_.push_back(f);
  for (const MaxMinSolver::Hop& h : hops) {
    SIM_CHECK(h.resource < localOf_.size(), "resource beyond clear()'s count");
    if (stamp_[h.resource] != epoch_) {
      stamp_[h.resource] = epoch_;
      localOf_[h.resource] = static_cast<uint32_t>(res_.size());
      res_.push_back(Res{h.resource});
    }
    const uint32_t l = localOf_[h.resource];
    res_[l].weight += h.weight;
    hops_.push_back(Hop{l, h.weight});
  }
}

void PfcSpreading::freeze(uint32_t f, double share) {
  Flow& fl = flows_[f];
  fl.frozen = true;
  fl.rate = share;
  for (uint32_t k = 0; k < fl.count; ++k) {
    const Hop h = hops_[fl.offset + k];
    Res& r = res_[h.local];
    if (r.done) continue;
    r.remaining -= share * h.weight;
    r.weight -= h.weight;
    if (r.weight <= 1e-9) r.done = true;  // every flow on it is frozen
  }
}

void PfcSpreading::spread(uint32_t f0, uint32_t hop0, double share) {
  work_.clear();
  work_.emplace_back(f0, hop0);
  while (!work_.empty()) {
    const auto [f, hop] = work_.back();
    work_.pop_back();
    const Flow& fl = flows_[f];
    const uint8_t bit = static_cast<uint8_t>(1u << fl.tc);
    const uint32_t upstream = std::min(fl.ordered ? hop : std::min(hop, 1u), fl.dataHops);
    for (uint32_t k = 0; k < upstream; ++k) {
      Res& q = res_[hops_[fl.offset + k].local];
      if (q.pausedMask & bit) continue;  // paused already: its victims are frozen and spread
      q.pausedMask |= bit;
      ++pausedPorts_;
      // Every flow of the class still able to go faster queues behind the paused traffic.
      const uint32_t l = hops_[fl.offset + k].local;
      for (uint32_t u = userStart_[l]; u < userStart_[l + 1]; ++u) {
        const User v = users_[u];
        Flow& g = flows_[v.flow];
        if (g.frozen || !g.pausing || g.tc != fl.tc || v.hop >= g.dataHops) continue;
        freeze(v.flow, share);
        ++victims_;
        work_.emplace_back(v.flow, v.hop);
      }
    }
  }
}

bool PfcSpreading::fill() {
  // Users per resource (CSR), in flow order: deterministic.
  userStart_.assign(res_.size() + 1, 0);
  for (const Hop& h : hops_) ++userStart_[h.local + 1];
  for (size_t l = 0; l < res_.size(); ++l) userStart_[l + 1] += userStart_[l];
  users_.resize(hops_.size());
  cursor_.assign(userStart_.begin(), userStart_.end() - 1);
  for (uint32_t f = 0; f < flows_.size(); ++f)
    for (uint32_t k = 0; k < flows_[f].count; ++k)
      users_[cursor_[hops_[flows_[f].offset + k].local]++] = {f, k};

  auto later = [](const HeapEntry& a, const HeapEntry& b) {
    return a.share != b.share ? a.share > b.share : a.local > b.local;
  };
  heap_.clear();
  for (uint32_t l = 0; l < res_.size(); ++l) {
    res_[l].remaining = std::max(0.0, res_[l].remaining);
    if (res_[l].weight > 0) heap_.push_back(HeapEntry{res_[l].remaining / res_[l].weight, l});
  }
  std::make_heap(heap_.begin(), heap_.end(), later);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const HeapEntry e = heap_.back();
    heap_.pop_back();
    Res& r = res_[e.local];
    if (r.done) continue;
    // Shares only grow as flows elsewhere freeze below them: a stale key goes back.
    const double current = std::max(0.0, r.remaining) / r.weight;
    if (current > e.share * (1 + 1e-12)) {
      heap_.push_back(HeapEntry{current, e.local});
      std::push_heap(heap_.begin(), heap_.end(), later);
      continue;
    }
    // Its unfrozen flows are bottlenecked here.
    const uint32_t first = userStart_[e.local], last = userStart_[e.local + 1];
    const bool root = r.root;
    congested_.clear();
    for (uint32_t u = first; u < last; ++u) {
      const User v = users_[u];
      Flow& g = flows_[v.flow];
      if (g.frozen) continue;
      freeze(v.flow, current);
      if (root && g.pausing && v.hop < g.dataHops) congested_.push_back(v);
    }
    // A root of congestion: the ports feeding it pause, and the pause spreads upstream.
    for (const User& v : congested_) spread(v.flow, v.hop, current);
  }
  return pausedPorts_ > 0;
}

}  // namespace fabricsim
