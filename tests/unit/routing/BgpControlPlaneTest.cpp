// BgpControlPlane: the groups BGP installs checked against an independent shortest-path
// computation (boost::breadth_first_search on the switch-only graph), loop prevention with
// shared and unique ASNs, link and switch failures with convergence-time bounds, MRAI and
// determinism. Every test runs its Simulator to quiescence.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/EventHandler.h"
#include "sim/core/Simulator.h"
#include "sim/routing/AsnPlan.h"
#include "sim/routing/BgpControlPlane.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/Topology.h"
#include "sim/topology/TopologyBuilder.h"
#include "tests/support/SwitchBfs.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {

using testsupport::kUnreached;
using testsupport::switchDistances;

TopologySpec leafSpineSpec(int leaves, int spines, int hostsPerLeaf, int linksPerSpine = 1) {
  TopologySpec s;
  s.name = "ls";
  s.kind = TopologyKind::LeafSpine;
  s.leafSpine = LeafSpineShape{leaves, spines, hostsPerLeaf, linksPerSpine};
  return s;
}

TopologySpec fatTreeSpec(int radix, int pods = 0) {
  TopologySpec s;
  s.name = "ft";
  s.kind = TopologyKind::FatTree;
  s.fatTree = FatTreeShape{radix, pods == 0 ? radix : pods, radix / 2};
  return s;
}

TopologySpec railSpec(int rails, bool shared, TopologyKind railKind) {
  TopologySpec s;
  s.name = "rail";
  s.kind = TopologyKind::RailOptimized;
  s.rail.rails = rails;
  s.rail.sharedSpines = shared;
  s.rail.railKind = railKind;
  s.rail.leafSpine = LeafSpineShape{3, 2, 2, 1};
  s.rail.fatTree = FatTreeShape{4, 2, 2};
  s.hosts.gpusPerHost = rails;
  s.hosts.nicsPerHost = rails;
  return s;
}

/// Deliberately fast timers so that the tests stay short and their hand-derived bounds small:
/// BFD at 3 x 50 us is far below what fabrics run (see BgpSpec's defaults), not a default.
BgpSpec testBgp(const std::string& scheme = "rfc7938") {
  BgpSpec b;
  b.asnScheme = scheme;
  b.updateDelay = 50_us;
  b.mrai = Time::zero();
  b.detection = "bfd";
  b.bfdInterval = 50_us;
  b.bfdMultiplier = 3;
  return b;
}

/// Largest switch-hop distance between two switches of one plane.
uint32_t switchDiameter(const Topology& topo) {
  uint32_t d = 0;
  for (NodeId s = static_cast<NodeId>(topo.hostCount()); s < topo.nodeCount(); ++s)
    for (uint32_t x : switchDistances(topo, s))
      if (x != kUnreached) d = std::max(d, x);
  return d;
}

/// Timed failure script: calls the control plane's failure API at absolute times.
class Script final : public EventHandler {
 public:
  enum class Op { LinkDown, LinkUp, SwitchDown, SwitchUp };
  Script(Simulator& sim, BgpControlPlane& cp) : sim_(sim), cp_(cp) {}
  void at(Time when, Op op, uint32_t element) {
    steps_.push_back({op, element});
    sim_.schedule(when, this, static_cast<uint32_t>(steps_.size() - 1));
  }
  void onEvent(uint32_t tag) override {
    const auto [op, e] = steps_[tag];
    switch (op) {
      case Op::LinkDown:
        cp_.linkDown(e);
        break;
      case Op::LinkUp:
        cp_.linkUp(e);
        break;
      case Op::SwitchDown:
        cp_.switchDown(e);
        break;
      case Op::SwitchUp:
        cp_.switchUp(e);
        break;
    }
  }

 private:
  Simulator& sim_;
  BgpControlPlane& cp_;
  std::vector<std::pair<Op, uint32_t>> steps_;
};

using Groups = std::map<std::pair<NodeId, NodeId>, std::vector<PortId>>;

