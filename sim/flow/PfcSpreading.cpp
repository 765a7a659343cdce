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

void PfcSpreading::push(double share, uint32_t id) {
  heap_.push_back(HeapEntry{share, id});
  std::push_heap(heap_.begin(), heap_.end(), [](const HeapEntry& a, const HeapEntry& b) {
    return a.share != b.share ? a.share > b.share : a.id > b.id;
  });
}

void PfcSpreading::freeze(uint32_t f, double rate) {
  Flow& fl = flows_[f];
  fl.frozen = true;
  fl.rate = rate;
  const bool above = rate > level_ * (1 + 1e-12);
  for (uint32_t k = 0; k < fl.count; ++k) {
    const Hop h = hops_[fl.offset + k];
    Res& r = res_[h.local];
    if (r.done) continue;
    r.remaining -= rate * h.weight;
    r.weight -= h.weight;
    if (r.weight <= 1e-9) {
      r.done = true;  // every flow on it is frozen
    } else if (above) {
      push(std::max(0.0, r.remaining) / r.weight, h.local);  // its share shrank: re-sorted
    }
  }
}

uint32_t PfcSpreading::keyOf(uint32_t i, uint32_t depth) const {
  const User v = cand_[i];
  const Flow& fl = flows_[v.flow];
  // Past its NIC, or a split flow (whose ingress is no one port): a group of its own.
  if (!fl.ordered || depth > v.hop) return kCapBit | i;
  return hops_[fl.offset + v.hop - depth].local;
}

double PfcSpreading::demandOf(std::vector<uint32_t> idx, uint32_t depth) {
  const uint32_t key = keyOf(idx[0], depth);
  if (key & kCapBit) return caps_[idx[0]];  // a flow: its cap
  // A port upstream of the root: what its sub-groups can send, within what it has left.
  std::stable_sort(idx.begin(), idx.end(),
                   [&](uint32_t a, uint32_t b) { return keyOf(a, depth + 1) < keyOf(b, depth + 1); });
  double sum = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    const uint32_t sub = keyOf(idx[i], depth + 1);
    while (j < idx.size() && keyOf(idx[j], depth + 1) == sub) ++j;
    sum += demandOf(
        std::vector<uint32_t>(idx.begin() + static_cast<long>(i), idx.begin() + static_cast<long>(j)),
        depth + 1);
    i = j;
  }
  return std::min(sum, std::max(0.0, res_[key].remaining));
}

void PfcSpreading::allocate(std::vector<uint32_t> idx, uint32_t depth, double amount) {
  const uint32_t first = keyOf(idx[0], depth);
  if (idx.size() == 1 && (first & kCapBit)) {
    xs_[idx[0]] = std::min(caps_[idx[0]], amount);
    return;
  }
  std::stable_sort(idx.begin(), idx.end(),
                   [&](uint32_t a, uint32_t b) { return keyOf(a, depth) < keyOf(b, depth); });
  // Groups (runs of one key: an ingress port, or a flow past its NIC) and what each can take.
  struct Group {
    size_t begin, end;
    double demand;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    const uint32_t key = keyOf(idx[i], depth);
    while (j < idx.size() && keyOf(idx[j], depth) == key) ++j;
    groups.push_back(Group{i, j,
                           demandOf(std::vector<uint32_t>(idx.begin() + static_cast<long>(i),
                                                          idx.begin() + static_cast<long>(j)),
                                    depth)});
    i = j;
  }
  // Water fill: the ingress ports offering least are served first, the rest share equally.
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return groups[a].demand < groups[b].demand; });
  double left = amount;
  size_t n = groups.size();
  for (size_t g : order) {
    const double give = std::min(groups[g].demand, left / static_cast<double>(n--));
    left -= give;
    allocate(std::vector<uint32_t>(idx.begin() + static_cast<long>(groups[g].begin),
                                   idx.begin() + static_cast<long>(groups[g].end)),
             depth + 1, give);
  }
}

