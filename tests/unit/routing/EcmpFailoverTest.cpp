// EcmpFib under failures: local fast failover (a dead port leaves every group of its switch and
// nowhere else), the change listener, resilient hashing checked flow by flow against the
// bucket-count argument and the hash-mod-n scheme's expectation, and weighted ECMP checked
// against capacities derived by hand for a fat-tree with one failed link.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/FlowHash.h"
#include "sim/topology/Topology.h"
#include "sim/topology/TopologyBuilder.h"
#include "tests/support/ShapeSpecs.h"

using namespace fabricsim;

namespace {

using testsupport::fatTree;
using testsupport::leafSpine;

/// The port of `from` whose peer is `to`.
PortId portToward(const Topology& topo, NodeId from, NodeId to) {
  for (uint32_t lp = 0; lp < topo.degree(from); ++lp)
    if (topo.peerNode(topo.port(from, lp)) == to) return topo.port(from, lp);
  return kInvalid;
}

/// Every (switch, leaf) forwarding group of a fib, keyed by (switch, leaf).
std::map<std::pair<NodeId, NodeId>, std::vector<PortId>> allGroups(const Topology& topo, const EcmpFib& fib) {
  std::map<std::pair<NodeId, NodeId>, std::vector<PortId>> m;
  for (NodeId sw = static_cast<NodeId>(topo.hostCount()); sw < topo.nodeCount(); ++sw)
    for (NodeId leaf : fib.leavesOf(fib.component(sw))) {
      const auto g = fib.groupToLeaf(sw, leaf);
      m[{sw, leaf}] = std::vector<PortId>(g.begin(), g.end());
    }
  return m;
}

/// Slots per member in a slot table.
std::map<PortId, int> slotCounts(std::span<const PortId> slots) {
  std::map<PortId, int> c;
  for (PortId p : slots) ++c[p];
  return c;
}

}  // namespace

TEST(EcmpFailover, DeadPortLeavesEveryGroupOfItsSwitchAndNowhereElse) {
  const TopologySpec spec = fatTree(4);
  const auto topo = buildTopology(spec);
  EcmpFib fib(*topo, 3);
  std::vector<NodeId> heard;
  fib.onChange([&](NodeId sw) { heard.push_back(sw); });
  const auto before = allGroups(*topo, fib);
  const NodeId agg = topo->findNode("agg-0-0");
  const NodeId core = topo->findNode("core-0");
  const PortId p = portToward(*topo, agg, core);
  ASSERT_NE(p, kInvalid);

  fib.setLocalPortUp(p, false);
  EXPECT_FALSE(fib.localPortUp(p));
  EXPECT_EQ(heard, std::vector<NodeId>{agg});
  const auto after = allGroups(*topo, fib);
  int touched = 0;
  for (const auto& [key, g] : before) {
    std::vector<PortId> expect = g;
    if (key.first == agg) expect.erase(std::remove(expect.begin(), expect.end(), p), expect.end());
    touched += expect != g;
    EXPECT_EQ(after.at(key), expect) << topo->node(key.first).name << " -> " << topo->node(key.second).name;
    // The control plane's view is unchanged.
    const auto inst = fib.routeToLeaf(key.first, key.second);
    EXPECT_EQ(std::vector<PortId>(inst.begin(), inst.end()), g);
  }
  // agg-0-0 reaches the 6 edges of the other three pods through its two cores: 6 groups lose p.
  EXPECT_EQ(touched, 6);
  // No tuple is hashed into the dead port any more.
  std::mt19937_64 rng(1);
  for (uint32_t nic = 0; nic < topo->nicCount(); ++nic)
    for (int i = 0; i < 50; ++i) EXPECT_NE(fib.nextHop(agg, nic, rng()), p);

  // Idempotent: a second down changes nothing and is not heard.
  heard.clear();
  fib.setLocalPortUp(p, false);
  EXPECT_TRUE(heard.empty());
  // Repair: the shortest-path groups come back exactly.
  fib.setLocalPortUp(p, true);
  EXPECT_EQ(heard, std::vector<NodeId>{agg});
  EXPECT_EQ(allGroups(*topo, fib), before);
}

