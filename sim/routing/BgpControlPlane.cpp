#include "sim/routing/BgpControlPlane.h"

#include <algorithm>
#include <utility>

#include "sim/core/Error.h"

namespace fabricsim {

namespace {

Time detectionDelayOf(const BgpSpec& spec) {
  if (spec.detection == "los") return Time::zero();
  SIM_CHECK(spec.detection == "bfd", "unknown failure detection: " + spec.detection);
  SIM_CHECK(spec.bfdMultiplier >= 1, "bfd multiplier must be at least 1");
  return spec.bfdInterval * spec.bfdMultiplier;
}

}  // namespace

BgpControlPlane::BgpControlPlane(Simulator& sim, const Topology& topo, EcmpFib& fib, const BgpSpec& spec)
    : sim_(sim), topo_(topo), fib_(fib), spec_(spec), asns_(topo, spec.asnScheme), detection_(detectionDelayOf(spec)) {
  SIM_CHECK(spec_.updateDelay >= Time::zero(), "negative BGP update delay");
  SIM_CHECK(spec_.mrai >= Time::zero(), "negative MRAI");
  const size_t nodes = topo_.nodeCount();
  leafPos_.assign(nodes, kInvalid);
  for (uint32_t c = 0; c < fib_.components(); ++c) {
    const auto& leaves = fib_.leavesOf(c);
    for (uint32_t i = 0; i < leaves.size(); ++i) leafPos_[leaves[i]] = i;
  }
  rowBase_.assign(topo_.portCount(), kNoRow);
  locBase_.assign(nodes, kNoRow);
  size_t rows = 0, locRows = 0;
  for (NodeId sw = static_cast<NodeId>(topo_.hostCount()); sw < nodes; ++sw) {
    const size_t leaves = leafCountOf(sw);
    locBase_[sw] = locRows;
    locRows += leaves;
    for (uint32_t lp = 0; lp < topo_.degree(sw); ++lp) {
      const PortId p = topo_.port(sw, lp);
      const NodeId peer = topo_.peerNode(p);
      if (topo_.isHost(peer)) continue;
      SIM_CHECK(asns_.asnOf(sw) != asns_.asnOf(peer),
                "switches " + topo_.node(sw).name + " and " + topo_.node(peer).name +
                    " share an ASN and are linked: that would be iBGP, which this model leaves out");
      rowBase_[p] = rows;
      rows += leaves;
    }
  }
  ribIn_.resize(rows);
  ribOut_.resize(rows);
  locRib_.resize(locRows);

  alive_.assign(nodes, 0);
  for (NodeId sw = static_cast<NodeId>(topo_.hostCount()); sw < nodes; ++sw) alive_[sw] = 1;
  linkPhys_.assign(topo_.linkCount(), 1);
  linkCp_.assign(topo_.linkCount(), 1);
  sessionUp_.assign(topo_.linkCount(), 0);
  epoch_.assign(topo_.linkCount(), 0);
  inFlight_.resize(topo_.portCount());
  rxQueue_.resize(nodes);
  processAt_.assign(nodes, Time::max());
  mraiPending_.resize(topo_.portCount());
  mraiAt_.assign(topo_.portCount(), Time::max());
}

void BgpControlPlane::start() {
  SIM_CHECK(!started_, "BgpControlPlane::start called twice");
  started_ = true;
  for (LinkId l = 0; l < topo_.linkCount(); ++l) {
    const LinkInfo& li = topo_.link(l);
    if (!topo_.isHost(li.a) && !topo_.isHost(li.b)) establish(l);
  }
  for (uint32_t c = 0; c < fib_.components(); ++c) {
    const auto& leaves = fib_.leavesOf(c);
    for (uint32_t i = 0; i < leaves.size(); ++i) {
      LocRib& own = locRib(leaves[i], i);
      own.reachable = true;
      own.bestPort = kInvalid;
      own.path.clear();
      advertise(leaves[i], i);
    }
  }
}

// ---- failures ----

void BgpControlPlane::linkDown(LinkId l) {
  SIM_CHECK(started_ && l < topo_.linkCount(), "linkDown before start or on an unknown link");
  record(EventKind::LinkDown, l);
  linkPhys_[l] = 0;
  actions_.push_back(Action{EventKind::LinkDown, l});
  ++pendingWork_;
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

void BgpControlPlane::linkUp(LinkId l) {
  SIM_CHECK(started_ && l < topo_.linkCount(), "linkUp before start or on an unknown link");
  record(EventKind::LinkUp, l);
  linkPhys_[l] = 1;
  actions_.push_back(Action{EventKind::LinkUp, l});
  ++pendingWork_;
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

void BgpControlPlane::switchDown(NodeId s) {
  SIM_CHECK(started_ && s < topo_.nodeCount() && !topo_.isHost(s), "switchDown before start or not on a switch");
  record(EventKind::SwitchDown, s);
  killSwitch(s);
  actions_.push_back(Action{EventKind::SwitchDown, s});
  ++pendingWork_;
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

void BgpControlPlane::switchUp(NodeId s) {
  SIM_CHECK(started_ && s < topo_.nodeCount() && !topo_.isHost(s), "switchUp before start or not on a switch");
  record(EventKind::SwitchUp, s);
  actions_.push_back(Action{EventKind::SwitchUp, s});
  ++pendingWork_;
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

void BgpControlPlane::record(EventKind kind, uint32_t element) {
  closeOpenRecord();
  FailureStats f;
  f.kind = kind;
  f.element = element;
  f.failed = sim_.now();
  f.detected = sim_.now() + detection_;
  f.lastFibChange = sim_.now();
  f.before = groupSummary();
  failures_.push_back(f);
  recordOpen_ = true;
}

void BgpControlPlane::closeOpenRecord() {
  if (!recordOpen_) return;
  failures_.back().after = groupSummary();
  recordOpen_ = false;
}

BgpControlPlane::GroupSummary BgpControlPlane::groupSummary() const {
  GroupSummary s;
  bool first = true;
  for (NodeId sw = static_cast<NodeId>(topo_.hostCount()); sw < topo_.nodeCount(); ++sw) {
    if (!alive_[sw]) continue;
    for (const NodeId leaf : fib_.leavesOf(fib_.component(sw))) {
      if (leaf == sw || !alive_[leaf]) continue;
      const uint32_t size = static_cast<uint32_t>(fib_.routeToLeaf(sw, leaf).size());
      ++s.pairs;
      s.ports += size;
      s.emptyGroups += size == 0;
      s.minSize = first ? size : std::min(s.minSize, size);
      first = false;
    }
  }
  return s;
}

// ---- events ----

void BgpControlPlane::onEvent(uint32_t t) {
  const uint32_t index = t >> kTagBits;
  switch (static_cast<Tag>(t & ((1u << kTagBits) - 1))) {
    case kArrive:
      onArrive(index);
      break;
    case kProcess:
      onProcess(index);
      break;
    case kMrai:
      onMrai(index);
      break;
    case kDetect:
      onDetect(index);
      break;
    default:
      SIM_CHECK(false, "unknown BGP event tag");
  }
  if (recordOpen_ && pendingWork_ == 0) closeOpenRecord();
}

void BgpControlPlane::onArrive(PortId sendPort) {
  SIM_CHECK(!inFlight_[sendPort].empty(), "BGP arrival without a message in flight");
  Message m = std::move(inFlight_[sendPort].front());
  inFlight_[sendPort].pop_front();
  --pendingWork_;
  const LinkId l = topo_.portLink(sendPort);
  const PortId rx = topo_.peerPort(sendPort);
  const NodeId r = topo_.portNode(rx);
  if (!linkPhys_[l] || !alive_[r] || !sessionUp_[l] || m.epoch != epoch_[l]) return;  // lost
  rxQueue_[r].push_back(Received{rx, std::move(m)});
  ++pendingWork_;
  if (processAt_[r] == Time::max()) {
    processAt_[r] = sim_.now() + spec_.updateDelay;
    sim_.schedule(processAt_[r], this, tag(kProcess, r));
  }
}

void BgpControlPlane::onProcess(NodeId sw) {
  if (processAt_[sw] != sim_.now()) return;  // superseded (the switch failed meanwhile)
  processAt_[sw] = Time::max();
  auto& q = rxQueue_[sw];
  if (q.empty()) return;
  Received rc = std::move(q.front());
  q.pop_front();
  --pendingWork_;
  const LinkId l = topo_.portLink(rc.port);
  if (alive_[sw] && sessionUp_[l] && rc.msg.epoch == epoch_[l]) apply(sw, rc.port, rc.msg);
  if (!q.empty()) {
    processAt_[sw] = sim_.now() + spec_.updateDelay;
    sim_.schedule(processAt_[sw], this, tag(kProcess, sw));
  }
}

void BgpControlPlane::onMrai(PortId port) {
  if (mraiAt_[port] != sim_.now()) return;  // superseded by an earlier timer or a teardown
  mraiAt_[port] = Time::max();
  auto& pending = mraiPending_[port];
  std::vector<uint32_t> due;
  std::vector<uint32_t> later;
  Time next = Time::max();
  for (const uint32_t pos : pending) {
    RibOut& o = ribOut(port, pos);
    if (!o.pending) continue;  // withdrawn meanwhile, or a duplicate entry
    const Time at = o.lastAdv + spec_.mrai;
    if (at <= sim_.now()) {
      o.pending = false;
      --pendingWork_;
      due.push_back(pos);
    } else {
      later.push_back(pos);
      next = std::min(next, at);
    }
  }
  pending = std::move(later);
  for (const uint32_t pos : due) sendCurrent(port, pos);
  if (next != Time::max() && next < mraiAt_[port]) {
    mraiAt_[port] = next;
    sim_.schedule(next, this, tag(kMrai, port));
  }
}

void BgpControlPlane::onDetect(uint32_t index) {
  --pendingWork_;
  const Action a = actions_[index];
  switch (a.kind) {
    case EventKind::LinkDown:
      linkCp_[a.element] = 0;
      teardown(a.element);
      break;
    case EventKind::LinkUp: {
      linkCp_[a.element] = 1;
      const LinkInfo& li = topo_.link(a.element);
      if (linkPhys_[a.element] && !topo_.isHost(li.a) && !topo_.isHost(li.b) && alive_[li.a] && alive_[li.b] &&
          !sessionUp_[a.element])
        establish(a.element);
      break;
    }
    case EventKind::SwitchDown:
      for (uint32_t lp = 0; lp < topo_.degree(a.element); ++lp) teardown(topo_.portLink(topo_.port(a.element, lp)));
      break;
    case EventKind::SwitchUp:
      bootSwitch(a.element);
      break;
  }
}

// ---- protocol ----

void BgpControlPlane::apply(NodeId sw, PortId rxPort, const Message& m) {
  const uint32_t pos = leafPos_[m.leaf];
  SIM_CHECK(pos != kInvalid, "BGP message for a prefix that is not a leaf");
  if (m.leaf == sw) return;  // our own prefix coming back: its AS_PATH holds our ASN
  RibIn& e = ribIn(rxPort, pos);
  const Asn own = asns_.asnOf(sw);
  const bool loop = !m.withdraw && std::find(m.path.begin(), m.path.end(), own) != m.path.end();
  if (m.withdraw || loop) {
    if (!e.valid) return;
    e.valid = false;
    e.path.clear();
  } else {
    if (e.valid && e.path == m.path) return;
    e.valid = true;
    e.path = m.path;
  }
  select(sw, pos);
}

void BgpControlPlane::select(NodeId sw, uint32_t pos) {
  const NodeId leaf = fib_.leavesOf(fib_.component(sw))[pos];
  if (leaf == sw) return;
  size_t best = static_cast<size_t>(-1);
  scratch_.clear();
  for (uint32_t lp = 0; lp < topo_.degree(sw); ++lp) {
    const PortId p = topo_.port(sw, lp);
    if (!isSessionPort(p) || !sessionUp_[topo_.portLink(p)]) continue;
    const RibIn& e = ribIn(p, pos);
    if (!e.valid) continue;
    if (e.path.size() < best) {
      best = e.path.size();
      scratch_.clear();
    }
    if (e.path.size() == best) scratch_.push_back(p);
  }
  const std::vector<PortId> group = scratch_;  // ascending: ports of a node are numbered in order
  setFib(sw, leaf, group);
  LocRib& L = locRib(sw, pos);
  const bool reachable = !group.empty();
  bool changed = reachable != L.reachable;
  if (reachable) {
    PortId bestPort = group.front();
    if (L.reachable && std::find(group.begin(), group.end(), L.bestPort) != group.end()) bestPort = L.bestPort;
    const Path& path = ribIn(bestPort, pos).path;
    changed = changed || path != L.path;
    L.bestPort = bestPort;
    L.path = path;
  } else {
    L.bestPort = kInvalid;
    L.path.clear();
  }
  L.reachable = reachable;
  if (changed) advertise(sw, pos);
}

void BgpControlPlane::advertise(NodeId sw, uint32_t pos) {
  for (uint32_t lp = 0; lp < topo_.degree(sw); ++lp) {
    const PortId p = topo_.port(sw, lp);
    if (isSessionPort(p) && sessionUp_[topo_.portLink(p)]) sendCurrent(p, pos);
  }
}

void BgpControlPlane::sendCurrent(PortId port, uint32_t pos) {
  const NodeId sw = topo_.portNode(port);
  const LocRib& L = locRib(sw, pos);
  RibOut& o = ribOut(port, pos);
  const NodeId leaf = fib_.leavesOf(fib_.component(sw))[pos];
  if (!L.reachable) {
    if (o.pending) {
      o.pending = false;
      --pendingWork_;
    }
    if (o.advertised) {
      send(port, leaf, true, Path{});
      o.advertised = false;
      o.lastSent.clear();
    }
    return;
  }
  if (o.pending) return;  // coalesced into the advertisement MRAI holds
  if (spec_.mrai > Time::zero() && o.hasLastAdv && sim_.now() < o.lastAdv + spec_.mrai) {
    o.pending = true;
    ++pendingWork_;
    mraiPending_[port].push_back(pos);
    const Time due = o.lastAdv + spec_.mrai;
    if (due < mraiAt_[port]) {
      mraiAt_[port] = due;
      sim_.schedule(due, this, tag(kMrai, port));
    }
    return;
  }
  Path path;
  path.reserve(L.path.size() + 1);
  path.push_back(asns_.asnOf(sw));
  path.insert(path.end(), L.path.begin(), L.path.end());
  if (o.advertised && o.lastSent == path) return;
  o.advertised = true;
  o.hasLastAdv = true;
  o.lastAdv = sim_.now();
  o.lastSent = path;
  send(port, leaf, false, std::move(path));
}

void BgpControlPlane::send(PortId port, NodeId leaf, bool withdraw, Path path) {
  if (withdraw) {
    ++withdrawalsSent_;
    if (!failures_.empty()) ++failures_.back().withdrawalsSent;
  } else {
    ++updatesSent_;
    if (!failures_.empty()) ++failures_.back().updatesSent;
  }
  const LinkId l = topo_.portLink(port);
  if (!linkPhys_[l]) return;  // sent into a dead link: lost
  inFlight_[port].push_back(Message{leaf, epoch_[l], withdraw, std::move(path)});
  ++pendingWork_;
  sim_.scheduleIn(topo_.link(l).latency, this, tag(kArrive, port));
}

void BgpControlPlane::establish(LinkId l) {
  const LinkInfo& li = topo_.link(l);
  sessionUp_[l] = 1;
  ++epoch_[l];
  for (const PortId p : {topo_.port(li.a, li.aPort), topo_.port(li.b, li.bPort)}) {
    const NodeId sw = topo_.portNode(p);
    const size_t leaves = leafCountOf(sw);
    for (uint32_t pos = 0; pos < leaves; ++pos)
      if (locRib(sw, pos).reachable) sendCurrent(p, pos);
  }
}

void BgpControlPlane::teardown(LinkId l) {
  if (!sessionUp_[l]) return;
  sessionUp_[l] = 0;
  ++epoch_[l];
  const LinkInfo& li = topo_.link(l);
  for (const PortId p : {topo_.port(li.a, li.aPort), topo_.port(li.b, li.bPort)}) {
    const NodeId sw = topo_.portNode(p);
    if (!alive_[sw]) continue;
    std::vector<uint32_t> lost;
    const size_t leaves = leafCountOf(sw);
    for (uint32_t pos = 0; pos < leaves; ++pos)
      if (ribIn(p, pos).valid) lost.push_back(pos);
    clearSide(p);
    for (const uint32_t pos : lost) select(sw, pos);
  }
}

void BgpControlPlane::clearSide(PortId p) {
  const size_t leaves = leafCountOf(topo_.portNode(p));
  for (uint32_t pos = 0; pos < leaves; ++pos) {
    RibOut& o = ribOut(p, pos);
    if (o.pending) --pendingWork_;
    o = RibOut{};
    ribIn(p, pos) = RibIn{};
  }
  mraiPending_[p].clear();
  mraiAt_[p] = Time::max();
}

void BgpControlPlane::killSwitch(NodeId s) {
  if (!alive_[s]) return;
  alive_[s] = 0;
  pendingWork_ -= rxQueue_[s].size();
  rxQueue_[s].clear();
  processAt_[s] = Time::max();
  for (uint32_t lp = 0; lp < topo_.degree(s); ++lp) {
    const PortId p = topo_.port(s, lp);
    if (isSessionPort(p)) clearSide(p);
  }
  const auto& leaves = fib_.leavesOf(fib_.component(s));
  for (uint32_t pos = 0; pos < leaves.size(); ++pos) {
    locRib(s, pos) = LocRib{};
    if (leaves[pos] != s) setFib(s, leaves[pos], {});
  }
}

void BgpControlPlane::bootSwitch(NodeId s) {
  if (alive_[s]) return;
  alive_[s] = 1;
  const uint32_t pos = leafPos_[s];
  if (pos != kInvalid) {
    LocRib& own = locRib(s, pos);
    own.reachable = true;
    own.bestPort = kInvalid;
    own.path.clear();
  }
  for (uint32_t lp = 0; lp < topo_.degree(s); ++lp) {
    const PortId p = topo_.port(s, lp);
    if (!isSessionPort(p)) continue;
    const LinkId l = topo_.portLink(p);
    if (linkPhys_[l] && linkCp_[l] && alive_[topo_.peerNode(p)] && !sessionUp_[l]) establish(l);
  }
}

void BgpControlPlane::setFib(NodeId sw, NodeId leaf, const std::vector<PortId>& ports) {
  const auto cur = fib_.routeToLeaf(sw, leaf);
  std::vector<PortId> have(cur.begin(), cur.end());
  std::sort(have.begin(), have.end());
  if (have == ports) return;
  fib_.setRoute(sw, leaf, ports);
  ++fibChanges_;
  lastChange_ = sim_.now();
  if (!failures_.empty()) {
    failures_.back().lastFibChange = sim_.now();
    failures_.back().fibChanged = true;
  }
}

}  // namespace fabricsim