struct Fixture {
  Fixture(const TopologySpec& s, const BgpSpec& b)
      : spec(s), topo(buildTopology(spec)), fib(*topo, 7), bgp(b) {
    // EcmpFib starts from static shortest paths: empty every group so BGP must install them.
    for (NodeId sw = static_cast<NodeId>(topo->hostCount()); sw < topo->nodeCount(); ++sw)
      for (NodeId leaf : fib.leavesOf(fib.component(sw)))
        if (leaf != sw) fib.setRoute(sw, leaf, {});
    cp = std::make_unique<BgpControlPlane>(sim, *topo, fib, bgp);
  }
  void startAndRun() {
    cp->start();
    sim.run();
    ASSERT_TRUE(cp->converged());
  }
  Groups groups() const {
    Groups g;
    for (NodeId sw = static_cast<NodeId>(topo->hostCount()); sw < topo->nodeCount(); ++sw)
      for (NodeId leaf : fib.leavesOf(fib.component(sw))) {
        if (leaf == sw) continue;
        auto r = fib.routeToLeaf(sw, leaf);
        std::vector<PortId> v(r.begin(), r.end());
        std::sort(v.begin(), v.end());
        g[{sw, leaf}] = v;
      }
    return g;
  }
  NodeId node(const std::string& name) const {
    const NodeId n = topo->findNode(name);
    EXPECT_NE(n, kInvalid) << name;
    return n;
  }
  LinkId linkBetween(const std::string& a, const std::string& b, int which = 0) const {
    const NodeId na = node(a), nb = node(b);
    for (uint32_t lp = 0; lp < topo->degree(na); ++lp) {
      const PortId p = topo->port(na, lp);
      if (topo->peerNode(p) == nb && which-- == 0) return topo->portLink(p);
    }
    ADD_FAILURE() << "no link " << a << " - " << b;
    return kInvalid;
  }

  TopologySpec spec;
  std::unique_ptr<Topology> topo;
  EcmpFib fib;
  BgpSpec bgp;
  Simulator sim;
  std::unique_ptr<BgpControlPlane> cp;
};

/// Every (switch, leaf of its plane) group equals the ports toward neighbours one hop closer
/// to the leaf, by independent BFS; returns the number of groups checked.
size_t checkGroupsAgainstBfs(const Fixture& f, const std::string& what) {
  const Topology& topo = *f.topo;
  size_t checked = 0;
  std::map<NodeId, std::vector<uint32_t>> dist;
  for (NodeId sw = static_cast<NodeId>(topo.hostCount()); sw < topo.nodeCount(); ++sw) {
    for (NodeId leaf : f.fib.leavesOf(f.fib.component(sw))) {
      if (leaf == sw) continue;
      if (!dist.count(leaf)) dist[leaf] = switchDistances(topo, leaf);
      const auto& d = dist[leaf];
      EXPECT_NE(d[sw], kUnreached) << what;
      std::vector<PortId> expected;
      for (uint32_t lp = 0; lp < topo.degree(sw); ++lp) {
        const PortId p = topo.port(sw, lp);
        const NodeId w = topo.peerNode(p);
        if (!topo.isHost(w) && d[w] != kUnreached && d[w] + 1 == d[sw]) expected.push_back(p);
      }
      const auto r = f.fib.routeToLeaf(sw, leaf);
      std::vector<PortId> got(r.begin(), r.end());
      std::sort(got.begin(), got.end());
      EXPECT_FALSE(expected.empty());
      EXPECT_EQ(got, expected) << what << ": group at " << topo.node(sw).name << " toward "
                               << topo.node(leaf).name;
      ++checked;
    }
  }
  return checked;
}

/// Follows every member of every group from every live leaf toward every other live leaf of
/// its plane: no loop, no black hole, no dead link or dead switch on the way. `downLinks`
/// and `deadSwitches` describe the data plane.
void checkForwarding(const Fixture& f, const std::string& what, const std::set<LinkId>& downLinks = {},
                     const std::set<NodeId>& deadSwitches = {}) {
  const Topology& topo = *f.topo;
  std::vector<uint8_t> color(topo.nodeCount());
  for (uint32_t c = 0; c < f.fib.components(); ++c) {
    const auto& leaves = f.fib.leavesOf(c);
    for (NodeId dst : leaves) {
      if (deadSwitches.count(dst)) continue;
      std::fill(color.begin(), color.end(), 0);
      // Iterative DFS over the forwarding graph toward dst; colour 1 = on stack, 2 = done.
      for (NodeId src : leaves) {
        if (src == dst || deadSwitches.count(src) || color[src] == 2) continue;
        std::vector<std::pair<NodeId, uint32_t>> stack{{src, 0}};
        color[src] = 1;
        while (!stack.empty()) {
          auto& [at, next] = stack.back();
          const auto group = f.fib.routeToLeaf(at, dst);
          if (next == 0) {
            ASSERT_FALSE(group.empty())
                << what << ": black hole at " << topo.node(at).name << " toward " << topo.node(dst).name;
          }
          if (next == group.size()) {
            color[at] = 2;
            stack.pop_back();
            continue;
          }
          const PortId p = group[next++];
          ASSERT_EQ(topo.portNode(p), at);
          ASSERT_FALSE(downLinks.count(topo.portLink(p)))
              << what << ": " << topo.node(at).name << " forwards on a failed link toward "
              << topo.node(dst).name;
          const NodeId w = topo.peerNode(p);
          ASSERT_FALSE(topo.isHost(w));
          ASSERT_FALSE(deadSwitches.count(w))
              << what << ": " << topo.node(at).name << " forwards to a dead switch";
          if (w == dst) continue;
          ASSERT_NE(color[w], 1) << what << ": forwarding loop through " << topo.node(w).name << " toward "
                                 << topo.node(dst).name;
          if (color[w] == 0) {
            color[w] = 1;
            stack.push_back({w, 0});
          }
        }
      }
    }
  }
}

}  // namespace

