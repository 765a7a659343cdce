#include "sim/routing/EcmpFib.h"

#include <algorithm>
#include <limits>
#include <map>

#include "sim/core/Error.h"
#include "sim/routing/EcmpSlots.h"

namespace fabricsim {

namespace {
constexpr uint64_t kInfinite = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kMaxWeightedSlots = 512;  // slot table of a weighted (non-resilient) group
/// True when a group's slot table is its member list (a plain group); the same span is the common case.
bool sameSlots(std::span<const PortId> members, std::span<const PortId> slots) {
  if (members.data() == slots.data()) return members.size() == slots.size();
  return std::equal(members.begin(), members.end(), slots.begin(), slots.end());
}
}  // namespace

EcmpFib::Options EcmpFib::optionsFor(const RoutingSpec& routing) {
  Options o;
  o.hashFields = 0;
  for (const std::string& f : routing.hashFields) {
    const uint8_t bit = FlowHash::fieldBit(f);
    SIM_CHECK(bit != 0, "routing.hash_fields: unknown header field " + f);
    o.hashFields |= bit;
  }
  SIM_CHECK(o.hashFields != 0, "routing.hash_fields names no header field");
  o.equalSeeds = routing.seeds == "equal";
  o.resilientBuckets = static_cast<uint32_t>(routing.resilientBuckets);
  o.wcmp = routing.wcmp;
  return o;
}

EcmpFib::EcmpFib(const Topology& topo, uint64_t hashSeed) : EcmpFib(topo, hashSeed, Options{}) {}

EcmpFib::EcmpFib(const Topology& topo, uint64_t hashSeed, const Options& options)
    : topo_(topo), options_(options) {
  SIM_CHECK(options.resilientBuckets == 0 || options.resilientBuckets >= 2,
            "resilient hashing needs 2 buckets or more");
  const size_t n = topo.nodeCount();
  seeds_.resize(n);
  // Equal seeds: every switch computes the same function of the tuple (hash polarisation).
  for (NodeId v = 0; v < n; ++v) seeds_[v] = FlowHash::switchSeed(hashSeed, options.equalSeeds ? 0 : v);

  // Connected components of the switch-only graph (hosts never transit).
  component_.assign(n, kInvalid);
  std::vector<std::vector<NodeId>> compSwitches;
  std::vector<NodeId> stack;
  for (NodeId s = static_cast<NodeId>(topo.hostCount()); s < n; ++s) {
    if (component_[s] != kInvalid) continue;
    const uint32_t c = static_cast<uint32_t>(compSwitches.size());
    compSwitches.emplace_back();
    component_[s] = c;
    stack.push_back(s);
    while (!stack.empty()) {
      const NodeId v = stack.back();
      stack.pop_back();
      compSwitches[c].push_back(v);
      for (uint32_t p = 0; p < topo.degree(v); ++p) {
        const NodeId w = topo.peerNode(topo.port(v, p));
        if (topo.isHost(w) || component_[w] != kInvalid) continue;
        component_[w] = c;
        stack.push_back(w);
      }
    }
    std::sort(compSwitches[c].begin(), compSwitches[c].end());
  }

  // Leaves: switches with at least one host attached, indexed per component.
  leafIndex_.assign(n, kInvalid);
  auto& leafIndex = leafIndex_;
  compLeaves_.assign(compSwitches.size(), {});
  auto& compLeaves = compLeaves_;
  for (uint32_t c = 0; c < compSwitches.size(); ++c)
    for (NodeId s : compSwitches[c]) {
      bool hasHost = false;
      for (uint32_t p = 0; p < topo.degree(s) && !hasHost; ++p)
        hasHost = topo.isHost(topo.peerNode(topo.port(s, p)));
      if (hasHost) {
        leafIndex[s] = static_cast<uint32_t>(compLeaves[c].size());
        compLeaves[c].push_back(s);
      }
    }

  nicRoute_.resize(topo.nicCount());
  for (uint32_t nic = 0; nic < topo.nicCount(); ++nic) {
    const PortId np = topo.nicPort(nic);
    const NodeId leaf = topo.peerNode(np);
    SIM_CHECK(!topo.isHost(leaf), "a NIC must be cabled to a switch");
    nicRoute_[nic] = NicRoute{leaf, leafIndex[leaf], topo.peerPort(np)};
  }

  switchRow_.assign(n, 0);
  size_t rows = 0;
  for (uint32_t c = 0; c < compSwitches.size(); ++c)
    for (NodeId s : compSwitches[c]) {
      switchRow_[s] = rows;
      rows += compLeaves[c].size();
    }
  table_.assign(rows, kInvalid);
  // Weights or buckets: the forwarding groups are derived from installed ones from the start.
  const bool derive = options.wcmp || options.resilientBuckets > 0;
  if (derive) installed_.assign(rows, kInvalid);
  if (options.wcmp) cap_.assign(rows, 0);
  std::map<std::pair<uint32_t, std::vector<uint64_t>>, uint32_t> memo;
  if (derive) buildMemo_ = &memo;

  std::vector<uint32_t> dist(n, kInvalid);
  std::vector<NodeId> frontier, next, order;
  std::vector<PortId> members;
  for (uint32_t c = 0; c < compSwitches.size(); ++c) {
    for (const NodeId leaf : compLeaves[c]) {
      // BFS from the leaf over switch links; `order` lists switches by distance.
      for (NodeId s : compSwitches[c]) dist[s] = kInvalid;
      dist[leaf] = 0;
      frontier.assign(1, leaf);
      order.clear();
      while (!frontier.empty()) {
        next.clear();
        for (NodeId v : frontier)
          for (uint32_t p = 0; p < topo.degree(v); ++p) {
            const NodeId w = topo.peerNode(topo.port(v, p));
            if (topo.isHost(w) || dist[w] != kInvalid) continue;
            dist[w] = dist[v] + 1;
            next.push_back(w);
            order.push_back(w);
          }
        frontier.swap(next);
      }
      const uint32_t li = leafIndex[leaf];
      for (NodeId s : compSwitches[c]) {
        if (s == leaf) continue;
        members.clear();
        for (uint32_t p = 0; p < topo.degree(s); ++p) {
          const PortId gp = topo.port(s, p);
          const NodeId w = topo.peerNode(gp);
          if (topo.isHost(w) || dist[w] + 1 != dist[s]) continue;
          members.push_back(gp);
        }
        SIM_CHECK(!members.empty(), "switch without a next hop toward a reachable leaf");
        const uint32_t gid = intern(s, members, members);
        (derive ? installed_ : table_)[switchRow_[s] + li] = gid;
      }
      if (derive) {
        bool capChanged = false;
        for (NodeId s : order) refresh(s, li, capChanged);  // nearest first: peers' capacities are known
      }
    }
  }
  buildMemo_ = nullptr;
  // The intern index is only needed when a control plane changes routes: free it now and
  // rebuild it on the first setRoute, so static tables stay small.
  interned_.clear();
  interned_.shrink_to_fit();
  groups_.shrink_to_fit();
  groupPorts_.shrink_to_fit();
}

void EcmpFib::rebuildIntern() {
  size_t size = 1024;  // the index holds at most every group once
  while (size < 2 * groups_.size() + 2) size *= 2;
  interned_.assign(size, InternSlot{0, kInvalid, kInvalid});
  internedCount_ = 0;
  // Rows in switch order, forwarding before installed: the first group of given contents wins.
  for (NodeId s = static_cast<NodeId>(topo_.hostCount()); s < topo_.nodeCount(); ++s) {
    const size_t leaves = compLeaves_[component_[s]].size();
    for (size_t i = 0; i < leaves; ++i)
      for (const auto* t : {&table_, &installed_}) {
        if (t->empty()) continue;
        const uint32_t gid = (*t)[switchRow_[s] + i];
        if (gid == kInvalid) continue;
        const Group& g = groups_[gid];
        internInsert(s,
                     internKey(s, {groupPorts_.data() + g.offset, g.size},
                               {groupPorts_.data() + g.slotOffset, g.slots}),
                     gid);
      }
  }
}

uint64_t EcmpFib::internKey(NodeId sw, std::span<const PortId> members, std::span<const PortId> slots) {
  // One multiply per two ports (a short dependency chain: this runs on every route change),
  // then a full mix. Equal keys are only candidates: contents are compared.
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  uint64_t h = FlowHash::mix((static_cast<uint64_t>(sw) << 32) ^ members.size());
  const auto absorb = [&h](std::span<const PortId> v) {
    size_t i = 0;
    for (; i + 1 < v.size(); i += 2) {
      h = (h ^ ((static_cast<uint64_t>(v[i]) << 32) | v[i + 1])) * kMul;
      h ^= h >> 29;
    }
    if (i < v.size()) {
      h = (h ^ v[i]) * kMul;
      h ^= h >> 29;
    }
  };
  absorb(members);
  if (!sameSlots(members, slots)) {
    h = (h ^ 0xA5A5A5A5ULL ^ (static_cast<uint64_t>(slots.size()) << 40)) * kMul;
    absorb(slots);
  }
  return FlowHash::mix(h);
}

uint32_t EcmpFib::internInsert(NodeId sw, uint64_t key, uint32_t gid) {
  const Group& g = groups_[gid];
  const std::span<const PortId> members{groupPorts_.data() + g.offset, g.size};
  const std::span<const PortId> slots{groupPorts_.data() + g.slotOffset, g.slots};
  const size_t mask = interned_.size() - 1;
  size_t i = key & mask;
  for (; interned_[i].gid != kInvalid; i = (i + 1) & mask) {
    const InternSlot& e = interned_[i];
    if (e.key != key || e.sw != sw) continue;
    const Group& h = groups_[e.gid];
    const auto hm = groupPorts_.begin() + h.offset;
    const auto hs = groupPorts_.begin() + h.slotOffset;
    if (std::equal(members.begin(), members.end(), hm, hm + h.size) &&
        std::equal(slots.begin(), slots.end(), hs, hs + h.slots))
      return e.gid;
  }
  interned_[i] = InternSlot{key, sw, gid};
  if (++internedCount_ * 2 > interned_.size()) {
    std::vector<InternSlot> old(interned_.size() * 2, InternSlot{0, kInvalid, kInvalid});
    old.swap(interned_);
    const size_t m = interned_.size() - 1;
    for (const InternSlot& e : old) {
      if (e.gid == kInvalid) continue;
      size_t j = e.key & m;
      while (interned_[j].gid != kInvalid) j = (j + 1) & m;
      interned_[j] = e;
    }
  }
  return gid;
}

uint32_t EcmpFib::intern(NodeId sw, std::span<const PortId> members, std::span<const PortId> slots) {
  if (interned_.empty()) rebuildIntern();
  const uint64_t key = internKey(sw, members, slots);
  const size_t mask = interned_.size() - 1;
  for (size_t i = key & mask; interned_[i].gid != kInvalid; i = (i + 1) & mask) {
    const InternSlot& e = interned_[i];
    if (e.key != key || e.sw != sw) continue;
    const Group& g = groups_[e.gid];
    const auto gm = groupPorts_.begin() + g.offset;
    const auto gs = groupPorts_.begin() + g.slotOffset;
    if (std::equal(members.begin(), members.end(), gm, gm + g.size) &&
        std::equal(slots.begin(), slots.end(), gs, gs + g.slots))
      return e.gid;
  }
  const uint32_t gid = static_cast<uint32_t>(groups_.size());
  const auto offset = static_cast<uint32_t>(groupPorts_.size());
  groupPorts_.insert(groupPorts_.end(), members.begin(), members.end());
  uint32_t slotOffset = offset;
  if (!sameSlots(members, slots)) {
    slotOffset = static_cast<uint32_t>(groupPorts_.size());
    groupPorts_.insert(groupPorts_.end(), slots.begin(), slots.end());
  }
  groups_.push_back(Group{offset, static_cast<uint32_t>(members.size()), slotOffset,
                          static_cast<uint32_t>(slots.size()), kInvalid, kInvalid});
  internInsert(sw, key, gid);
  return gid;
}

void EcmpFib::ensureInstalled() {
  if (installed_.empty()) installed_ = table_;  // until now every forwarding group was the installed one
}

uint64_t EcmpFib::capOf(NodeId node, uint32_t li, NodeId leaf) const {
  if (node == leaf) return kInfinite;
  return cap_[switchRow_[node] + li];
}

bool EcmpFib::refresh(NodeId sw, uint32_t li, bool& capChanged) {
  capChanged = false;
  const size_t row = switchRow_[sw] + li;
  const NodeId leaf = compLeaves_[component_[sw]][li];
  members_.clear();
  for (PortId p : members(installed_[row]))
    if (localPortUp(p)) members_.push_back(p);
  weights_.clear();
  bool equalWeights = true;
  if (options_.wcmp) {
    uint64_t cap = 0;
    bool positive = false;
    for (PortId p : members_) {
      const uint64_t w = std::min(static_cast<uint64_t>(topo_.portRate(p).bitsPerSecond()),
                                  capOf(topo_.peerNode(p), li, leaf));
      weights_.push_back(w);
      cap += w;
      positive = positive || w > 0;
    }
    if (positive) {  // members without capacity leave the group while another has some
      size_t k = 0;
      for (size_t i = 0; i < members_.size(); ++i)
        if (weights_[i] > 0) {
          members_[k] = members_[i];
          weights_[k++] = weights_[i];
        }
      members_.resize(k);
      weights_.resize(k);
    }
    for (uint64_t w : weights_) equalWeights = equalWeights && w == weights_[0];
    capChanged = cap != cap_[row];
    cap_[row] = cap;
  }
  std::pair<uint32_t, std::vector<uint64_t>> memoKey;
  if (buildMemo_) {  // while building: the result depends only on the installed group and the weights
    memoKey = {installed_[row], weights_};
    if (const auto it = buildMemo_->find(memoKey); it != buildMemo_->end()) {
      const bool changed = table_[row] != it->second;
      table_[row] = it->second;
      return changed;
    }
  }
  const uint32_t B = options_.resilientBuckets;
  if (B > 0 && members_.size() >= 2) {
    SIM_CHECK(members_.size() <= B,
              "routing.resilient_hashing: a group of " + std::to_string(members_.size()) + " members at " +
                  topo_.node(sw).name + " needs more than " + std::to_string(B) + " buckets");
    // The buckets as they are now (a group of one member, or none, holds all or none of them).
    old_.assign(B, kInvalid);
    if (table_[row] != kInvalid) {
      const Group& cur = groups_[table_[row]];
      if (cur.slots > 0)
        for (uint32_t b = 0; b < B; ++b) old_[b] = groupPorts_[cur.slotOffset + b % cur.slots];
    }
    held_.assign(members_.size(), 0);
    for (PortId p : old_) {
      const auto it = std::lower_bound(members_.begin(), members_.end(), p);
      if (it != members_.end() && *it == p) ++held_[it - members_.begin()];
    }
    if (equalWeights) weights_.assign(members_.size(), 1);
    EcmpSlots::apportion(weights_, B, held_, counts_);
    EcmpSlots::rebalance(old_, members_, counts_, slots_);
  } else if (!equalWeights) {
    EcmpSlots::reduce(weights_, kMaxWeightedSlots, counts_);
    slots_.clear();
    for (size_t i = 0; i < members_.size(); ++i) slots_.insert(slots_.end(), counts_[i], members_[i]);
  } else {
    slots_ = members_;
  }
  const uint32_t gid = intern(sw, members_, slots_);
  if (buildMemo_) buildMemo_->emplace(std::move(memoKey), gid);
  const bool changed = table_[row] != gid;
  table_[row] = gid;
  return changed;
}

void EcmpFib::propagate(NodeId sw, uint32_t li, std::vector<NodeId>& changed) {
  const NodeId leaf = compLeaves_[component_[sw]][li];
  std::vector<NodeId> work;
  const auto pushUpstream = [&](NodeId v) {
    for (uint32_t lp = 0; lp < topo_.degree(v); ++lp) {
      const PortId q = topo_.port(v, lp);
      const NodeId u = topo_.peerNode(q);
      if (topo_.isHost(u) || u == leaf) continue;
      const PortId back = topo_.peerPort(q);  // u's port toward v
      const auto inst = members(installed_[switchRow_[u] + li]);
      if (localPortUp(back) && std::binary_search(inst.begin(), inst.end(), back)) work.push_back(u);
    }
  };
  pushUpstream(sw);
  // On loop-free tables each switch settles after its downstream ones; the bound only stops a
  // transient forwarding loop (control-plane churn) from iterating capacities for long.
  const size_t limit = 8 * topo_.switchCount() + 64;
  for (size_t head = 0; head < work.size() && head < limit; ++head) {
    const NodeId u = work[head];
    bool capChanged = false;
    if (refresh(u, li, capChanged)) changed.push_back(u);
    if (capChanged) pushUpstream(u);
  }
}

void EcmpFib::notify(std::vector<NodeId>& changed) {
  if (changed.empty() || listeners_.empty()) return;
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  for (NodeId sw : changed)
    for (const auto& f : listeners_) f(sw);
}

void EcmpFib::setRoute(NodeId sw, NodeId leaf, std::span<const PortId> ports) {
  SIM_CHECK(!topo_.isHost(sw) && leafIndex_[leaf] != kInvalid && component_[sw] == component_[leaf],
            "setRoute: not a switch and a leaf of the same plane");
  for (PortId p : ports) SIM_CHECK(topo_.portNode(p) == sw, "setRoute: port of another switch");
  // A copy (ports may alias this FIB's own storage, which intern may grow), sorted.
  route_.assign(ports.begin(), ports.end());
  if (!std::is_sorted(route_.begin(), route_.end())) std::sort(route_.begin(), route_.end());
  const size_t row = switchRow_[sw] + leafIndex_[leaf];
  const uint32_t gid = internRoute(sw, (derived() ? installed_ : table_)[row]);
  if (!derived()) {
    if (table_[row] == gid) return;
    table_[row] = gid;
    for (const auto& f : listeners_) f(sw);
    return;
  }
  if (installed_[row] == gid) return;
  installed_[row] = gid;
  std::vector<NodeId> changed;
  bool capChanged = false;
  if (refresh(sw, leafIndex_[leaf], capChanged)) changed.push_back(sw);
  if (capChanged) propagate(sw, leafIndex_[leaf], changed);
  notify(changed);
}

uint32_t EcmpFib::internRoute(NodeId sw, uint32_t cur) {
  // A control plane mostly grows a group by one member at a time (multipath routes arriving
  // one by one). The group that growth leads to is remembered on the group it grew from (a line
  // setRoute has just read), which saves the index lookup, a cache miss on a large FIB.
  PortId added = kInvalid;
  if (cur != kInvalid && route_.size() == static_cast<size_t>(groups_[cur].size) + 1) {
    const auto m = members(cur);
    const auto at = std::mismatch(m.begin(), m.end(), route_.begin()).second;
    if (std::equal(at + 1, route_.end(), at - route_.begin() + m.begin(), m.end())) added = *at;
    if (added != kInvalid && groups_[cur].grownPort == added) return groups_[cur].grownGid;
  }
  const uint32_t gid = intern(sw, route_, route_);
  if (added != kInvalid) {  // after intern, which may have grown groups_
    groups_[cur].grownPort = added;
    groups_[cur].grownGid = gid;
  }
  return gid;
}

void EcmpFib::setLocalPortUp(PortId p, bool up) {
  SIM_CHECK(p < topo_.portCount() && !topo_.isHost(topo_.portNode(p)), "setLocalPortUp: not a switch port");
  if (localPortUp(p) == up) return;
  if (portDown_.empty()) portDown_.assign(topo_.portCount(), 0);
  ensureInstalled();
  portDown_[p] = up ? 0 : 1;
  const NodeId sw = topo_.portNode(p);
  const auto& leaves = compLeaves_[component_[sw]];
  std::vector<NodeId> changed;
  bool mine = false;
  for (uint32_t li = 0; li < leaves.size(); ++li) {
    if (leaves[li] == sw) continue;
    const auto inst = members(installed_[switchRow_[sw] + li]);
    if (!std::binary_search(inst.begin(), inst.end(), p)) continue;
    bool capChanged = false;
    mine = refresh(sw, li, capChanged) || mine;
    if (capChanged) propagate(sw, li, changed);
  }
  if (mine) changed.push_back(sw);
  notify(changed);
}

std::span<const PortId> EcmpFib::routeToLeaf(NodeId sw, NodeId leaf) const {
  if (sw == leaf) return {};
  return members((derived() ? installed_ : table_)[switchRow_[sw] + leafIndex_[leaf]]);
}

std::span<const PortId> EcmpFib::groupToLeaf(NodeId sw, NodeId leaf) const {
  if (sw == leaf) return {};
  return members(table_[switchRow_[sw] + leafIndex_[leaf]]);
}

std::span<const PortId> EcmpFib::slotsToLeaf(NodeId sw, NodeId leaf) const {
  if (sw == leaf) return {};
  const Group& g = groups_[table_[switchRow_[sw] + leafIndex_[leaf]]];
  return {groupPorts_.data() + g.slotOffset, g.slots};
}

std::span<const PortId> EcmpFib::group(NodeId sw, uint32_t dstNic) const {
  const NicRoute& d = nicRoute_[dstNic];
  if (sw == d.leaf) return {};
  return members(table_[switchRow_[sw] + d.leafIndex]);
}

uint64_t EcmpFib::capacityToLeaf(NodeId sw, NodeId leaf) const {
  if (!options_.wcmp) return 0;
  return capOf(sw, leafIndex_[leaf], leaf);
}

size_t EcmpFib::memoryBytes() const {
  return component_.capacity() * sizeof(uint32_t) + switchRow_.capacity() * sizeof(size_t) +
         table_.capacity() * sizeof(uint32_t) + installed_.capacity() * sizeof(uint32_t) +
         cap_.capacity() * sizeof(uint64_t) + portDown_.capacity() + groups_.capacity() * sizeof(Group) +
         groupPorts_.capacity() * sizeof(PortId) + nicRoute_.capacity() * sizeof(NicRoute) +
         seeds_.capacity() * sizeof(uint64_t) + leafIndex_.capacity() * sizeof(uint32_t) + internedBytes();
}

size_t EcmpFib::internedBytes() const {
  return interned_.capacity() * sizeof(InternSlot);
}

}  // namespace fabricsim
