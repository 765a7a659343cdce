// InfiniBand up/down routing on a fabric that is not a fat-tree (leaves in a ring, a spine
// missing links), and the subnet manager's reroute after a failure. Checked against invariants
// computed independently in the test: every NIC reaches every NIC, no path turns up after going
// down (ranks from the test's own BFS from the top tier), no path crosses a dead link once the
// new tables are in, and the old tables stay until the reroute delay has passed.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/SpecError.h"
#include "sim/config/TopologySpec.h"
#include "sim/core/Error.h"
#include "sim/core/Simulator.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/topology/TopologyBuilder.h"

using namespace fabricsim;

namespace {

/// 4 leaves (2 hosts each) in a ring (leaf i -- leaf i+1 mod 4), spine-0 cabled to every leaf,
/// spine-1 to leaves 0 and 1 only.
std::unique_ptr<Topology> ringWithSpines() {
  auto t = std::make_unique<Topology>(1, 1);
  for (int h = 0; h < 8; ++h) t->addHost("host-" + std::to_string(h));
  std::vector<NodeId> leaf, spine;
  for (int i = 0; i < 4; ++i) leaf.push_back(t->addSwitch("leaf-" + std::to_string(i), 1));
  for (int j = 0; j < 2; ++j) spine.push_back(t->addSwitch("spine-" + std::to_string(j), 2));
  const BitRate r = BitRate::gbps(100);
  for (int h = 0; h < 8; ++h) t->addLink(static_cast<NodeId>(h), leaf[h / 2], r, Time::us(1), 0);
  for (int i = 0; i < 4; ++i) t->addLink(leaf[i], leaf[(i + 1) % 4], r, Time::us(1), 1);
  for (int i = 0; i < 4; ++i) t->addLink(leaf[i], spine[0], r, Time::us(1), 1);
  for (int i = 0; i < 2; ++i) t->addLink(leaf[i], spine[1], r, Time::us(1), 1);
  t->finalize();
  return t;
}

TopologySpec ibSpec(const std::string& engine) {
  TopologySpec s;
  s.links.technology = "infiniband";
  s.routing.algorithm = "ib-sm";
  s.routing.ibSm.engine = engine;
  s.routing.ibSm.rerouteDelay = Time::us(100);
  return s;
}

/// Ranks computed here, independently of the engine: BFS distance from the top-tier switches.
std::vector<int> ranks(const Topology& t) {
  std::vector<int> r(t.nodeCount(), -1);
  std::deque<NodeId> q;
  int top = 0;
  for (NodeId v = static_cast<NodeId>(t.hostCount()); v < t.nodeCount(); ++v)
    top = std::max<int>(top, t.node(v).tier);
  for (NodeId v = static_cast<NodeId>(t.hostCount()); v < t.nodeCount(); ++v)
    if (t.node(v).tier == top) {
      r[v] = 0;
      q.push_back(v);
    }
  while (!q.empty()) {
    const NodeId v = q.front();
    q.pop_front();
    for (uint32_t p = 0; p < t.degree(v); ++p) {
      const NodeId w = t.peerNode(t.port(v, p));
      if (t.isHost(w) || r[w] >= 0) continue;
      r[w] = r[v] + 1;
      q.push_back(w);
    }
  }
  return r;
}

/// Walks every NIC pair; fails the test on an unreachable pair, a loop, a down-then-up turn or a
/// dead link (deadLink: a link that must not be used, or kInvalid).
void checkAllPairs(const Topology& t, const IbSubnetManager& sm, LinkId deadLink) {
  const std::vector<int> rank = ranks(t);
  auto up = [&](NodeId a, NodeId b) { return rank[b] < rank[a] || (rank[b] == rank[a] && b < a); };
  for (uint32_t s = 0; s < t.nicCount(); ++s)
    for (uint32_t d = 0; d < t.nicCount(); ++d) {
      if (t.hostOfNic(s) == t.hostOfNic(d)) continue;
      const uint32_t dlid = sm.lids().dlid(d, 0);
      NodeId at = t.attachedSwitch(s);
      bool wentDown = false;
      int hops = 0;
      while (!t.isHost(at)) {
        const PortId p = sm.lft().port(at, dlid);
        ASSERT_NE(p, kInvalid) << "no route at " << t.node(at).name << " for NIC " << d;
        EXPECT_NE(t.portLink(p), deadLink)
            << t.node(at).name << " still routes NIC " << d << " over the dead link";
        const NodeId next = t.peerNode(p);
        if (!t.isHost(next)) {
          if (up(at, next))
            EXPECT_FALSE(wentDown) << "down then up at " << t.node(at).name << " toward NIC " << d;
          else
            wentDown = true;
        }
        at = next;
        ASSERT_LT(++hops, 16) << "loop toward NIC " << d;
      }
      EXPECT_EQ(at, t.hostOfNic(d));
    }
}

TEST(IbUpDn, RoutesEveryPairOfANonClosFabricOnUpDownPathsOnly) {
  const auto t = ringWithSpines();
  const TopologySpec spec = ibSpec("auto");
  Simulator sim(1);
  EcmpFib fib(*t, 1);
  IbSubnetManager sm(sim, *t, spec, &fib);
  EXPECT_EQ(sm.engine(), "updn");  // a ring of leaves is no fat-tree
  checkAllPairs(*t, sm, kInvalid);
}

TEST(IbUpDn, DmodkRefusesAFabricThatIsNoFatTree) {
  const auto t = ringWithSpines();
  const TopologySpec spec = ibSpec("dmodk");
  Simulator sim(1);
  EcmpFib fib(*t, 1);
  try {
    IbSubnetManager sm(sim, *t, spec, &fib);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics().front().key, "routing.ib_sm.engine");
  }
}

// A link fails: the old tables stay until the reroute delay has passed (the sweep), then no path
// uses the dead link and every pair is still reachable on legal paths; when it comes back, the
// next sweep restores the original tables (the engines are deterministic on the same links).
TEST(IbSubnetManager, RerouteAfterTheDelayAvoidsTheDeadLinkAndRepairRestoresTheTables) {
  for (const char* engine : {"updn", "ftree", "dmodk"}) {
    TopologySpec spec = ibSpec(engine);
    spec.kind = TopologyKind::FatTree;
    spec.fatTree = FatTreeShape{4, 4, 2};
    const auto t = buildTopology(spec);
    Simulator sim(1);
    EcmpFib fib(*t, 1);
    IbSubnetManager sm(sim, *t, spec, &fib);
    const IbLft before = sm.lft();
    const NodeId agg = t->findNode("agg-0-0"), core = t->findNode("core-0");
    LinkId dead = kInvalid;
    for (uint32_t p = 0; p < t->degree(agg); ++p)
      if (t->peerNode(t->port(agg, p)) == core) dead = t->portLink(t->port(agg, p));
    ASSERT_NE(dead, kInvalid);
    const LinkId links[] = {dead};
    sm.linksChanged(links, false);
    sim.run(Time::us(99));
    EXPECT_TRUE(sm.lft() == before) << engine << ": tables changed before the reroute delay";
    sim.run(Time::us(101));
    EXPECT_EQ(sm.sweeps(), 1u) << engine;
    EXPECT_FALSE(sm.lft() == before) << engine;
    checkAllPairs(*t, sm, dead);
    sm.linksChanged(links, true);
    sim.run(Time::us(300));
    EXPECT_EQ(sm.sweeps(), 2u) << engine;
    EXPECT_TRUE(sm.lft() == before) << engine << ": repair did not restore the tables";
  }
}

}  // namespace
