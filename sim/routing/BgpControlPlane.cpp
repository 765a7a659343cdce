#include "sim/routing/BgpControlPlane.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "sim/core/Error.h"

namespace fabricsim {

namespace {

constexpr Time kNever = Time::ps(std::numeric_limits<int64_t>::min());

Time detectionDelayOf(const BgpSpec& spec) {
  if (spec.detection == "los") return Time::zero();
  SIM_CHECK(spec.detection == "bfd", "unknown failure detection: " + spec.detection);
  SIM_CHECK(spec.bfdMultiplier >= 1, "bfd multiplier must be at least 1");
  return spec.bfdInterval * spec.bfdMultiplier;
}

}  // namespace

BgpControlPlane::BgpControlPlane(Simulator& sim, const Topology& topo, EcmpFib& fib, const BgpSpec& spec)
    : sim_(sim),
      topo_(topo),
      fib_(fib),
      spec_(spec),
      asns_(topo, spec.asnScheme),
      detection_(detectionDelayOf(spec)) {
  SIM_CHECK(spec_.updateDelay >= Time::zero(), "negative BGP update delay");
  SIM_CHECK(spec_.mrai >= Time::zero(), "negative MRAI");
  mrai_ = spec_.mrai > Time::zero();
  const size_t nodes = topo_.nodeCount();
  leafPos_.assign(nodes, kInvalid);
  for (uint32_t c = 0; c < fib_.components(); ++c) {
    const auto& leaves = fib_.leavesOf(c);
    for (uint32_t i = 0; i < leaves.size(); ++i) leafPos_[leaves[i]] = i;
  }
  sessOf_.assign(topo_.portCount(), kInvalid);
  sessBase_.assign(nodes + 1, 0);
  ribBase_.assign(nodes, 0);
  locBase_.assign(nodes, 0);
  std::vector<Time> slotLatency;
  size_t rows = 0, locRows = 0;
  for (NodeId n = 0; n < nodes; ++n) {
    sessBase_[n] = sessPort_.size();
    if (topo_.isHost(n)) continue;
    for (uint32_t lp = 0; lp < topo_.degree(n); ++lp) {
      const PortId p = topo_.port(n, lp);
      const NodeId peer = topo_.peerNode(p);
      if (topo_.isHost(peer)) continue;
      SIM_CHECK(asns_.asnOf(n) != asns_.asnOf(peer),
                "switches " + topo_.node(n).name + " and " + topo_.node(peer).name +
                    " share an ASN and are linked: that would be iBGP, which this model leaves out");
      sessOf_[p] = static_cast<uint32_t>(sessPort_.size() - sessBase_[n]);
      sessPort_.push_back(p);
      slotLatency.push_back(topo_.link(topo_.portLink(p)).latency);
    }
    const size_t leaves = leavesOf(n).size();
    locBase_[n] = locRows;
    locRows += leaves;
    ribBase_[n] = rows;
    rows += leaves * (sessPort_.size() - sessBase_[n]);
  }
  sessBase_[nodes] = sessPort_.size();
  const size_t slots = sessPort_.size();
  slotUp_.assign(slots, 0);
  ribIn_.assign(rows, AsPathTable::kNone);
  ribOut_.assign(rows, 0);
  locRib_.resize(locRows);
  if (mrai_) {
    lastAdv_.assign(rows, kNever);
    lastSent_.assign(rows, AsPathTable::kNone);
    heldCause_.assign(rows, 0);
    mraiPending_.resize(slots);
    mraiAt_.assign(slots, Time::max());
  }
  inbox_ = std::make_unique<BgpInbox>(sessBase_, std::move(slotLatency));
  procTimer_.assign(nodes, kNoTimer);
  procAt_.assign(nodes, Time::max());
  alive_.assign(nodes, 0);
  for (NodeId sw = static_cast<NodeId>(topo_.hostCount()); sw < nodes; ++sw) {
    alive_[sw] = 1;
    procTimer_[sw] = sim_.newTimer(this, tag(kProcess, sw));
  }
  linkPhys_.assign(topo_.linkCount(), 1);
  linkCp_.assign(topo_.linkCount(), 1);
  sessionUp_.assign(topo_.linkCount(), 0);
  causes_.push_back(Cause{});  // cause 0: the start
}

BgpControlPlane::~BgpControlPlane() = default;

void BgpControlPlane::start() {
  SIM_CHECK(!started_, "BgpControlPlane::start called twice");
  started_ = true;
  cause_ = 0;
  causes_[0].open = true;
  openCauses_.push_back(0);
  start_.lastFibChange = sim_.now();
  for (LinkId l = 0; l < topo_.linkCount(); ++l) {
    const LinkInfo& li = topo_.link(l);
    if (!topo_.isHost(li.a) && !topo_.isHost(li.b)) establish(l);
  }
  for (uint32_t c = 0; c < fib_.components(); ++c) {
    const auto& leaves = fib_.leavesOf(c);
    for (uint32_t i = 0; i < leaves.size(); ++i) {
      LocRib& own = locRib_[locBase_[leaves[i]] + i];
      own.path = AsPathTable::kEmpty;
      own.best = kInvalid;
      advertise(leaves[i], i);
    }
  }
  closeFinished();
}

// ---- failures ----

void BgpControlPlane::linkDown(LinkId l) {
  SIM_CHECK(started_ && l < topo_.linkCount(), "linkDown before start or on an unknown link");
  const uint32_t c = record(EventKind::LinkDown, l);
  linkPhys_[l] = 0;
  // Messages on the wire are lost; those already received stay queued until detection.
  const LinkInfo& li = topo_.link(l);
  for (const PortId p : {topo_.port(li.a, li.aPort), topo_.port(li.b, li.bPort)})
    if (sessOf_[p] != kInvalid)
      inbox_->dropArrivingFrom(topo_.portNode(p), sessOf_[p], sim_.now(),
                               [this](uint32_t id) { addWork(inbox_->message(id).cause, -1); });
  actions_.push_back(Action{EventKind::LinkDown, l, c});
  addWork(c, 1);
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

void BgpControlPlane::linkUp(LinkId l) {
  SIM_CHECK(started_ && l < topo_.linkCount(), "linkUp before start or on an unknown link");
  const uint32_t c = record(EventKind::LinkUp, l);
  linkPhys_[l] = 1;
  actions_.push_back(Action{EventKind::LinkUp, l, c});
  addWork(c, 1);
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

void BgpControlPlane::switchDown(NodeId s) {
  SIM_CHECK(started_ && s < topo_.nodeCount() && !topo_.isHost(s),
            "switchDown before start or not on a switch");
  const uint32_t c = record(EventKind::SwitchDown, s);
  cause_ = c;
  killSwitch(s);
  actions_.push_back(Action{EventKind::SwitchDown, s, c});
  addWork(c, 1);
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

void BgpControlPlane::switchUp(NodeId s) {
  SIM_CHECK(started_ && s < topo_.nodeCount() && !topo_.isHost(s),
            "switchUp before start or not on a switch");
  const uint32_t c = record(EventKind::SwitchUp, s);
  actions_.push_back(Action{EventKind::SwitchUp, s, c});
  addWork(c, 1);
  sim_.scheduleIn(detection_, this, tag(kDetect, static_cast<uint32_t>(actions_.size() - 1)));
}

uint32_t BgpControlPlane::record(EventKind kind, uint32_t element) {
  FailureStats f;
  f.kind = kind;
  f.element = element;
  f.failed = sim_.now();
  f.detected = sim_.now() + detection_;
  f.lastFibChange = sim_.now();
  f.before = groupSummary();
  failures_.push_back(f);
  const uint32_t c = static_cast<uint32_t>(causes_.size());
  causes_.push_back(Cause{0, true});
  openCauses_.push_back(c);
  return c;
}

void BgpControlPlane::addWork(uint32_t cause, int64_t n) {
  causes_[cause].work += static_cast<uint64_t>(n);
  pendingWork_ += static_cast<uint64_t>(n);
}

void BgpControlPlane::closeFinished() {
  size_t keep = 0;
  for (const uint32_t c : openCauses_) {
    if (causes_[c].work != 0) {
      openCauses_[keep++] = c;
      continue;
    }
    causes_[c].open = false;
    if (c == 0) {
      start_.quiet = sim_.now();
    } else {
      failures_[c - 1].after = groupSummary();
    }
  }
  openCauses_.resize(keep);
}

BgpControlPlane::GroupSummary BgpControlPlane::groupSummary() const {
  GroupSummary s;
  bool first = true;
  for (NodeId sw = static_cast<NodeId>(topo_.hostCount()); sw < topo_.nodeCount(); ++sw) {
    if (!alive_[sw]) continue;
    for (const NodeId leaf : leavesOf(sw)) {
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

size_t BgpControlPlane::memoryBytes() const {
  size_t mrai = 0;
  for (const auto& v : mraiPending_) mrai += v.capacity() * sizeof(uint32_t);
  return leafPos_.capacity() * sizeof(uint32_t) + sessBase_.capacity() * sizeof(size_t) +
         sessPort_.capacity() * sizeof(PortId) + sessOf_.capacity() * sizeof(uint32_t) + slotUp_.capacity() +
         ribBase_.capacity() * sizeof(size_t) + locBase_.capacity() * sizeof(size_t) +
         ribIn_.capacity() * sizeof(Ref) + ribOut_.capacity() + locRib_.capacity() * sizeof(LocRib) +
         lastAdv_.capacity() * sizeof(Time) + lastSent_.capacity() * sizeof(Ref) +
         heldCause_.capacity() * sizeof(uint32_t) + mraiPending_.capacity() * sizeof(std::vector<uint32_t>) +
         mrai + mraiAt_.capacity() * sizeof(Time) + paths_.memoryBytes() + inbox_->memoryBytes() +
         procTimer_.capacity() * sizeof(TimerId) + procAt_.capacity() * sizeof(Time) + alive_.capacity() +
         linkPhys_.capacity() + linkCp_.capacity() + sessionUp_.capacity() +
         actions_.capacity() * sizeof(Action) + failures_.capacity() * sizeof(FailureStats) +
         causes_.capacity() * sizeof(Cause);
}

// ---- events ----

void BgpControlPlane::onEvent(uint32_t t) {
  const uint32_t index = t >> kTagBits;
  switch (static_cast<Tag>(t & ((1u << kTagBits) - 1))) {
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
  if (!openCauses_.empty()) closeFinished();
}

void BgpControlPlane::onProcess(NodeId sw) {
  procAt_[sw] = Time::max();
  if (!alive_[sw] || inbox_->empty(sw)) return;
  const Time now = sim_.now();
  if (inbox_->nextArrival(sw) + spec_.updateDelay > now) {
    // The message this wake-up was for was dropped (its session went down): wait for the next.
    procAt_[sw] = inbox_->nextArrival(sw) + spec_.updateDelay;
    sim_.arm(procTimer_[sw], procAt_[sw]);
    return;
  }
  const BgpInbox::Item it = inbox_->pop(sw);
  const BgpInbox::Message m = inbox_->message(it.id);
  inbox_->release(it.id);
  addWork(m.cause, -1);
  cause_ = m.cause;
  apply(sw, it.local, m);
  if (!inbox_->empty(sw) && procAt_[sw] == Time::max()) {
    procAt_[sw] = std::max(inbox_->nextArrival(sw), now) + spec_.updateDelay;
    sim_.arm(procTimer_[sw], procAt_[sw]);
  }
}

void BgpControlPlane::onMrai(uint32_t slot) {
  if (mraiAt_[slot] != sim_.now()) return;  // superseded by an earlier timer or a teardown
  mraiAt_[slot] = Time::max();
  const NodeId sw = topo_.portNode(sessPort_[slot]);
  const uint32_t i = static_cast<uint32_t>(slot - sessBase_[sw]);
  auto& pending = mraiPending_[slot];
  std::vector<uint32_t> due;
  std::vector<uint32_t> later;
  Time next = Time::max();
  for (const uint32_t pos : pending) {
    const size_t r = row(sw, pos) + i;
    if (!(ribOut_[r] & kPending)) continue;  // withdrawn meanwhile, or a duplicate entry
    const Time at = lastAdv_[r] + spec_.mrai;
    if (at <= sim_.now()) {
      ribOut_[r] &= static_cast<uint8_t>(~kPending);
      due.push_back(pos);
    } else {
      later.push_back(pos);
      next = std::min(next, at);
    }
  }
  pending = std::move(later);
  for (const uint32_t pos : due) {
    const uint32_t held = heldCause_[row(sw, pos) + i];
    cause_ = held;
    uint32_t shared = kInvalid;
    sendCurrent(sw, i, pos, shared);
    addWork(held, -1);  // after the send, so that the event stays open while it has work
  }
  if (next != Time::max() && next < mraiAt_[slot]) {
    mraiAt_[slot] = next;
    sim_.schedule(next, this, tag(kMrai, slot));
  }
}

void BgpControlPlane::onDetect(uint32_t index) {
  const Action a = actions_[index];
  addWork(a.cause, -1);
  cause_ = a.cause;
  switch (a.kind) {
    case EventKind::LinkDown:
      linkCp_[a.element] = 0;
      teardown(a.element);
      break;
    case EventKind::LinkUp: {
      linkCp_[a.element] = 1;
      const LinkInfo& li = topo_.link(a.element);
      if (linkPhys_[a.element] && !topo_.isHost(li.a) && !topo_.isHost(li.b) && alive_[li.a] &&
          alive_[li.b] && !sessionUp_[a.element])
        establish(a.element);
      break;
    }
    case EventKind::SwitchDown:
      for (uint32_t lp = 0; lp < topo_.degree(a.element); ++lp)
        teardown(topo_.portLink(topo_.port(a.element, lp)));
      break;
    case EventKind::SwitchUp:
      bootSwitch(a.element);
      break;
  }
}

// ---- protocol ----

void BgpControlPlane::apply(NodeId sw, uint32_t sess, const BgpInbox::Message& m) {
  if (leavesOf(sw)[m.leafPos] == sw) return;  // our own prefix coming back: its AS_PATH holds our ASN
  Ref& e = ribIn_[row(sw, m.leafPos) + sess];
  const bool loop = m.path != AsPathTable::kNone && paths_.contains(m.path, asns_.asnOf(sw));
  const Ref was = e;
  if (m.path == AsPathTable::kNone || loop) {
    if (e == AsPathTable::kNone) return;
    e = AsPathTable::kNone;
  } else {
    if (e == m.path) return;
    e = m.path;
  }
  // A route longer than the best, replacing no route or another longer than the best, changes
  // neither the multipath set nor the best path (the incumbent's row is untouched): selection
  // would find what it found last time, which the FIB and the Loc-RIB hold.
  const Ref best = locRib_[locBase_[sw] + m.leafPos].path;
  if (best != AsPathTable::kNone) {
    const uint32_t len = paths_.length(best);
    if ((was == AsPathTable::kNone || paths_.length(was) > len) &&
        (e == AsPathTable::kNone || paths_.length(e) > len))
      return;
  }
  select(sw, m.leafPos);
}

void BgpControlPlane::select(NodeId sw, uint32_t pos) {
  const NodeId leaf = leavesOf(sw)[pos];
  if (leaf == sw) return;
  const uint32_t d = sessions(sw);
  const Ref* in = &ribIn_[row(sw, pos)];
  uint32_t best = std::numeric_limits<uint32_t>::max();
  scratch_.clear();
  scratchSess_.clear();
  // A row holds a route only while its session is up (teardown clears it), and sessions are in
  // port order, so the group comes out ascending.
  for (uint32_t i = 0; i < d; ++i) {
    if (in[i] == AsPathTable::kNone) continue;
    const uint32_t len = paths_.length(in[i]);
    if (len < best) {
      best = len;
      scratch_.clear();
      scratchSess_.clear();
    }
    if (len == best) {
      scratch_.push_back(sessPort(sw, i));
      scratchSess_.push_back(i);
    }
  }
  setFib(sw, leaf, scratch_);
  LocRib& L = locRib_[locBase_[sw] + pos];
  const bool reachable = !scratch_.empty();
  bool changed = reachable != (L.path != AsPathTable::kNone);
  if (reachable) {
    uint32_t bestSess = scratchSess_.front();
    if (L.path != AsPathTable::kNone &&
        std::find(scratchSess_.begin(), scratchSess_.end(), L.best) != scratchSess_.end())
      bestSess = L.best;  // the incumbent stays while it is in the set (RFC 5004)
    const Ref path = in[bestSess];
    changed = changed || path != L.path;
    L.best = bestSess;
    L.path = path;
  } else {
    L.best = kInvalid;
    L.path = AsPathTable::kNone;
  }
  if (changed) advertise(sw, pos);
}

void BgpControlPlane::advertise(NodeId sw, uint32_t pos) {
  uint32_t shared = kInvalid;
  const size_t base = sessBase_[sw];
  for (uint32_t i = 0; i < sessions(sw); ++i)
    if (slotUp_[base + i]) sendCurrent(sw, i, pos, shared);
  if (shared != kInvalid) inbox_->discardIfUnused(shared);
}

void BgpControlPlane::sendCurrent(NodeId sw, uint32_t i, uint32_t pos, uint32_t& shared) {
  const LocRib& L = locRib_[locBase_[sw] + pos];
  const size_t r = row(sw, pos) + i;
  uint8_t& o = ribOut_[r];
  if (L.path == AsPathTable::kNone) {
    if (o & kPending) {
      o &= static_cast<uint8_t>(~kPending);
      addWork(heldCause_[r], -1);
    }
    if (o & kAdvertised) {
      post(sw, i, shared, pos, AsPathTable::kNone);
      o &= static_cast<uint8_t>(~kAdvertised);
      if (mrai_) lastSent_[r] = AsPathTable::kNone;
    }
    return;
  }
  if (o & kPending) {  // coalesced into the advertisement MRAI holds, which now carries this event
    if (heldCause_[r] != cause_) {
      addWork(heldCause_[r], -1);
      heldCause_[r] = cause_;
      addWork(cause_, 1);
    }
    return;
  }
  const size_t slot = sessBase_[sw] + i;
  if (mrai_ && lastAdv_[r] != kNever && sim_.now() < lastAdv_[r] + spec_.mrai) {
    o |= kPending;
    heldCause_[r] = cause_;
    addWork(cause_, 1);
    mraiPending_[slot].push_back(pos);
    const Time due = lastAdv_[r] + spec_.mrai;
    if (due < mraiAt_[slot]) {
      mraiAt_[slot] = due;
      sim_.schedule(due, this, tag(kMrai, static_cast<uint32_t>(slot)));
    }
    return;
  }
  const Ref path =
      shared != kInvalid ? inbox_->message(shared).path : paths_.prepend(asns_.asnOf(sw), L.path);
  if (mrai_) {
    // Without MRAI every established session was sent the current route at its last change,
    // so an advertisement can only repeat the last one when MRAI held something back.
    if ((o & kAdvertised) && lastSent_[r] == path) return;
    lastAdv_[r] = sim_.now();
    lastSent_[r] = path;
  }
  o |= kAdvertised;
  post(sw, i, shared, pos, path);
}

void BgpControlPlane::post(NodeId sw, uint32_t i, uint32_t& shared, uint32_t pos, Ref path) {
  const bool withdraw = path == AsPathTable::kNone;
  if (withdraw) {
    ++withdrawalsSent_;
    if (cause_ == 0)
      ++start_.withdrawalsSent;
    else
      ++failures_[cause_ - 1].withdrawalsSent;
  } else {
    ++updatesSent_;
    if (cause_ == 0)
      ++start_.updatesSent;
    else
      ++failures_[cause_ - 1].updatesSent;
  }
  const PortId p = sessPort(sw, i);
  const LinkId l = topo_.portLink(p);
  if (!linkPhys_[l]) return;  // sent into a dead link: lost
  const PortId rx = topo_.peerPort(p);
  const NodeId r = topo_.portNode(rx);
  if (!alive_[r]) return;  // the peer is dead: lost
  if (shared == kInvalid) shared = inbox_->create(sim_.now(), pos, path, cause_);
  inbox_->post(r, sessOf_[rx], shared);
  addWork(cause_, 1);
  const Time due = sim_.now() + topo_.link(l).latency + spec_.updateDelay;
  if (due < procAt_[r]) {
    procAt_[r] = due;
    sim_.arm(procTimer_[r], due);
  }
}

void BgpControlPlane::establish(LinkId l) {
  const LinkInfo& li = topo_.link(l);
  sessionUp_[l] = 1;
  const PortId ends[2] = {topo_.port(li.a, li.aPort), topo_.port(li.b, li.bPort)};
  for (const PortId p : ends) slotUp_[sessBase_[topo_.portNode(p)] + sessOf_[p]] = 1;
  for (const PortId p : ends) {
    const NodeId sw = topo_.portNode(p);
    const size_t leaves = leavesOf(sw).size();
    for (uint32_t pos = 0; pos < leaves; ++pos) {
      if (locRib_[locBase_[sw] + pos].path == AsPathTable::kNone) continue;
      uint32_t own = kInvalid;
      sendCurrent(sw, sessOf_[p], pos, own);
    }
  }
}

void BgpControlPlane::teardown(LinkId l) {
  if (!sessionUp_[l]) return;
  sessionUp_[l] = 0;
  const LinkInfo& li = topo_.link(l);
  const PortId ends[2] = {topo_.port(li.a, li.aPort), topo_.port(li.b, li.bPort)};
  for (const PortId p : ends) slotUp_[sessBase_[topo_.portNode(p)] + sessOf_[p]] = 0;
  for (const PortId p : ends) {
    const NodeId sw = topo_.portNode(p);
    if (!alive_[sw]) continue;
    const uint32_t i = sessOf_[p];
    std::vector<uint32_t> lost;
    const size_t leaves = leavesOf(sw).size();
    for (uint32_t pos = 0; pos < leaves; ++pos)
      if (ribIn_[row(sw, pos) + i] != AsPathTable::kNone) lost.push_back(pos);
    clearSide(sw, i);
    for (const uint32_t pos : lost) select(sw, pos);
  }
}

void BgpControlPlane::clearSide(NodeId sw, uint32_t i) {
  const size_t leaves = leavesOf(sw).size();
  for (uint32_t pos = 0; pos < leaves; ++pos) {
    const size_t r = row(sw, pos) + i;
    if (ribOut_[r] & kPending) addWork(heldCause_[r], -1);
    ribOut_[r] = 0;
    ribIn_[r] = AsPathTable::kNone;
    if (mrai_) {
      lastAdv_[r] = kNever;
      lastSent_[r] = AsPathTable::kNone;
    }
  }
  if (mrai_) {
    const size_t slot = sessBase_[sw] + i;
    mraiPending_[slot].clear();
    mraiAt_[slot] = Time::max();
  }
  // A session that goes down discards what it had delivered and not yet processed.
  inbox_->clear(sw, i, [this](uint32_t id) { addWork(inbox_->message(id).cause, -1); });
}

void BgpControlPlane::killSwitch(NodeId s) {
  if (!alive_[s]) return;
  alive_[s] = 0;
  sim_.cancel(procTimer_[s]);
  procAt_[s] = Time::max();
  for (uint32_t i = 0; i < sessions(s); ++i) clearSide(s, i);
  const auto& leaves = leavesOf(s);
  scratch_.clear();
  for (uint32_t pos = 0; pos < leaves.size(); ++pos) {
    locRib_[locBase_[s] + pos] = LocRib{};
    if (leaves[pos] != s) setFib(s, leaves[pos], scratch_);
  }
}

void BgpControlPlane::bootSwitch(NodeId s) {
  if (alive_[s]) return;
  alive_[s] = 1;
  const uint32_t pos = leafPos_[s];
  if (pos != kInvalid) {
    LocRib& own = locRib_[locBase_[s] + pos];
    own.path = AsPathTable::kEmpty;
    own.best = kInvalid;
  }
  for (uint32_t i = 0; i < sessions(s); ++i) {
    const PortId p = sessPort(s, i);
    const LinkId l = topo_.portLink(p);
    if (linkPhys_[l] && linkCp_[l] && alive_[topo_.peerNode(p)] && !sessionUp_[l]) establish(l);
  }
}

void BgpControlPlane::setFib(NodeId sw, NodeId leaf, const std::vector<PortId>& ports) {
  const auto cur = fib_.routeToLeaf(sw, leaf);  // sorted, as EcmpFib keeps its groups; so is `ports`
  if (std::equal(cur.begin(), cur.end(), ports.begin(), ports.end())) return;
  fib_.setRoute(sw, leaf, ports);
  ++fibChanges_;
  lastChange_ = sim_.now();
  if (cause_ == 0) {
    ++start_.fibChanges;
    start_.lastFibChange = sim_.now();
  } else {
    failures_[cause_ - 1].lastFibChange = sim_.now();
    failures_[cause_ - 1].fibChanged = true;
  }
}

}  // namespace fabricsim
