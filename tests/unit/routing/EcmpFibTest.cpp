// EcmpFib checked against an independent shortest-path computation (Boost.Graph BFS on the
// switch-only graph), plus loop freedom, hash spread and table memory. Hashing statistics
// (collisions, polarisation, hash fields): EcmpHashingTest.cpp; failures, resilient hashing and
// WCMP: EcmpFailoverTest.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/FlowHash.h"
#include "sim/topology/Topology.h"
#include "sim/topology/TopologyBuilder.h"
#include "tests/support/SwitchBfs.h"

using namespace fabricsim;

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

TopologySpec fatTreeSpec(int radix, int pods = 0, int hostsPerEdge = 0) {
  TopologySpec s;
  s.name = "ft";
  s.kind = TopologyKind::FatTree;
  s.fatTree = FatTreeShape{radix, pods == 0 ? radix : pods, hostsPerEdge == 0 ? radix / 2 : hostsPerEdge};
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

struct Fixture {
  explicit Fixture(const TopologySpec& s, uint64_t seed = 7)
      : spec(s), topo(buildTopology(spec)), fib(*topo, seed) {}
  TopologySpec spec;
  std::unique_ptr<Topology> topo;
  EcmpFib fib;
};

/// Distances from every leaf (switch with a NIC attached), keyed by leaf node id.
std::vector<std::vector<uint32_t>> distancesFromLeaves(const Topology& topo) {
  std::vector<std::vector<uint32_t>> d(topo.nodeCount());
  for (uint32_t nic = 0; nic < topo.nicCount(); ++nic) {
    const NodeId leaf = topo.attachedSwitch(nic);
    if (d[leaf].empty()) d[leaf] = switchDistances(topo, leaf);
  }
  return d;
}

void checkGroupsAgainstBfs(const Fixture& f, const std::string& what) {
  const Topology& topo = *f.topo;
  const auto dist = distancesFromLeaves(topo);
  // The port view must agree with the Boost graph the distances were computed on.
  for (NodeId sw = static_cast<NodeId>(topo.hostCount()); sw < topo.nodeCount(); ++sw) {
    std::multiset<NodeId> viaGraph, viaPorts;
    for (auto [e, end] = boost::out_edges(sw, topo.graph()); e != end; ++e)
      viaGraph.insert(static_cast<NodeId>(boost::target(*e, topo.graph())));
    for (uint32_t p = 0; p < topo.degree(sw); ++p) viaPorts.insert(topo.peerNode(topo.port(sw, p)));
    ASSERT_EQ(viaGraph, viaPorts) << what << ": port view differs from the graph at " << topo.node(sw).name;
  }
  size_t checked = 0, unreachable = 0;
  for (uint32_t nic = 0; nic < topo.nicCount(); ++nic) {
    const NodeId leaf = topo.attachedSwitch(nic);
    const auto& d = dist[leaf];
    for (NodeId sw = static_cast<NodeId>(topo.hostCount()); sw < topo.nodeCount(); ++sw) {
      const bool bfsReachable = d[sw] != kUnreached;
      ASSERT_EQ(f.fib.reachable(sw, nic), bfsReachable)
          << what << ": reachable(" << topo.node(sw).name << ", nic " << nic << ")";
      if (!bfsReachable) {
        ++unreachable;
        continue;
      }
      const auto group = f.fib.group(sw, nic);
      if (sw == leaf) {
        EXPECT_TRUE(group.empty()) << what << ": group at the destination leaf must be empty";
        for (uint64_t t : {0ULL, 1ULL, 0xDEADBEEFULL}) {
          const PortId p = f.fib.nextHop(sw, nic, t);
          EXPECT_EQ(p, topo.peerPort(topo.nicPort(nic))) << what << ": leaf port to nic " << nic;
          EXPECT_EQ(topo.portNode(p), leaf);
          EXPECT_EQ(topo.peerNode(p), topo.hostOfNic(nic));
        }
        continue;
      }
      std::vector<PortId> expected;
      for (uint32_t lp = 0; lp < topo.degree(sw); ++lp) {
        const PortId gp = topo.port(sw, lp);
        const NodeId w = topo.peerNode(gp);
        if (!topo.isHost(w) && d[w] != kUnreached && d[w] + 1 == d[sw]) expected.push_back(gp);
      }
      std::vector<PortId> got(group.begin(), group.end());
      std::sort(got.begin(), got.end());
      ASSERT_FALSE(expected.empty());
      ASSERT_EQ(got, expected) << what << ": group at " << topo.node(sw).name << " toward nic " << nic
                               << " (distance " << d[sw] << ")";
      // nextHop always returns a member.
      for (uint64_t t : {3ULL, 12345ULL, 0xFFFFFFFFFFFFULL}) {
        const PortId p = f.fib.nextHop(sw, nic, t);
        EXPECT_TRUE(std::binary_search(expected.begin(), expected.end(), p));
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u) << what;
  if (what.find("no-shared") != std::string::npos) {
    EXPECT_GT(unreachable, 0u) << what << ": separate rails must be separate planes";
  }
}

/// Follows nextHop from every NIC's switch to every other NIC; returns the largest hop count.
void checkLoopFreedom(const Fixture& f, const std::string& what, int tuples) {
  const Topology& topo = *f.topo;
  const auto dist = distancesFromLeaves(topo);
  uint32_t diameter = 0;
  for (const auto& d : dist)
    for (uint32_t x : d)
      if (x != kUnreached) diameter = std::max(diameter, x);
  std::mt19937_64 rng(42);
  std::vector<uint8_t> seen(topo.nodeCount(), 0);
  for (uint32_t src = 0; src < topo.nicCount(); ++src) {
    const NodeId start = topo.attachedSwitch(src);
    for (uint32_t dst = 0; dst < topo.nicCount(); ++dst) {
      if (!f.fib.reachable(start, dst)) continue;
      for (int k = 0; k < tuples; ++k) {
        const uint64_t tuple = rng();
        std::fill(seen.begin(), seen.end(), 0);
        NodeId at = start;
        uint32_t hops = 0;  // switch-to-switch hops
        for (;;) {
          ASSERT_FALSE(seen[at]) << what << ": loop at " << topo.node(at).name << " from nic " << src
                                 << " to nic " << dst;
          seen[at] = 1;
          const PortId p = f.fib.nextHop(at, dst, tuple);
          ASSERT_EQ(topo.portNode(p), at) << what << ": nextHop returned a port of another node";
          const NodeId next = topo.peerNode(p);
          if (topo.isHost(next)) {
            ASSERT_EQ(p, topo.peerPort(topo.nicPort(dst))) << what << ": delivered to the wrong NIC";
            break;
          }
          ++hops;
          ASSERT_LE(hops, diameter) << what << ": path longer than the switch-graph diameter";
          at = next;
        }
        // Shortest: exactly the BFS distance of the source switch from the destination's leaf.
        EXPECT_EQ(hops, dist[topo.attachedSwitch(dst)][start]) << what;
      }
    }
  }
}

double chiSquareUniform(const std::vector<int>& counts, int total) {
  const double e = static_cast<double>(total) / static_cast<double>(counts.size());
  double chi = 0;
  for (int c : counts) chi += (c - e) * (c - e) / e;
  return chi;
}

FiveTuple randomTuple(std::mt19937_64& rng, uint32_t nics) {
  FiveTuple t;
  t.srcIp = FlowHash::nicAddress(static_cast<uint32_t>(rng() % nics));
  t.dstIp = FlowHash::nicAddress(static_cast<uint32_t>(rng() % nics));
  t.srcPort = static_cast<uint16_t>(rng());
  return t;
}

uint32_t indexIn(std::span<const PortId> group, PortId p) {
  return static_cast<uint32_t>(std::find(group.begin(), group.end(), p) - group.begin());
}

}  // namespace

TEST(EcmpFib, LeafSpineGroupsAreExactlyTheShortestPathPorts) {
  Fixture f(leafSpineSpec(4, 3, 2, 2));
  checkGroupsAgainstBfs(f, "leaf-spine 4x3 links_per_spine 2");
  // Leaf to remote leaf: all 3 spines x 2 parallel links.
  EXPECT_EQ(f.fib.group(f.topo->findNode("leaf-0"), 7).size(), 6u);
  Fixture g(leafSpineSpec(5, 4, 3, 1));
  checkGroupsAgainstBfs(g, "leaf-spine 5x4");
  // Two NICs per host on the same leaf: each NIC's last hop is its own cable.
  TopologySpec two = leafSpineSpec(3, 2, 2);
  two.hosts.gpusPerHost = 2;
  two.hosts.nicsPerHost = 2;
  Fixture h(two);
  ASSERT_EQ(h.topo->nicCount(), 12u);
  checkGroupsAgainstBfs(h, "leaf-spine 2 NICs per host");
  checkLoopFreedom(h, "leaf-spine 2 NICs per host", 2);
}

TEST(EcmpFib, FatTreeGroupsAreExactlyTheShortestPathPorts) {
  for (int k : {4, 8}) {
    Fixture f(fatTreeSpec(k));
    checkGroupsAgainstBfs(f, "fat-tree k=" + std::to_string(k));
  }
  Fixture partial(fatTreeSpec(8, 3));
  checkGroupsAgainstBfs(partial, "partial fat-tree k=8 pods=3");
  Fixture oversub(fatTreeSpec(4, 4, 3));
  checkGroupsAgainstBfs(oversub, "fat-tree k=4 hosts_per_edge=3");
}

TEST(EcmpFib, RailOptimizedGroupsAreExactlyTheShortestPathPorts) {
  {
    Fixture f(railSpec(2, true, TopologyKind::LeafSpine));
    checkGroupsAgainstBfs(f, "rail leaf-spine shared");
  }
  {
    Fixture f(railSpec(3, false, TopologyKind::LeafSpine));
    checkGroupsAgainstBfs(f, "rail leaf-spine no-shared");
    // One plane per rail: rail 0's leaf cannot reach NIC 1 (rail 1) of any host.
    EXPECT_FALSE(f.fib.reachable(f.topo->attachedSwitch(0), 1));
    EXPECT_NE(f.fib.component(f.topo->attachedSwitch(0)), f.fib.component(f.topo->attachedSwitch(1)));
  }
  {
    Fixture f(railSpec(2, true, TopologyKind::FatTree));
    checkGroupsAgainstBfs(f, "rail fat-tree shared");
    EXPECT_TRUE(f.fib.reachable(f.topo->attachedSwitch(0), 1));
  }
  {
    Fixture f(railSpec(2, false, TopologyKind::FatTree));
    checkGroupsAgainstBfs(f, "rail fat-tree no-shared");
  }
}

TEST(EcmpFib, ForwardingIsLoopFreeAndMinimal) {
  {
    Fixture f(leafSpineSpec(4, 3, 2, 2));
    checkLoopFreedom(f, "leaf-spine", 4);
  }
  {
    Fixture f(fatTreeSpec(4));
    checkLoopFreedom(f, "fat-tree k=4", 6);
  }
  {
    Fixture f(fatTreeSpec(8, 5));
    checkLoopFreedom(f, "partial fat-tree k=8 pods=5", 2);
  }
  {
    Fixture f(railSpec(2, true, TopologyKind::LeafSpine));
    checkLoopFreedom(f, "rail shared", 4);
  }
  {
    Fixture f(railSpec(2, false, TopologyKind::FatTree));
    checkLoopFreedom(f, "rail no-shared", 4);
  }
}

TEST(EcmpFib, HashSpreadsTuplesUniformlyOverTheGroup) {
  // 20,000 random five-tuples through the real table of a leaf toward a remote leaf whose
  // group has n members (n spines). Pearson chi-square against uniform, n - 1 degrees of
  // freedom; 0.1% critical values: df 7 -> 24.322, df 15 -> 37.697.
  constexpr int kTuples = 20'000;
  for (const auto& [n, critical] : std::vector<std::pair<int, double>>{{8, 24.322}, {16, 37.697}}) {
    Fixture f(leafSpineSpec(2, n, 2), 3);
    const NodeId leaf0 = f.topo->findNode("leaf-0");
    const uint32_t dst = 3;  // a NIC on leaf-1
    const auto group = f.fib.group(leaf0, dst);
    ASSERT_EQ(group.size(), static_cast<size_t>(n));
    std::vector<int> counts(n, 0);
    std::mt19937_64 rng(2024 + n);
    for (int i = 0; i < kTuples; ++i) {
      const uint64_t t = FlowHash::tupleHash(randomTuple(rng, 4));
      const uint32_t idx = indexIn(group, f.fib.nextHop(leaf0, dst, t));
      ASSERT_LT(idx, static_cast<uint32_t>(n));
      ++counts[idx];
    }
    const double chi = chiSquareUniform(counts, kTuples);
    EXPECT_LT(chi, critical) << "n = " << n;
    // Also the bare selector, with an arbitrary seed.
    std::vector<int> raw(n, 0);
    for (int i = 0; i < kTuples; ++i)
      ++raw[FlowHash::select(FlowHash::tupleHash(randomTuple(rng, 1000)), 99, n)];
    EXPECT_LT(chiSquareUniform(raw, kTuples), critical) << "select, n = " << n;
  }
}

TEST(EcmpFib, TablesAreAggregatedPerLeaf) {
  // k = 16: 1024 hosts, 320 switches. One 4-byte entry per (switch, host) would be 1.3 MB; the
  // per-leaf aggregation must stay below a quarter of that.
  Fixture f(fatTreeSpec(16), 1);
  const size_t switches = f.topo->switchCount();
  const size_t hosts = f.topo->hostCount();
  ASSERT_EQ(switches, 320u);
  ASSERT_EQ(hosts, 1024u);
  EXPECT_LT(f.fib.memoryBytes(), switches * hosts * 4 / 4);
  // Distinct groups per switch are few: edge 1 (up), agg 1 + 8, core 16.
  EXPECT_LE(f.fib.distinctGroups(), 128u * 1 + 128u * 9 + 64u * 16);
}

TEST(EcmpFib, SetRouteInstallsExactlyTheGivenSetAndSharesEqualGroups) {
  // A random walk of routes as a control plane installs them: mostly one member added at a
  // time (multipath routes arriving one by one, the case setRoute memoises), sometimes one
  // removed, the route cleared, or a random subset. Reference: the std::set this test holds
  // per (switch, leaf). Equal contents at one switch are one group, so after the walk the
  // distinct groups are at most the static ones plus the distinct (switch, contents) pairs
  // the walk produced; the listener hears exactly the calls that changed a route.
  Fixture f(fatTreeSpec(8), 3);
  const Topology& t = *f.topo;
  int heard = 0;
  f.fib.onChange([&](NodeId) { ++heard; });
  const size_t staticGroups = f.fib.distinctGroups();
  std::mt19937 rng(7);
  std::map<std::pair<NodeId, NodeId>, std::set<PortId>> want;
  std::set<std::pair<NodeId, std::set<PortId>>> distinct;
  int changes = 0;
  for (int step = 0; step < 20000; ++step) {
    const NodeId sw = static_cast<NodeId>(t.hostCount() + rng() % t.switchCount());
    const auto& leaves = f.fib.leavesOf(f.fib.component(sw));
    const NodeId leaf = leaves[rng() % leaves.size()];
    if (leaf == sw) continue;
    auto key = std::make_pair(sw, leaf);
    if (!want.count(key)) {
      const auto cur = f.fib.routeToLeaf(sw, leaf);
      want[key] = std::set<PortId>(cur.begin(), cur.end());
    }
    std::set<PortId> next = want[key];
    const PortId p = t.port(sw, rng() % t.degree(sw));
    const uint32_t kind = rng() % 10;
    if (kind < 6) {
      next.insert(p);
    } else if (kind < 8) {
      next.erase(p);
    } else if (kind == 8) {
      next.clear();
    } else {
      next.clear();
      for (uint32_t lp = 0; lp < t.degree(sw); ++lp)
        if (rng() % 2) next.insert(t.port(sw, lp));
    }
    std::vector<PortId> given(next.begin(), next.end());
    std::shuffle(given.begin(), given.end(), rng);  // setRoute takes any order
    const int before = heard;
    f.fib.setRoute(sw, leaf, given);
    changes += next != want[key];
    EXPECT_EQ(heard - before, next != want[key] ? 1 : 0) << "step " << step;
    want[key] = next;
    distinct.insert({sw, next});
    const auto got = f.fib.routeToLeaf(sw, leaf);
    ASSERT_EQ(std::vector<PortId>(got.begin(), got.end()), std::vector<PortId>(next.begin(), next.end()))
        << "step " << step;
  }
  for (const auto& [key, ports] : want) {  // nothing else moved meanwhile
    const auto got = f.fib.routeToLeaf(key.first, key.second);
    EXPECT_EQ(std::vector<PortId>(got.begin(), got.end()), std::vector<PortId>(ports.begin(), ports.end()));
  }
  EXPECT_GT(changes, 5000);  // the walk mostly changed routes
  EXPECT_LE(f.fib.distinctGroups(), staticGroups + distinct.size());
}