TEST(EcmpFailover, AllMembersDeadIsABlackHoleUntilRepair) {
  // core-0 has one port into pod 0 (to agg-0-0): with it dead, core-0 has no route to pod 0's
  // leaves (empty group, kInvalid next hop) and still routes to the other pods.
  const TopologySpec spec = fatTree(4);
  const auto topo = buildTopology(spec);
  EcmpFib fib(*topo, 3);
  const NodeId core = topo->findNode("core-0");
  const PortId p = portToward(*topo, core, topo->findNode("agg-0-0"));
  fib.setLocalPortUp(p, false);
  for (uint32_t nic = 0; nic < topo->nicCount(); ++nic) {
    const bool pod0 = topo->node(topo->attachedSwitch(nic)).name.rfind("edge-0-", 0) == 0;
    EXPECT_EQ(fib.group(core, nic).empty(), pod0) << "nic " << nic;
    if (pod0)
      EXPECT_EQ(fib.nextHop(core, nic, 12345), kInvalid);
    else
      EXPECT_NE(fib.nextHop(core, nic, 12345), kInvalid);
  }
  fib.setLocalPortUp(p, true);
  for (uint32_t nic = 0; nic < topo->nicCount(); ++nic) EXPECT_NE(fib.nextHop(core, nic, 12345), kInvalid);
}

TEST(EcmpFailover, InstalledRoutesAreFilteredByLocalPortState) {
  // A control plane installing a group with a locally dead port: the port never forwards; when
  // it comes back, the installed group forwards whole. Changes are heard once, no-ops never.
  const TopologySpec spec = leafSpine(2, 4, 2);
  const auto topo = buildTopology(spec);
  EcmpFib fib(*topo, 9);
  int heard = 0;
  fib.onChange([&](NodeId) { ++heard; });
  const NodeId leaf0 = topo->findNode("leaf-0"), leaf1 = topo->findNode("leaf-1");
  std::vector<PortId> up;
  for (int s = 0; s < 4; ++s)
    up.push_back(portToward(*topo, leaf0, topo->findNode("spine-" + std::to_string(s))));
  fib.setLocalPortUp(up[1], false);
  EXPECT_EQ(heard, 1);
  fib.setRoute(leaf0, leaf1, std::vector<PortId>{up[1], up[2]});
  EXPECT_EQ(heard, 2);
  const auto g = fib.groupToLeaf(leaf0, leaf1);
  EXPECT_EQ(std::vector<PortId>(g.begin(), g.end()), std::vector<PortId>{up[2]});
  const auto inst = fib.routeToLeaf(leaf0, leaf1);
  EXPECT_EQ(std::vector<PortId>(inst.begin(), inst.end()), (std::vector<PortId>{up[1], up[2]}));
  fib.setRoute(leaf0, leaf1, std::vector<PortId>{up[2], up[1]});  // the same group: nothing changes
  EXPECT_EQ(heard, 2);
  fib.setRoute(leaf0, leaf1, std::vector<PortId>{up[1]});  // only the dead port: no route
  EXPECT_EQ(fib.nextHop(leaf0, static_cast<uint32_t>(topo->nicCount() - 1), 77), kInvalid);
  fib.setLocalPortUp(up[1], true);
  const auto back = fib.groupToLeaf(leaf0, leaf1);
  EXPECT_EQ(std::vector<PortId>(back.begin(), back.end()), std::vector<PortId>{up[1]});
  EXPECT_EQ(heard, 4);
}

namespace {

/// Ports leaf-0 chooses for `tuples` toward a NIC on leaf-1.
std::vector<PortId> choices(const EcmpFib& fib, NodeId leaf, uint32_t dst,
                            const std::vector<uint64_t>& tuples) {
  std::vector<PortId> v;
  v.reserve(tuples.size());
  for (uint64_t t : tuples) v.push_back(fib.nextHop(leaf, dst, t));
  return v;
}

}  // namespace

