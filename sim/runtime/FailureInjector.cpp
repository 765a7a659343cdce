#include "sim/runtime/FailureInjector.h"

#include "sim/core/Error.h"

namespace fabricsim {

FailureInjector::FailureInjector(Simulator& sim, const Topology& topo, Fabric& fabric, PacketFabric* packet,
                                 BgpControlPlane* bgp, IbSubnetManager* sm, EcmpFib* fib,
                                 const TopologySpec& spec)
    : sim_(sim), topo_(topo), fabric_(fabric), packet_(packet), bgp_(bgp), sm_(sm) {
  if (fib && spec.routing.localFailover)
    failover_ = std::make_unique<LocalFailover>(sim, topo, *fib, spec.routing.failoverDelay);
  std::vector<Diagnostic> diags;
  for (size_t i = 0; i < spec.failures.size(); ++i) {
    const FailureSpec& f = spec.failures[i];
    const std::string key = "failures[" + std::to_string(i) + "]";
    auto bad = [&](const std::string& why) { diags.push_back(Diagnostic{spec.file, f.line, 0, key, why}); };
    Event e;
    e.spec = f;
    if (!f.host.empty()) {
      e.node = topo.findNode(f.host);
      if (e.node == kInvalid || !topo.isHost(e.node)) {
        bad("no host named '" + f.host + "' (hosts are host-<i>)");
        continue;
      }
      if (!packet) {
        bad("a PFC storm needs the packet backend (PAUSE frames exist only there); use --backend packet");
        continue;
      }
      events_.push_back(std::move(e));
      continue;
    }
    if (!f.link.empty()) {
      if (f.link.size() != 2) {
        bad("expected a link as two node names, found " + std::to_string(f.link.size()));
        continue;
      }
      const NodeId a = topo.findNode(f.link[0]), b = topo.findNode(f.link[1]);
      if (a == kInvalid || b == kInvalid) {
        bad("no node named '" + (a == kInvalid ? f.link[0] : f.link[1]) +
            "' (names: host-<i>, leaf-<i>, spine-<j>, "
            "edge-<pod>-<i>, agg-<pod>-<i>, core-<j>, rail<r>-...)");
        continue;
      }
      for (uint32_t p = 0; p < topo.degree(a); ++p)
        if (topo.peerNode(topo.port(a, p)) == b) e.links.push_back(topo.portLink(topo.port(a, p)));
      if (e.links.empty()) {
        bad("'" + f.link[0] + "' and '" + f.link[1] + "' share no link");
        continue;
      }
      e.hostLinks = topo.isHost(a) || topo.isHost(b);  // one link per NIC of the host to that switch
    } else if (!f.nicHost.empty()) {
      const NodeId h = topo.findNode(f.nicHost);
      if (h == kInvalid || !topo.isHost(h)) {
        diags.push_back(Diagnostic{spec.file, f.line, 0, key + ".nic",
                                   "expected 'host-<i>/<n>' naming a host of the topology (host-0 .. host-" +
                                       std::to_string(topo.hostCount() - 1) + "), found no host named '" +
                                       f.nicHost + "'"});
        continue;
      }
      const int perHost = topo.nicsPerHost();
      if (f.nicIndex < 0 || f.nicIndex >= perHost) {
        diags.push_back(Diagnostic{spec.file, f.line, 0, key + ".nic",
                                   "expected a NIC index from 0 to " + std::to_string(perHost - 1) + " (" +
                                       f.nicHost + " has " + std::to_string(perHost) +
                                       (perHost == 1 ? " NIC" : " NICs") + "), found " +
                                       std::to_string(f.nicIndex)});
        continue;
      }
      e.nic = static_cast<uint32_t>(h) * static_cast<uint32_t>(perHost) + static_cast<uint32_t>(f.nicIndex);
      e.links.push_back(topo.portLink(topo.nicPort(e.nic)));
      e.hostLinks = true;
    } else {
      e.node = topo.findNode(f.node);
      if (e.node == kInvalid) {
        bad("no switch named '" + f.node + "'");
        continue;
      }
      if (topo.isHost(e.node)) {
        bad("'" + f.node + "' is a host; only switches can fail");
        continue;
      }
      for (uint32_t p = 0; p < topo.degree(e.node); ++p) {
        if (topo.isHost(topo.peerNode(topo.port(e.node, p)))) {
          bad("'" + f.node +
              "' has hosts attached; failing a leaf would cut them off (fail a spine, aggregation "
              "or core switch)");
          break;
        }
        e.links.push_back(topo.portLink(topo.port(e.node, p)));
      }
    }
    if (f.action == "flap") {
      for (int k = 0; k < f.count; ++k) {
        Event down = e;
        down.spec.action = "down";
        down.spec.at = f.at + (f.downFor + f.upFor) * k;
        Event up = e;
        up.spec.action = "up";
        up.spec.at = down.spec.at + f.downFor;
        events_.push_back(std::move(down));
        events_.push_back(std::move(up));
      }
      continue;
    }
    events_.push_back(std::move(e));
  }
  if (!diags.empty()) throw InputError(std::move(diags));
}

void FailureInjector::start(Time origin) {
  for (uint32_t i = 0; i < events_.size(); ++i) {
    events_[i].at = origin + events_[i].spec.at;
    sim_.schedule(events_[i].at, this, i);
  }
}

void FailureInjector::onEvent(uint32_t index) {
  Event& e = events_[index];
  if (!e.spec.host.empty()) {
    packet_->setPfcStorm(e.node, e.spec.action == "pfc-storm");
    return;
  }
  const bool up = e.spec.action == "up";
  const std::vector<LinkId> changed = applyCauses(e, up);
  for (LinkId l : changed) fabric_.setLinkUp(l, up);
  // Neither BGP nor the subnet manager hears of host links: a leaf keeps advertising its hosts'
  // prefix while one host is cut off (RFC 7938 leaves originate the rack's subnet), and a route
  // toward a dead NIC loses only what was going to it anyway. Recovery is the NICs' (failover or
  // retries).
  if (e.hostLinks) return;
  if (failover_) e.failoverRecord = failover_->linksChanged(changed, up);
  if (sm_ && !changed.empty()) sm_->linksChanged(changed, up);
  if (!bgp_) return;
  e.bgpFirst = static_cast<uint32_t>(bgp_->failureStats().size());
  if (e.node != kInvalid) {
    if (up)
      bgp_->switchUp(e.node);
    else
      bgp_->switchDown(e.node);
  } else {
    for (LinkId l : changed) {
      if (up)
        bgp_->linkUp(l);
      else
        bgp_->linkDown(l);
    }
  }
  e.bgpEnd = static_cast<uint32_t>(bgp_->failureStats().size());
}

std::vector<LinkId> FailureInjector::applyCauses(const Event& e, bool up) {
  if (linkDown_.empty()) linkDown_.assign(topo_.linkCount(), 0);
  std::vector<LinkId> changed;
  for (LinkId l : e.links) {
    uint8_t cause = kLinkDown;
    if (e.nic != kInvalid) cause = kNicDown;
    if (e.node != kInvalid) cause = topo_.link(l).a == e.node ? kSwitchADown : kSwitchBDown;
    uint8_t& state = linkDown_[l];
    const uint8_t before = state;
    state = up ? static_cast<uint8_t>(state & ~cause) : static_cast<uint8_t>(state | cause);
    if ((before == 0) != (state == 0)) changed.push_back(l);
  }
  return changed;
}

}  // namespace fabricsim