void PfcSpreading::rootEvent(uint32_t l, double share) {
  // A tie: a switch egress downstream of this one on a pausing flow's path that saturates at
  // the same share is where the queue builds (this one only feeds it): the root is the last.
  for (int moves = 0; moves < 64; ++moves) {
    uint32_t next = kNoKey;
    for (uint32_t u = userStart_[l]; u < userStart_[l + 1] && next == kNoKey; ++u) {
      const User v = users_[u];
      const Flow& g = flows_[v.flow];
      if (g.frozen || !g.pausing || !g.ordered || v.hop >= g.dataHops) continue;
      for (uint32_t k = g.dataHops - 1; k > v.hop; --k) {
        const uint32_t d = hops_[g.offset + k].local;
        const Res& x = res_[d];
        if (x.root && !x.done && x.weight > 0 &&
            std::max(0.0, x.remaining) / x.weight <= share * (1 + 1e-9)) {
          next = d;
          break;
        }
      }
    }
    if (next == kNoKey) break;
    l = next;
  }
  Res& r = res_[l];
  cand_.clear();
  // Flows that do not pause (lossy, other classes, ACK shares) take the max-min share.
  for (uint32_t u = userStart_[l]; u < userStart_[l + 1]; ++u) {
    const User v = users_[u];
    const Flow& g = flows_[v.flow];
    if (g.frozen) continue;
    if (g.pausing && v.hop < g.dataHops)
      cand_.push_back(v);
    else
      freeze(v.flow, share);
  }
  if (cand_.empty()) return;
  const double amount = std::max(0.0, r.remaining);
  // Each flow's cap: the fair share of its resources other than the switch ports between its
  // NIC and the root (those share per ingress: the tree below), and a cap from a paused port;
  // what it offers: the same over the resources that are not switch queues (its NIC's round
  // robin). A switch port upstream with the same share is congested by the same flows: it
  // pauses too.
  caps_.assign(cand_.size(), 0);
  offered_.assign(cand_.size(), 0);
  xs_.assign(cand_.size(), 0);
  for (size_t i = 0; i < cand_.size(); ++i) {
    const Flow& g = flows_[cand_[i].flow];
    double cap = g.cap, offered = g.cap;
    for (uint32_t k = 0; k < g.count; ++k) {
      const Hop h = hops_[g.offset + k];
      const Res& x = res_[h.local];
      if (h.local == l || x.done || x.weight <= 0) continue;
      const double fair = std::max(0.0, x.remaining) / x.weight;
      if (!g.ordered || k == 0 || k > cand_[i].hop) cap = std::min(cap, fair);
      if (!x.root) offered = std::min(offered, fair);
    }
    caps_[i] = std::max(cap, 0.0);
    offered_[i] = offered;
  }
  std::vector<uint32_t> all(cand_.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  allocate(std::move(all), 1, amount);
  work_.clear();
  for (size_t i = 0; i < cand_.size(); ++i) {
    freeze(cand_[i].flow, xs_[i]);
    // Held below what it offers: its ingress fills past XOFF.
    if (xs_[i] < offered_[i] * (1 - 1e-9)) work_.emplace_back(cand_[i].flow, cand_[i].hop);
  }
  spread(share);
}

void PfcSpreading::capVictim(uint32_t g, uint32_t hop, double cap, double level) {
  Flow& fl = flows_[g];
  if (fl.frozen) return;
  if (cap <= level * (1 + 1e-12)) {
    freeze(g, cap);
    ++victims_;
    next_.emplace_back(g, hop);
  } else if (cap < fl.cap) {
    fl.cap = cap;
    fl.capHop = hop;
    push(cap, kCapBit | g);
  }
}

void PfcSpreading::spread(double level) {
  while (!work_.empty()) {
    // The ports upstream of each held flow, with the ingress it arrives there on, and its rate.
    acc_.clear();
    for (const auto& [f, hop] : work_) {
      const Flow& fl = flows_[f];
      const uint32_t upstream = std::min(fl.ordered ? hop : std::min(hop, 1u), fl.dataHops);
      for (uint32_t k = 0; k < upstream; ++k)
        acc_.push_back(
            Acc{fl.tc, hops_[fl.offset + k].local, k > 0 ? hops_[fl.offset + k - 1].local : kNoKey, fl.rate});
    }
    std::sort(acc_.begin(), acc_.end(), [](const Acc& a, const Acc& b) {
      return a.tc != b.tc ? a.tc < b.tc : a.port != b.port ? a.port < b.port : a.key < b.key;
    });
    next_.clear();
    for (size_t i = 0; i < acc_.size();) {
      size_t j = i;
      const uint8_t tc = acc_[i].tc;
      const uint32_t q = acc_[i].port;
      while (j < acc_.size() && acc_[j].tc == tc && acc_[j].port == q) ++j;
      const uint8_t bit = static_cast<uint8_t>(1u << tc);
      Res& port = res_[q];
      if (port.pausedMask & bit) {
        i = j;
        continue;  // paused already: its victims are dealt with
      }
      // The most a held ingress passes here: at a NIC, a held QP's rate (round robin); at a
      // switch port, every flow of the class arriving on that ingress, the held ones at their
      // rates and the others (slowed with them upstream) at the held flows' mean.
      double most = 0;
      for (size_t a = i; a < j;) {
        size_t b = a;
        double sum = 0, top = 0;
        while (b < j && acc_[b].key == acc_[a].key) {
          sum += acc_[b].rate;
          top = std::max(top, acc_[b].rate);
          ++b;
        }
        if (acc_[a].key == kNoKey) {
          most = std::max(most, top);
        } else {
          const double mean = sum / static_cast<double>(b - a);
          double through = 0;
          for (uint32_t u = userStart_[q]; u < userStart_[q + 1]; ++u) {
            const User v = users_[u];
            const Flow& g = flows_[v.flow];
            if (!g.pausing || g.tc != tc || v.hop >= g.dataHops || v.hop == 0 || !g.ordered ||
                hops_[g.offset + v.hop - 1].local != acc_[a].key)
              continue;
            through += g.frozen ? g.rate : mean;
          }
          most = std::max(most, through);
        }
        a = b;
      }
      port.pausedMask |= bit;
      ++pausedPorts_;
      // Victims: unfrozen flows of the class crossing q.
      vic_.clear();
      for (uint32_t u = userStart_[q]; u < userStart_[q + 1]; ++u) {
        const User v = users_[u];
        const Flow& g = flows_[v.flow];
        if (g.frozen || !g.pausing || g.tc != tc || v.hop >= g.dataHops) continue;
        const uint32_t ingress = v.hop > 0 && g.ordered ? hops_[g.offset + v.hop - 1].local : kNoKey;
        if (!port.root || ingress == kNoKey) {  // a NIC: its round robin
          capVictim(v.flow, v.hop, most, level);
          continue;
        }
        // Arriving with held flows: judged upstream, where they part.
        const bool shared =
            std::any_of(acc_.begin() + static_cast<long>(i), acc_.begin() + static_cast<long>(j),
                        [&](const Acc& a) { return a.key == ingress; });
        if (!shared) vic_.push_back(Victim{ingress, v.flow, v.hop});
      }
      // Another ingress: a paused ingress's equal share, split among its flows.
      std::stable_sort(vic_.begin(), vic_.end(),
                       [](const Victim& a, const Victim& b) { return a.ingress < b.ingress; });
      for (size_t a = 0; a < vic_.size();) {
        size_t b = a;
        while (b < vic_.size() && vic_[b].ingress == vic_[a].ingress) ++b;
        for (size_t c = a; c < b; ++c)
          capVictim(vic_[c].flow, vic_[c].hop, most / static_cast<double>(b - a), level);
        a = b;
      }
      i = j;
    }
    work_.swap(next_);
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
    return a.share != b.share ? a.share > b.share : a.id > b.id;
  };
  heap_.clear();
  level_ = 0;
  for (uint32_t l = 0; l < res_.size(); ++l) {
    res_[l].remaining = std::max(0.0, res_[l].remaining);
    if (res_[l].weight > 0) heap_.push_back(HeapEntry{res_[l].remaining / res_[l].weight, l});
  }
  std::make_heap(heap_.begin(), heap_.end(), later);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const HeapEntry e = heap_.back();
    heap_.pop_back();
    if (e.id & kCapBit) {  // a victim reaches the cap of the paused port it queues at
      const uint32_t g = e.id & ~kCapBit;
      Flow& fl = flows_[g];
      if (fl.frozen || fl.cap != e.share) continue;  // frozen elsewhere, or capped lower since
      level_ = std::max(level_, e.share);
      freeze(g, e.share);
      ++victims_;
      work_.clear();
      work_.emplace_back(g, fl.capHop);
      spread(level_);
      continue;
    }
    Res& r = res_[e.id];
    if (r.done) continue;
    // Shares grow as flows elsewhere freeze below them (a stale key goes back), and shrink when
    // a flow freezes above the level (pushed again then: a key above the current one is stale).
    const double current = std::max(0.0, r.remaining) / r.weight;
    if (current > e.share * (1 + 1e-12)) {
      push(current, e.id);
      continue;
    }
    if (current < e.share * (1 - 1e-12)) continue;  // superseded by the entry pushed when it shrank
    level_ = std::max(level_, current);
    if (r.root) {
      rootEvent(e.id, current);
      // The root may have moved downstream (a tie): this port, if it still has flows, goes back.
      const Res& after = res_[e.id];
      if (!after.done && after.weight > 0) push(std::max(0.0, after.remaining) / after.weight, e.id);
      continue;
    }
    for (uint32_t u = userStart_[e.id]; u < userStart_[e.id + 1]; ++u)
      if (!flows_[users_[u].flow].frozen) freeze(users_[u].flow, current);
  }
  return pausedPorts_ > 0;
}

}  // namespace fabricsim