TEST(EcmpFailover, ResilientHashingMovesOnlyTheFlowsOfTheDeadMember) {
  // Leaf-spine, n = 8 spines, B = 256 buckets (32 per member). Removing one member moves exactly
  // its flows (checked per flow), a fraction 32/256 = 1/8 of them; its 32 buckets go evenly to
  // the 7 others (256 = 4 x 37 + 3 x 36). When it comes back, it takes 32 buckets, 4 or 5 from
  // each other member: again exactly 1/8 of the flows move, all of them onto it.
  // F = 20000 random flows: the moved count is binomial, standard error sqrt(p(1-p)/F) = 0.0023;
  // we allow 4 standard errors.
  constexpr int kFlows = 20000;
  const TopologySpec spec = leafSpine(2, 8, 2);
  const auto topo = buildTopology(spec);
  EcmpFib::Options o;
  o.resilientBuckets = 256;
  EcmpFib fib(*topo, 4, o);
  const NodeId leaf0 = topo->findNode("leaf-0"), leaf1 = topo->findNode("leaf-1");
  const uint32_t dst = static_cast<uint32_t>(topo->nicCount() - 1);
  ASSERT_EQ(fib.slotsToLeaf(leaf0, leaf1).size(), 256u);
  for (const auto& [port, c] : slotCounts(fib.slotsToLeaf(leaf0, leaf1))) EXPECT_EQ(c, 32);
  std::mt19937_64 rng(11);
  std::vector<uint64_t> tuples(kFlows);
  for (auto& t : tuples) t = rng();
  const auto before = choices(fib, leaf0, dst, tuples);
  const PortId dead = fib.groupToLeaf(leaf0, leaf1)[2];
  fib.setLocalPortUp(dead, false);
  const auto during = choices(fib, leaf0, dst, tuples);
  int moved = 0;
  for (int i = 0; i < kFlows; ++i) {
    if (before[i] == dead) {
      EXPECT_NE(during[i], dead);
      ++moved;
    } else {
      ASSERT_EQ(during[i], before[i]) << "flow " << i << " moved although its member is alive";
    }
  }
  const double se = std::sqrt(1.0 / 8 * 7.0 / 8 / kFlows);
  EXPECT_NEAR(static_cast<double>(moved) / kFlows, 1.0 / 8, 4 * se);
  const auto counts = slotCounts(fib.slotsToLeaf(leaf0, leaf1));
  EXPECT_EQ(counts.size(), 7u);
  for (const auto& [port, c] : counts) EXPECT_TRUE(c == 36 || c == 37) << c;

  fib.setLocalPortUp(dead, true);
  const auto after = choices(fib, leaf0, dst, tuples);
  int returned = 0;
  for (int i = 0; i < kFlows; ++i) {
    if (after[i] != during[i]) {
      ASSERT_EQ(after[i], dead) << "flow " << i << " moved to a member other than the one that came back";
      ++returned;
    }
  }
  EXPECT_NEAR(static_cast<double>(returned) / kFlows, 1.0 / 8, 4 * se);
  for (const auto& [port, c] : slotCounts(fib.slotsToLeaf(leaf0, leaf1))) EXPECT_EQ(c, 32);
}

TEST(EcmpFailover, WithoutResilienceAGroupChangeRehashesManyFlows) {
  // The hash-mod-n scheme as FlowHash::select implements it (index floor(h n / 2^64) of a uniform
  // 64-bit h, i.e. floor(u n) for u uniform in [0,1), over the sorted members; a true h mod n would
  // move about (n-1)/n). Removing member r of n, a flow stays iff M[floor(u n)] == M'[floor(u (n-1))],
  // M' = M without r. The expected moved fraction is the measure of the u where they differ,
  // integrated here on a grid of 2^20 points (the breakpoints are multiples of 1/(n(n-1)) = 1/56, so
  // the grid error is below 1e-5). Observed over F = 20000 flows, binomial standard error, 4 allowed.
  constexpr int kFlows = 20000;
  constexpr int n = 8;
  const TopologySpec spec = leafSpine(2, n, 2);
  const auto topo = buildTopology(spec);
  const NodeId leaf0 = topo->findNode("leaf-0"), leaf1 = topo->findNode("leaf-1");
  const uint32_t dst = static_cast<uint32_t>(topo->nicCount() - 1);
  std::mt19937_64 rng(12);
  std::vector<uint64_t> tuples(kFlows);
  for (auto& t : tuples) t = rng();
  for (int r : {0, 3}) {
    std::vector<int> M(n), Mr;
    for (int i = 0; i < n; ++i) M[i] = i;
    for (int i = 0; i < n; ++i)
      if (i != r) Mr.push_back(i);
    constexpr int kGrid = 1 << 20;
    int differ = 0;
    for (int g = 0; g < kGrid; ++g) {
      const double u = (g + 0.5) / kGrid;
      differ += M[static_cast<int>(u * n)] != Mr[static_cast<int>(u * (n - 1))];
    }
    const double expected = static_cast<double>(differ) / kGrid;
    EXPECT_GT(expected, 2.0 / n);  // at least twice the 1/n that resilient hashing moves

    EcmpFib fib(*topo, 4);
    const auto before = choices(fib, leaf0, dst, tuples);
    fib.setLocalPortUp(fib.groupToLeaf(leaf0, leaf1)[r], false);
    const auto during = choices(fib, leaf0, dst, tuples);
    int moved = 0;
    for (int i = 0; i < kFlows; ++i) moved += during[i] != before[i];
    const double se = std::sqrt(expected * (1 - expected) / kFlows);
    EXPECT_NEAR(static_cast<double>(moved) / kFlows, expected, 4 * se) << "member " << r << " removed";
  }
}