TEST(BgpAsnPlan, Rfc7938SharesTierAsnsPerPodAndPlane) {
  const auto ft = buildTopology(fatTreeSpec(4));
  const AsnPlan plan(*ft, "rfc7938");
  auto asn = [&](const char* n) { return plan.asnOf(ft->findNode(n)); };
  EXPECT_NE(asn("edge-0-0"), asn("edge-0-1"));
  EXPECT_EQ(asn("agg-0-0"), asn("agg-0-1"));
  EXPECT_NE(asn("agg-0-0"), asn("agg-1-0"));
  EXPECT_EQ(asn("core-0"), asn("core-3"));
  EXPECT_GE(asn("edge-0-0"), AsnPlan::kPrivateBase);
  EXPECT_EQ(plan.distinctAsns(), 8u + 4u + 1u);  // 8 edges, 4 pods, 1 core tier
  const AsnPlan unique(*ft, "unique");
  EXPECT_EQ(unique.distinctAsns(), ft->switchCount());
  const auto ls = buildTopology(leafSpineSpec(4, 3, 1));
  const AsnPlan lsPlan(*ls, "rfc7938");
  EXPECT_EQ(lsPlan.asnOf(ls->findNode("spine-0")), lsPlan.asnOf(ls->findNode("spine-2")));
  EXPECT_EQ(lsPlan.distinctAsns(), 4u + 1u);
}

TEST(BgpControlPlane, HealthyFabricsInstallExactlyTheShortestPathGroups) {
  const std::vector<std::pair<std::string, TopologySpec>> cases = {
      {"leaf-spine 4x3", leafSpineSpec(4, 3, 2)},
      {"leaf-spine 4x3 links_per_spine 2", leafSpineSpec(4, 3, 2, 2)},
      {"fat-tree k=4", fatTreeSpec(4)},
      {"fat-tree k=8", fatTreeSpec(8)},
      {"partial fat-tree k=8 pods=3", fatTreeSpec(8, 3)},
      {"rail leaf-spine shared spines", railSpec(2, true, TopologyKind::LeafSpine)},
      {"rail fat-tree shared cores", railSpec(2, true, TopologyKind::FatTree)},
      {"rail leaf-spine separate planes", railSpec(3, false, TopologyKind::LeafSpine)},
  };
  for (const auto& [what, spec] : cases) {
    Fixture f(spec, testBgp());
    f.startAndRun();
    EXPECT_GT(checkGroupsAgainstBfs(f, what), 0u) << what;
    checkForwarding(f, what);
    EXPECT_GT(f.cp->updatesSent(), 0u) << what;
    EXPECT_EQ(f.cp->withdrawalsSent(), 0u) << what;
    EXPECT_GT(f.cp->lastChange(), Time::zero()) << what;
  }
}

TEST(BgpControlPlane, UniqueAsnsNeverPreferValleyPaths) {
  for (const auto& [what, spec] : std::vector<std::pair<std::string, TopologySpec>>{
           {"leaf-spine 4x3 links_per_spine 2", leafSpineSpec(4, 3, 1, 2)},
           {"fat-tree k=4", fatTreeSpec(4)},
           {"rail fat-tree shared cores", railSpec(2, true, TopologyKind::FatTree)}}) {
    Fixture f(spec, testBgp("unique"));
    f.startAndRun();
    checkGroupsAgainstBfs(f, what + " unique ASNs");
    checkForwarding(f, what + " unique ASNs");
  }
  // After spine-0 loses its link to leaf-0, RFC 7938 numbering leaves spine-0 without a route
  // (every detour leaf -> spine -> leaf repeats the spine ASN), while unique numbering lets it
  // keep the 3-hop valley path spine-0 -> leaf-x -> spine-y -> leaf-0. The leaves prefer
  // the 2-hop paths through the other spines in both cases.
  for (const std::string scheme : {"rfc7938", "unique"}) {
    Fixture f(leafSpineSpec(4, 3, 1), testBgp(scheme));
    f.startAndRun();
    f.cp->linkDown(f.linkBetween("leaf-0", "spine-0"));
    f.sim.run();
    ASSERT_TRUE(f.cp->converged());
    const NodeId spine0 = f.node("spine-0"), leaf0 = f.node("leaf-0");
    const size_t valley = f.fib.routeToLeaf(spine0, leaf0).size();
    if (scheme == "rfc7938") {
      EXPECT_EQ(valley, 0u) << "AS_PATH loop prevention must reject spine-0's valley paths";
    } else {
      EXPECT_EQ(valley, 3u) << "with unique ASNs spine-0 keeps valley paths through the 3 other leaves";
    }
    for (const char* l : {"leaf-1", "leaf-2", "leaf-3"}) {
      const auto g = f.fib.routeToLeaf(f.node(l), leaf0);
      EXPECT_EQ(g.size(), 2u) << scheme << " " << l;
      for (PortId p : g) EXPECT_NE(f.topo->peerNode(p), spine0) << scheme;
    }
    checkForwarding(f, scheme + " after spine-0 lost leaf-0", {f.linkBetween("leaf-0", "spine-0")});
  }
}