namespace {

struct Wcmp {
  explicit Wcmp(BitRate edgeAgg, BitRate aggCore, int k = 8) {
    spec = fatTree(k);
    spec.links.tierSpeeds = {edgeAgg, aggCore};
    topo = buildTopology(spec);
    EcmpFib::Options o;
    o.wcmp = true;
    fib = std::make_unique<EcmpFib>(*topo, 21, o);
  }
  NodeId node(const std::string& name) const { return topo->findNode(name); }
  /// Slots per next-hop switch name at `sw` toward `leaf`.
  std::map<std::string, int> weights(const std::string& sw, const std::string& leaf) const {
    std::map<std::string, int> w;
    for (const auto& [p, c] : slotCounts(fib->slotsToLeaf(node(sw), node(leaf))))
      w[topo->node(topo->peerNode(p)).name] = c;
    return w;
  }
  void failLink(const std::string& a, const std::string& b, bool up = false) {
    fib->setLocalPortUp(portToward(*topo, node(a), node(b)), up);
    fib->setLocalPortUp(portToward(*topo, node(b), node(a)), up);
  }
  TopologySpec spec;
  std::unique_ptr<Topology> topo;
  std::unique_ptr<EcmpFib> fib;
};

}  // namespace

TEST(EcmpFailover, WcmpWeightsFollowCapacityAfterALinkFails) {
  // Fat-tree k=8, edge-agg links 400G, agg-core links 100G: every edge has 4 x 400G up, every
  // aggregation switch 4 x 100G. agg-0-0 connects to core-0..3. Fail agg-0-0 -- core-0.
  // By hand, toward a leaf of another pod (edge-1-0):
  //   agg-0-0: 3 live cores x 100G = 300G; agg-0-1..3: 400G.
  //   edge-0-0: min(400, 300) : min(400, 400) x 3 = 3 : 4 : 4 : 4 (15 slots).
  // Toward a leaf of pod 0 (edge-0-0) from pod 1:
  //   core-0 has no port left into pod 0: capacity 0 (empty group).
  //   agg-1-0 (cores 0..3): core-0 drops out, 3 x 100G = 300G; agg-1-1..3: 400G.
  //   edge-1-0: 3 : 4 : 4 : 4, the 3 on agg-1-0.
  Wcmp w(BitRate::gbps(400), BitRate::gbps(100));
  EXPECT_EQ(w.weights("edge-0-0", "edge-1-0"),
            (std::map<std::string, int>{{"agg-0-0", 1}, {"agg-0-1", 1}, {"agg-0-2", 1}, {"agg-0-3", 1}}));
  std::vector<NodeId> heard;
  w.fib->onChange([&](NodeId sw) { heard.push_back(sw); });
  w.failLink("agg-0-0", "core-0");
  EXPECT_EQ(w.weights("edge-0-0", "edge-1-0"),
            (std::map<std::string, int>{{"agg-0-0", 3}, {"agg-0-1", 4}, {"agg-0-2", 4}, {"agg-0-3", 4}}));
  EXPECT_EQ(w.weights("edge-1-0", "edge-0-0"),
            (std::map<std::string, int>{{"agg-1-0", 3}, {"agg-1-1", 4}, {"agg-1-2", 4}, {"agg-1-3", 4}}));
  EXPECT_EQ(w.weights("agg-1-0", "edge-0-0"),
            (std::map<std::string, int>{{"core-1", 1}, {"core-2", 1}, {"core-3", 1}}));
  EXPECT_TRUE(w.fib->groupToLeaf(w.node("core-0"), w.node("edge-0-0")).empty());
  EXPECT_EQ(w.fib->capacityToLeaf(w.node("edge-0-0"), w.node("edge-1-0")), 1500'000'000'000ULL);
  // Switches in pods other than 0 and 1 changed too (their edges' weights toward pod 0) and were
  // heard; core-4 (agg-x-1's cores, untouched) was not.
  EXPECT_NE(std::find(heard.begin(), heard.end(), w.node("edge-5-2")), heard.end());
  EXPECT_EQ(std::find(heard.begin(), heard.end(), w.node("core-4")), heard.end());
  // Traffic follows the weights: agg-0-0 gets 3/15 of the flows (binomial, 20000 flows, 4 s.e.).
  std::mt19937_64 rng(5);
  uint32_t dst = 0;
  while (w.topo->attachedSwitch(dst) != w.node("edge-1-0")) ++dst;
  int onAgg0 = 0;
  for (int i = 0; i < 20000; ++i)
    onAgg0 += w.topo->peerNode(w.fib->nextHop(w.node("edge-0-0"), dst, rng())) == w.node("agg-0-0");
  EXPECT_NEAR(onAgg0 / 20000.0, 0.2, 4 * std::sqrt(0.2 * 0.8 / 20000));
  // Repair: every group and weight as before.
  w.failLink("agg-0-0", "core-0", true);
  EXPECT_EQ(w.weights("edge-0-0", "edge-1-0"),
            (std::map<std::string, int>{{"agg-0-0", 1}, {"agg-0-1", 1}, {"agg-0-2", 1}, {"agg-0-3", 1}}));
  EXPECT_EQ(w.weights("edge-1-0", "edge-0-0"),
            (std::map<std::string, int>{{"agg-1-0", 1}, {"agg-1-1", 1}, {"agg-1-2", 1}, {"agg-1-3", 1}}));
}

TEST(EcmpFailover, WcmpWithEqualRatesKeepsEdgesEven) {
  // All links 100G: an edge's uplink caps what it can send through any aggregation switch
  // (min(100, 300) = min(100, 400) = 100), so the edges keep equal weights; only the remote
  // aggregation switch stops sending to core-0, which has no way into pod 0.
  Wcmp w(BitRate::gbps(100), BitRate::gbps(100));
  w.failLink("agg-0-0", "core-0");
  EXPECT_EQ(w.weights("edge-0-0", "edge-1-0"),
            (std::map<std::string, int>{{"agg-0-0", 1}, {"agg-0-1", 1}, {"agg-0-2", 1}, {"agg-0-3", 1}}));
  EXPECT_EQ(w.weights("agg-1-0", "edge-0-0"),
            (std::map<std::string, int>{{"core-1", 1}, {"core-2", 1}, {"core-3", 1}}));
  EXPECT_EQ(w.fib->capacityToLeaf(w.node("agg-1-0"), w.node("edge-0-0")), 300'000'000'000ULL);
}

TEST(EcmpFailover, ResilientWcmpRebalancesBucketsToTheWeights) {
  // Both: the 3 : 4 : 4 : 4 weights of the first WCMP test over 240 buckets are 48 : 64 : 64 : 64,
  // and only the buckets agg-0-0 gives up (60 - 48 = 12) move.
  TopologySpec spec = fatTree(8);
  spec.links.tierSpeeds = {BitRate::gbps(400), BitRate::gbps(100)};
  const auto topo = buildTopology(spec);
  EcmpFib::Options o;
  o.wcmp = true;
  o.resilientBuckets = 240;
  EcmpFib fib(*topo, 2, o);
  const NodeId edge = topo->findNode("edge-0-0"), far = topo->findNode("edge-1-0");
  const NodeId agg0 = topo->findNode("agg-0-0"), core0 = topo->findNode("core-0");
  const auto s0 = fib.slotsToLeaf(edge, far);
  const std::vector<PortId> before(s0.begin(), s0.end());
  fib.setLocalPortUp(portToward(*topo, agg0, core0), false);
  const auto s1 = fib.slotsToLeaf(edge, far);
  std::map<NodeId, int> c;
  int moved = 0;
  for (size_t b = 0; b < s1.size(); ++b) {
    ++c[topo->peerNode(s1[b])];
    moved += s1[b] != before[b];
  }
  EXPECT_EQ(c[agg0], 48);
  EXPECT_EQ(c[topo->findNode("agg-0-1")], 64);
  EXPECT_EQ(moved, 12);
}