TEST(BgpControlPlane, SpineLeafLinkFailureConvergesWithinTheTimerBound) {
  for (int linksPerSpine : {1, 2}) {
    const std::string what = "leaf-spine 4x3 links_per_spine " + std::to_string(linksPerSpine);
    Fixture f(leafSpineSpec(4, 3, 2, linksPerSpine), testBgp());
    f.startAndRun();
    const Groups healthy = f.groups();
    const uint64_t updates0 = f.cp->updatesSent(), withdrawals0 = f.cp->withdrawalsSent();
    const LinkId l = f.linkBetween("leaf-0", "spine-0");
    const Time t = f.sim.now() + 1_ms;
    Script script(f.sim, *f.cp);
    script.at(t, Script::Op::LinkDown, l);
    f.sim.run();
    ASSERT_TRUE(f.cp->converged());
    for (const auto& [key, ports] : f.groups())
      for (PortId p : ports) EXPECT_NE(f.topo->portLink(p), l) << what << ": failed link still in a group";
    checkForwarding(f, what + " after link failure", {l});
    ASSERT_EQ(f.cp->failureStats().size(), 1u);
    const auto& fs = f.cp->failureStats()[0];
    EXPECT_EQ(fs.failed, t);
    EXPECT_EQ(fs.detected, t + 150_us);
    EXPECT_TRUE(fs.fibChanged);
    // Bound: detection (bfd 50us x 3) + diameter (2 switch hops) x (updateDelay 50us + link
    // latency 1us) + MRAI (0).
    const uint32_t diameter = switchDiameter(*f.topo);
    EXPECT_EQ(diameter, 2u);
    const Time bound = 150_us + (50_us + f.topo->link(l).latency) * diameter + f.bgp.mrai;
    EXPECT_GE(fs.convergence(), 150_us) << what << ": nothing can change before detection";
    EXPECT_LE(fs.convergence(), bound) << what;
    if (linksPerSpine == 1) {
      // leaf-1..3 lose spine-0 toward leaf-0; leaf-0 loses spine-0 toward everyone.
      EXPECT_EQ(fs.before.minSize, 1u);  // a spine toward a leaf: the one direct link
      EXPECT_EQ(fs.after.minSize, 0u);   // spine-0 has no route to leaf-0 (RFC 7938 numbering)
      EXPECT_LT(fs.after.mean(), fs.before.mean());
    } else {
      // One of two parallel links: spine-0 keeps leaf-0 over the other one.
      EXPECT_EQ(fs.before.minSize, 2u);
      EXPECT_EQ(fs.after.emptyGroups, 0u);
      EXPECT_EQ(fs.after.minSize, 1u);
    }
    std::printf(
        "[ bgp ] %s link failure: convergence %.1f us (bound %.1f us), %llu updates, %llu withdrawals, "
        "mean group %.3f -> %.3f\n",
        what.c_str(), fs.convergence().micros(), bound.micros(),
        static_cast<unsigned long long>(f.cp->updatesSent() - updates0),
        static_cast<unsigned long long>(f.cp->withdrawalsSent() - withdrawals0), fs.before.mean(),
        fs.after.mean());
    // Repair: the original groups come back.
    script.at(f.sim.now() + 1_ms, Script::Op::LinkUp, l);
    f.sim.run();
    ASSERT_TRUE(f.cp->converged());
    EXPECT_EQ(f.groups(), healthy) << what << ": linkUp must restore the original groups";
    ASSERT_EQ(f.cp->failureStats().size(), 2u);
    // Repair bound: the new session starts with a full table exchange, so the receiving
    // switch queues one message per prefix (4 leaves): detection + diameter x (updateDelay +
    // latency) + (prefixes - 1) x updateDelay + MRAI.
    const Time repairBound = bound + 50_us * (static_cast<int64_t>(f.fib.leavesOf(0).size()) - 1);
    EXPECT_LE(f.cp->failureStats()[1].convergence(), repairBound) << what << " repair";
    std::printf("[ bgp ] %s link repair: convergence %.1f us (bound %.1f us), %llu updates\n", what.c_str(),
                f.cp->failureStats()[1].convergence().micros(), repairBound.micros(),
                static_cast<unsigned long long>(f.cp->failureStats()[1].updatesSent));
  }
}

TEST(BgpControlPlane, SwitchFailureConvergesAndRepairRestoresGroups) {
  struct Case {
    std::string what;
    TopologySpec spec;
    std::string victim;
    // Most messages one switch queues per hop: the prefixes behind the failure times the
    // sessions that announce each change to one switch.
    int queuedPerHop;
    // Live (switch, leaf) pairs left without a route. With RFC 7938 numbering the k/2 cores
    // cabled to a dead agg-p-i lose the k/2 edges of pod p, and so do the aggregation
    // switches agg-x-i of the other pods (they reach pod p only through those cores): every
    // detour through another pod repeats a pod or core ASN. The edges still reach pod p
    // through their other aggregation switches.
    uint64_t emptyAfter;
  };
  // Spine: every leaf loses it at detection (local); nothing propagates to change a FIB.
  // Aggregation agg-0-0 of k=4: core-0 and core-1 lose both pod-0 prefixes; agg-x-0 gets
  // 2 prefixes x 2 cores = 4 withdrawals, edge-x-y 2 withdrawals from agg-x-0.
  const std::vector<Case> cases = {
      {"leaf-spine 4x3 spine-0", leafSpineSpec(4, 3, 2), "spine-0", 1, 0},
      {"fat-tree k=4 agg-0-0", fatTreeSpec(4), "agg-0-0", 4, 2 * 2 + 3 * 2},
      {"fat-tree k=8 agg-1-2", fatTreeSpec(8), "agg-1-2", 16, 4 * 4 + 7 * 4},
  };
  for (const Case& c : cases) {
    Fixture f(c.spec, testBgp());
    f.startAndRun();
    const Groups healthy = f.groups();
    const NodeId victim = f.node(c.victim);
    const Time t = f.sim.now() + 1_ms;
    Script script(f.sim, *f.cp);
    script.at(t, Script::Op::SwitchDown, victim);
    f.sim.run();
    ASSERT_TRUE(f.cp->converged());
    std::set<LinkId> dead;
    for (uint32_t lp = 0; lp < f.topo->degree(victim); ++lp)
      dead.insert(f.topo->portLink(f.topo->port(victim, lp)));
    for (const auto& [key, ports] : f.groups()) {
      if (key.first == victim) {
        EXPECT_TRUE(ports.empty()) << c.what << ": a dead switch keeps no routes";
        continue;
      }
      for (PortId p : ports)
        EXPECT_NE(f.topo->peerNode(p), victim) << c.what << ": dead switch still in a group";
    }
    checkForwarding(f, c.what + " after switch failure", dead, {victim});
    const auto& fs = f.cp->failureStats().at(0);
    const uint32_t diameter = switchDiameter(*f.topo);
    // Bound: detection + diameter x (link latency + queued messages x updateDelay) + MRAI.
    const Time bound = f.cp->detectionDelay() +
                       (f.spec.links.latency + f.bgp.updateDelay * c.queuedPerHop) * diameter + f.bgp.mrai;
    EXPECT_TRUE(fs.fibChanged);
    EXPECT_GE(fs.convergence(), Time::zero());
    EXPECT_LE(fs.convergence(), bound) << c.what;
    EXPECT_EQ(fs.after.emptyGroups, c.emptyAfter) << c.what;
    EXPECT_LT(fs.after.mean(), fs.before.mean());
    std::printf(
        "[ bgp ] %s down: convergence %.1f us (bound %.1f us), %llu updates, %llu withdrawals, "
        "min group %u -> %u, mean %.3f -> %.3f\n",
        c.what.c_str(), fs.convergence().micros(), bound.micros(),
        static_cast<unsigned long long>(fs.updatesSent), static_cast<unsigned long long>(fs.withdrawalsSent),
        fs.before.minSize, fs.after.minSize, fs.before.mean(), fs.after.mean());
    script.at(f.sim.now() + 1_ms, Script::Op::SwitchUp, victim);
    f.sim.run();
    ASSERT_TRUE(f.cp->converged());
    EXPECT_EQ(f.groups(), healthy) << c.what << ": switchUp must restore the original groups";
    checkGroupsAgainstBfs(f, c.what + " repaired");
  }
}

TEST(BgpControlPlane, MraiCoalescesABurstOfFlaps) {
  struct Outcome {
    uint64_t updates = 0, withdrawals = 0;
    Time convergence;
    Groups groups;
  };
  auto run = [](Time mrai) {
    BgpSpec b = testBgp();
    b.mrai = mrai;
    b.detection = "los";
    b.updateDelay = 5_us;
    Fixture f(leafSpineSpec(4, 2, 1), b);
    f.startAndRun();
    const uint64_t u0 = f.cp->updatesSent(), w0 = f.cp->withdrawalsSent();
    const LinkId l = f.linkBetween("leaf-0", "spine-0");
    // Idle well past any MRAI interval, then flap the link 3 times, 40 us apart.
    const Time t = f.sim.now() + 10_ms;
    Script script(f.sim, *f.cp);
    for (int i = 0; i < 6; ++i)
      script.at(t + 40_us * i, i % 2 == 0 ? Script::Op::LinkDown : Script::Op::LinkUp, l);
    f.sim.run();
    EXPECT_TRUE(f.cp->converged());
    checkGroupsAgainstBfs(f, "after the burst");
    Outcome o;
    o.updates = f.cp->updatesSent() - u0;
    o.withdrawals = f.cp->withdrawalsSent() - w0;
    o.convergence = f.cp->lastChange() - t;
    o.groups = f.groups();
    return o;
  };
  const Outcome plain = run(Time::zero());
  const Outcome mrai = run(1_ms);
  std::printf(
      "[ bgp ] burst of 3 flaps: mrai 0: %llu updates %llu withdrawals, convergence %.1f us; "
      "mrai 1ms: %llu updates %llu withdrawals, convergence %.1f us\n",
      static_cast<unsigned long long>(plain.updates), static_cast<unsigned long long>(plain.withdrawals),
      plain.convergence.micros(), static_cast<unsigned long long>(mrai.updates),
      static_cast<unsigned long long>(mrai.withdrawals), mrai.convergence.micros());
  EXPECT_LT(mrai.updates + mrai.withdrawals, plain.updates + plain.withdrawals);
  EXPECT_LT(mrai.updates, plain.updates);
  EXPECT_GE(mrai.convergence, 1_ms) << "the last advertisement waits for MRAI";
  EXPECT_LT(plain.convergence, 1_ms);
  EXPECT_EQ(mrai.groups, plain.groups) << "both end in the healthy state";
}

TEST(BgpControlPlane, RunsAreDeterministic) {
  auto run = [] {
    BgpSpec b = testBgp("unique");
    b.mrai = 200_us;
    auto f = std::make_unique<Fixture>(fatTreeSpec(4), b);
    f->cp->start();
    Script script(f->sim, *f->cp);
    script.at(300_us, Script::Op::LinkDown, f->linkBetween("agg-0-0", "core-0"));
    script.at(350_us, Script::Op::SwitchDown, f->node("agg-1-1"));
    script.at(2_ms, Script::Op::LinkUp, f->linkBetween("agg-0-0", "core-0"));
    f->sim.run();
    EXPECT_TRUE(f->cp->converged());
    return std::make_tuple(f->cp->updatesSent(), f->cp->withdrawalsSent(), f->cp->fibChanges(),
                           f->cp->lastChange(), f->groups(), f->sim.eventsProcessed());
  };
  const auto a = run();
  const auto b = run();
  EXPECT_EQ(std::get<0>(a), std::get<0>(b));
  EXPECT_EQ(std::get<1>(a), std::get<1>(b));
  EXPECT_EQ(std::get<2>(a), std::get<2>(b));
  EXPECT_EQ(std::get<3>(a), std::get<3>(b));
  EXPECT_EQ(std::get<4>(a), std::get<4>(b));
  EXPECT_EQ(std::get<5>(a), std::get<5>(b));
  EXPECT_GT(std::get<0>(a), 0u);
}

// RFC 7938 with multipath relax converges to every shortest path, so the groups BGP installs
// from empty tables must equal, group by group, the static tables EcmpFib's constructor builds
// by breadth-first search (an independent computation of the same answer).
TEST(BgpControlPlane, ConvergedGroupsEqualTheStaticShortestPathTables) {
  for (const auto& [what, spec] : std::vector<std::pair<std::string, TopologySpec>>{
           {"fat-tree k=4", fatTreeSpec(4)},
           {"fat-tree k=8", fatTreeSpec(8)},
           {"leaf-spine 6x4 links_per_spine 2", leafSpineSpec(6, 4, 2, 2)}}) {
    for (const std::string scheme : {"rfc7938", "unique"}) {
      Fixture f(spec, testBgp(scheme));
      const EcmpFib reference(*f.topo, 7);
      f.startAndRun();
      size_t compared = 0;
      for (NodeId sw = static_cast<NodeId>(f.topo->hostCount()); sw < f.topo->nodeCount(); ++sw)
        for (NodeId leaf : reference.leavesOf(reference.component(sw))) {
          if (leaf == sw) continue;
          auto r = reference.routeToLeaf(sw, leaf);
          auto b = f.fib.routeToLeaf(sw, leaf);
          std::vector<PortId> want(r.begin(), r.end()), got(b.begin(), b.end());
          std::sort(want.begin(), want.end());
          std::sort(got.begin(), got.end());
          EXPECT_EQ(got, want) << what << " " << scheme << ": " << f.topo->node(sw).name << " toward "
                               << f.topo->node(leaf).name;
          ++compared;
        }
      EXPECT_GT(compared, 0u) << what;
    }
  }
}

// Path hunting on a withdrawal (RFC 7938 section 5.2.1: one ASN for all the switches of a
// tier, so that AS_PATH loop prevention rejects every leaf -> spine -> leaf detour and BGP does
// not hunt through them; with an ASN per switch the detours are legal and it does).
// Leaf-spine, L = 4 leaves, S = 3 spines, MRAI 0; leaf-0 fails at T. Every spine detects it at
// T + det (bfd 3 x 50 us) and tears its session down.
//  rfc7938: each spine loses its only route to leaf-0 (what the other leaves sent it,
//    [leaf-x, spine, leaf-0], holds the shared spine ASN, so it was never eligible) and
//    withdraws it from the L-1 other leaves: S x (L-1) withdrawals at T + det. Each leaf
//    receives S withdrawals at T + det + lat and processes one per update delay d; the S-th, at
//    T + det + lat + S x d, empties its group (the last FIB change) and makes it withdraw its own
//    announcement from the S spines: another S x (L-1) withdrawals, which change nothing (the
//    spines had rejected those routes). Total: 2 x S x (L-1) = 18 withdrawals, 0 updates,
//    convergence det + lat + S x d.
//  unique: leaf-x had announced [leaf-x, b(x), leaf-0] with b(x) its best spine; a spine j !=
//    b(x) holds it as a valid 3-hop route, and with S >= 2 some spine does, so at T + det it
//    announces that detour to the L-1 leaves instead of withdrawing: at least L-1 UPDATEs, and
//    the hunt goes on until every detour has been tried. It still ends with nobody holding a
//    route, so every session that carried an announcement carries a withdrawal last: at least
//    the 2 x S x (L-1) withdrawals above, and it takes longer than rfc7938's convergence.
TEST(BgpControlPlane, LeafWithdrawalPathHuntingFollowsTheAsnScheme) {
  const int L = 4, S = 3;
  struct Outcome {
    uint64_t updates, withdrawals;
    Time convergence;
  };
  auto run = [&](const std::string& scheme) {
    Fixture f(leafSpineSpec(L, S, 1), testBgp(scheme));
    f.startAndRun();
    const Groups healthy = f.groups();
    const NodeId leaf0 = f.node("leaf-0");
    const Time t = f.sim.now() + 1_ms;
    Script script(f.sim, *f.cp);
    script.at(t, Script::Op::SwitchDown, leaf0);
    f.sim.run();
    EXPECT_TRUE(f.cp->converged());
    // Afterwards nobody routes toward leaf-0 and every other group is as it was.
    for (const auto& [key, ports] : f.groups()) {
      if (key.first == leaf0) continue;
      if (key.second == leaf0) {
        EXPECT_TRUE(ports.empty()) << scheme << ": " << f.topo->node(key.first).name
                                   << " keeps a route to leaf-0";
      } else {
        EXPECT_EQ(ports, healthy.at(key)) << scheme;
      }
    }
    const auto& fs = f.cp->failureStats().at(0);
    return Outcome{fs.updatesSent, fs.withdrawalsSent, fs.convergence()};
  };
  const Time det = 150_us, lat = 1_us, d = 50_us;
  const Outcome shared = run("rfc7938");
  EXPECT_EQ(shared.updates, 0u);
  EXPECT_EQ(shared.withdrawals, static_cast<uint64_t>(2 * S * (L - 1)));
  EXPECT_EQ(shared.convergence, det + lat + d * S);
  const Outcome unique = run("unique");
  std::printf(
      "[ bgp ] leaf-0 fails, leaf-spine %dx%d: rfc7938 %llu updates %llu withdrawals %.1f us; "
      "unique %llu updates %llu withdrawals %.1f us\n",
      L, S, static_cast<unsigned long long>(shared.updates),
      static_cast<unsigned long long>(shared.withdrawals), shared.convergence.micros(),
      static_cast<unsigned long long>(unique.updates), static_cast<unsigned long long>(unique.withdrawals),
      unique.convergence.micros());
  EXPECT_GE(unique.updates, static_cast<uint64_t>(L - 1)) << "unique ASNs: the spines hunt through detours";
  EXPECT_GE(unique.withdrawals, static_cast<uint64_t>(2 * S * (L - 1)));
  EXPECT_GT(unique.convergence, shared.convergence);
}

// Two failures whose control-plane work overlaps in time are each charged with their own
// messages and FIB changes.
//  (a) Two planes of a rail-optimized fabric (separate BGP fabrics): a link fails in rail 0,
//      and 20 us later, while rail 0 is still converging, one in rail 1. Each must report what
//      it reports when it happens alone (the reference: the same run with only that failure).
//  (b) One leaf-spine, L = 4 leaves, S = 3 spines: leaf-0 -- spine-0 fails at T, leaf-3 --
//      spine-2 at T + 20 us. By hand (det 150 us, lat 1 us, d 50 us): at detection spine-0
//      withdraws leaf-0 from leaf-1..3 and spine-2 withdraws leaf-3 from leaf-0..2 (3 each; the
//      leaves' best AS_PATHs, [spine ASN, leaf], do not change, so nothing else is sent). A's
//      withdrawals reach leaf-1..3 at T + 151 us and are processed at T + 201 us: A converges
//      in det + lat + d = 201 us, as alone. B's reach leaf-0..2 at T + 171 us; leaf-0 processes
//      it at T + 221 us, but leaf-1 and leaf-2 are busy with A's until T + 201 us and process it
//      at T + 251 us: B converges in 251 - 20 = 231 us, d - 20 us later than alone.
TEST(BgpControlPlane, OverlappingFailuresAreChargedToTheirOwnEvent) {
  using Op = Script::Op;
  struct Event {
    std::string a, b;
    Time at;
  };
  auto run = [](const TopologySpec& spec, const std::vector<Event>& events) {
    Fixture f(spec, testBgp());
    f.startAndRun();
    const Time t0 = f.sim.now() + 1_ms;
    Script script(f.sim, *f.cp);
    for (const auto& e : events) script.at(t0 + e.at, Op::LinkDown, f.linkBetween(e.a, e.b));
    f.sim.run();
    EXPECT_TRUE(f.cp->converged());
    uint64_t updates = 0, withdrawals = 0;
    for (const auto& fs : f.cp->failureStats()) {
      updates += fs.updatesSent;
      withdrawals += fs.withdrawalsSent;
    }
    // Conservation: every message is charged to exactly one event (nothing else ran).
    EXPECT_EQ(updates, f.cp->updatesSent() - f.cp->startStats().updatesSent);
    EXPECT_EQ(withdrawals, f.cp->withdrawalsSent() - f.cp->startStats().withdrawalsSent);
    return f.cp->failureStats();
  };
  // (a) separate planes.
  const TopologySpec rails = railSpec(2, false, TopologyKind::LeafSpine);
  const Event a{"rail0-leaf-0", "rail0-spine-0", Time::zero()};
  const Event b{"rail1-leaf-1", "rail1-spine-1", 20_us};
  const auto both = run(rails, {a, b});
  const auto aloneA = run(rails, {a});
  const auto aloneB = run(rails, {Event{b.a, b.b, Time::zero()}});
  ASSERT_EQ(both.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const auto& x = both[i];
    const auto& ref = i == 0 ? aloneA[0] : aloneB[0];
    EXPECT_EQ(x.updatesSent, ref.updatesSent) << "rail " << i;
    EXPECT_EQ(x.withdrawalsSent, ref.withdrawalsSent) << "rail " << i;
    EXPECT_EQ(x.convergence(), ref.convergence()) << "rail " << i;
    EXPECT_EQ(x.fibChanged, ref.fibChanged) << "rail " << i;
    // Each rail is a 3 x 2 leaf-spine: the spine withdraws the leaf from the 2 other leaves.
    EXPECT_EQ(x.withdrawalsSent, 2u) << "rail " << i;
    EXPECT_EQ(x.convergence(), 150_us + 1_us + 50_us) << "rail " << i;
  }
  // (b) one plane, hand-derived.
  const auto ls =
      run(leafSpineSpec(4, 3, 1), {{"leaf-0", "spine-0", Time::zero()}, {"leaf-3", "spine-2", 20_us}});
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(ls[0].updatesSent, 0u);
  EXPECT_EQ(ls[0].withdrawalsSent, 3u);
  EXPECT_EQ(ls[0].convergence(), 201_us);
  EXPECT_EQ(ls[1].updatesSent, 0u);
  EXPECT_EQ(ls[1].withdrawalsSent, 3u);
  EXPECT_EQ(ls[1].convergence(), 231_us);
}

// The default failure detection is BFD as data-centre fabrics run it (RFC 5880 leaves the
// timers to the operator; typical deployments use 100-300 ms intervals with a multiplier of 3),
// not the microsecond timers the tests above use to stay short.
TEST(BgpControlPlane, DefaultBfdTimersAreTheDataCentreRange) {
  const BgpSpec def;
  EXPECT_EQ(def.detection, "bfd");
  EXPECT_EQ(def.bfdMultiplier, 3);
  EXPECT_GE(def.bfdInterval, 100_ms);
  EXPECT_LE(def.bfdInterval, 300_ms);
}
