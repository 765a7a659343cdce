// InfiniBand routing engines on full fat-trees, checked against hand-derived tables (D-mod-K on
// k=4), the published shift-permutation property of D-mod-K and ftree (no two flows of any shift
// permutation share a link), a counting argument for ftree's balance, and LMC path diversity.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/topology/TopologyBuilder.h"

using namespace fabricsim;

namespace {

TopologySpec fatTree(int k, const std::string& engine, int lmc = 0) {
  TopologySpec s;
  s.name = "ft";
  s.kind = TopologyKind::FatTree;
  s.fatTree = FatTreeShape{k, k, k / 2};
  s.links.technology = "infiniband";
  s.routing.algorithm = "ib-sm";
  s.routing.ibSm.engine = engine;
  s.routing.ibSm.lmc = lmc;
  return s;
}

struct Subnet {
  explicit Subnet(const TopologySpec& s)
      : spec(s), topo(buildTopology(spec)), fib(*topo, 1), sm(sim, *topo, spec, &fib) {}
  TopologySpec spec;
  std::unique_ptr<Topology> topo;
  Simulator sim{1};
  EcmpFib fib;
  IbSubnetManager sm;

  /// The directed ports a packet from NIC src to NIC dst's LID `offset` crosses, NIC port first.
  std::vector<PortId> path(uint32_t src, uint32_t dst, uint32_t offset = 0) const {
    const uint32_t dlid = sm.lids().dlid(dst, offset);
    std::vector<PortId> ports{topo->nicPort(src)};
    NodeId at = topo->peerNode(ports.back());
    while (!topo->isHost(at) && ports.size() < 16) {
      ports.push_back(sm.lft().port(at, dlid));
      if (ports.back() == kInvalid) break;
      at = topo->peerNode(ports.back());
    }
    return ports;
  }
  std::string nextNode(const std::string& sw, uint32_t dstNic) const {
    const PortId p = sm.lft().port(topo->findNode(sw), sm.lids().dlid(dstNic, 0));
    return p == kInvalid ? "none" : topo->node(topo->peerNode(p)).name;
  }
};

// D-mod-K on the k=4 fat-tree (16 hosts, m = k/2 = 2; host D sits on edge-<p>-<e> as host h with
// D = 4p + 2e + h). Derivation: a level-0 switch (edge) sends D up port D mod 2 = h, i.e. to
// agg-<own pod>-h (an edge's up ports are aggs 0,1 in port order); a level-1 switch (agg-p-a) sends
// D up port floor(D/2) mod 2 = e, i.e. to core-(2a + e) (agg a's up ports are cores 2a, 2a+1); going
// down there is one path: an edge to the host, an agg of D's pod to edge-<pod>-e, a core c to the
// agg of D's pod it is cabled to, agg-<pod>-(c/2).
// Tokens: d = down to the destination host; aN = agg-<this pod>-N; eN = edge-<this pod>-N; cN =
// core-N; pN = agg-N-<c/2> seen from core c. Columns are D = 0..15.
const std::map<std::string, std::string> kDmodkK4 = {
    {"edge-0-0", "d  d  a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 a0 a1"},
    {"edge-0-1", "a0 a1 d  d  a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 a0 a1"},
    {"edge-1-0", "a0 a1 a0 a1 d  d  a0 a1 a0 a1 a0 a1 a0 a1 a0 a1"},
    {"edge-1-1", "a0 a1 a0 a1 a0 a1 d  d  a0 a1 a0 a1 a0 a1 a0 a1"},
    {"edge-2-0", "a0 a1 a0 a1 a0 a1 a0 a1 d  d  a0 a1 a0 a1 a0 a1"},
    {"edge-2-1", "a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 d  d  a0 a1 a0 a1"},
    {"edge-3-0", "a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 d  d  a0 a1"},
    {"edge-3-1", "a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 a0 a1 d  d "},
    {"agg-0-0", "e0 e0 e1 e1 c0 c0 c1 c1 c0 c0 c1 c1 c0 c0 c1 c1"},
    {"agg-0-1", "e0 e0 e1 e1 c2 c2 c3 c3 c2 c2 c3 c3 c2 c2 c3 c3"},
    {"agg-1-0", "c0 c0 c1 c1 e0 e0 e1 e1 c0 c0 c1 c1 c0 c0 c1 c1"},
    {"agg-1-1", "c2 c2 c3 c3 e0 e0 e1 e1 c2 c2 c3 c3 c2 c2 c3 c3"},
    {"agg-2-0", "c0 c0 c1 c1 c0 c0 c1 c1 e0 e0 e1 e1 c0 c0 c1 c1"},
    {"agg-2-1", "c2 c2 c3 c3 c2 c2 c3 c3 e0 e0 e1 e1 c2 c2 c3 c3"},
    {"agg-3-0", "c0 c0 c1 c1 c0 c0 c1 c1 c0 c0 c1 c1 e0 e0 e1 e1"},
    {"agg-3-1", "c2 c2 c3 c3 c2 c2 c3 c3 c2 c2 c3 c3 e0 e0 e1 e1"},
    {"core-0", "p0 p0 p0 p0 p1 p1 p1 p1 p2 p2 p2 p2 p3 p3 p3 p3"},
    {"core-1", "p0 p0 p0 p0 p1 p1 p1 p1 p2 p2 p2 p2 p3 p3 p3 p3"},
    {"core-2", "p0 p0 p0 p0 p1 p1 p1 p1 p2 p2 p2 p2 p3 p3 p3 p3"},
    {"core-3", "p0 p0 p0 p0 p1 p1 p1 p1 p2 p2 p2 p2 p3 p3 p3 p3"},
};

/// The node a token of kDmodkK4 names, seen from switch `sw` for destination host `d`.
std::string resolve(const std::string& sw, const std::string& token, int d) {
  const char kind = token[0];
  const int n = token.size() > 1 ? token[1] - '0' : 0;
  if (kind == 'd') return "host-" + std::to_string(d);
  if (kind == 'c') return "core-" + std::to_string(n);
  if (kind == 'p') return "agg-" + std::to_string(n) + "-" + std::to_string((sw.back() - '0') / 2);
  const std::string pod = sw.substr(sw.find('-') + 1, 1);
  return std::string(kind == 'a' ? "agg-" : "edge-") + pod + "-" + std::to_string(n);
}

TEST(IbDmodk, K4TablesMatchTheHandDerivedOnes) {
  const Subnet f(fatTree(4, "dmodk"));
  ASSERT_EQ(f.sm.engine(), "dmodk");
  ASSERT_EQ(f.topo->switchCount(), kDmodkK4.size());
  for (const auto& [sw, row] : kDmodkK4) {
    std::istringstream in(row);
    std::string token;
    for (int d = 0; d < 16; ++d) {
      ASSERT_TRUE(in >> token);
      EXPECT_EQ(f.nextNode(sw, static_cast<uint32_t>(d)), resolve(sw, token, d))
          << sw << " toward host-" << d;
    }
  }
}

/// Largest number of flows of the shift permutation dst = (src + s) mod N on one directed link.
int worstLinkLoad(const Subnet& f, uint32_t s) {
  const auto n = static_cast<uint32_t>(f.topo->nicCount());
  std::vector<int> load(f.topo->portCount(), 0);
  int worst = 0;
  for (uint32_t src = 0; src < n; ++src)
    for (PortId p : f.path(src, (src + s) % n)) {
      EXPECT_NE(p, kInvalid);
      if (p != kInvalid) worst = std::max(worst, ++load[p]);
    }
  return worst;
}

// Published property (Zahavi et al. 2010; OpenSM's ftree is designed for it): on a full fat-tree,
// every shift permutation routes with at most one flow per directed link.
TEST(IbDmodk, EveryShiftPermutationIsContentionFreeOnK4AndK8) {
  for (int k : {4, 8}) {
    const Subnet f(fatTree(k, "dmodk"));
    for (uint32_t s = 1; s < f.topo->nicCount(); ++s)
      EXPECT_EQ(worstLinkLoad(f, s), 1) << "k=" << k << " s=" << s;
  }
}

TEST(IbFtree, EveryShiftPermutationIsContentionFreeOnK4AndK8) {
  for (int k : {4, 8}) {
    const Subnet f(fatTree(k, "ftree"));
    ASSERT_EQ(f.sm.engine(), "ftree");
    for (uint32_t s = 1; s < f.topo->nicCount(); ++s)
      EXPECT_EQ(worstLinkLoad(f, s), 1) << "k=" << k << " s=" << s;
  }
}

// Counting argument: a leaf has m = k/2 NICs and m up ports; the N - m destinations not on it all
// leave through an up port, and ftree balances them, so each up port carries exactly (N - m) / m.
TEST(IbFtree, EveryLeafUpPortCarriesTheSameNumberOfDestinations) {
  for (int k : {4, 8}) {
    const Subnet f(fatTree(k, "ftree"));
    const auto n = static_cast<uint32_t>(f.topo->nicCount());
    const uint32_t m = static_cast<uint32_t>(k / 2);
    for (NodeId sw = static_cast<NodeId>(f.topo->hostCount()); sw < f.topo->nodeCount(); ++sw) {
      if (f.topo->node(sw).tier != 1) continue;
      std::map<PortId, uint32_t> perPort;
      for (uint32_t d = 0; d < n; ++d) {
        const PortId p = f.sm.lft().port(sw, f.sm.lids().dlid(d, 0));
        if (!f.topo->isHost(f.topo->peerNode(p))) ++perPort[p];
      }
      ASSERT_EQ(perPort.size(), m) << f.topo->node(sw).name;
      for (const auto& [p, count] : perPort) EXPECT_EQ(count, (n - m) / m) << f.topo->node(sw).name;
    }
  }
}

// Rail-optimized with spines shared by the rails (the DGX SuperPOD layout): 2 rails, each with 2
// leaves of 4 hosts, every leaf wired to 2 shared spines by 2 parallel links (4 up ports, as many
// as its hosts). ftree routes destinations leaf by leaf, so a leaf sends the 4 NICs of any other
// leaf of its rail out of 4 distinct up ports (a leaf-to-leaf permutation is contention-free),
// whatever the NIC numbering: hosts are numbered host-major, so NIC index order interleaves the
// rails (a regression took every same-rail destination up one of the parallel links).
TEST(IbFtree, SharedSpineRailsSpreadEachRemoteLeafOverEveryUpPort) {
  TopologySpec s;
  s.name = "rails";
  s.kind = TopologyKind::RailOptimized;
  s.rail.rails = 2;
  s.rail.railKind = TopologyKind::LeafSpine;
  s.rail.leafSpine = LeafSpineShape{2, 2, 4, 2};
  s.rail.sharedSpines = true;
  s.hosts.gpusPerHost = 2;
  s.hosts.nicsPerHost = 2;
  s.links.technology = "infiniband";
  s.routing.algorithm = "ib-sm";
  s.routing.ibSm.engine = "ftree";
  const Subnet f(s);
  ASSERT_EQ(f.sm.engine(), "ftree");
  const auto n = static_cast<uint32_t>(f.topo->nicCount());
  ASSERT_EQ(n, 16u);
  std::map<NodeId, std::vector<uint32_t>> nicsOfLeaf;  // NIC r of host h is NIC 2h + r, on rail r
  for (uint32_t nic = 0; nic < n; ++nic) nicsOfLeaf[f.topo->attachedSwitch(nic)].push_back(nic);
  ASSERT_EQ(nicsOfLeaf.size(), 4u);
  int pairs = 0;
  for (const auto& [leaf, own] : nicsOfLeaf)
    for (const auto& [remote, dests] : nicsOfLeaf) {
      if (remote == leaf || own[0] % 2 != dests[0] % 2) continue;  // another leaf of the same rail
      std::set<PortId> ups;
      for (uint32_t d : dests) ups.insert(f.sm.lft().port(leaf, f.sm.lids().dlid(d, 0)));
      EXPECT_EQ(ups.size(), dests.size()) << f.topo->node(leaf).name << " -> " << f.topo->node(remote).name;
      ++pairs;
    }
  EXPECT_EQ(pairs, 4);  // 2 rails x 2 ordered leaf pairs
}

// LMC 2 gives each NIC four LIDs. From host-0 to host-15 (another pod) there are m^2 = 4 shortest
// paths on k=4 (one per core); the four LIDs must take all four under D-mod-K and ftree.
TEST(IbLmc, TheLidsOfOneDestinationTakeDistinctPaths) {
  for (const char* engine : {"dmodk", "ftree"}) {
    const Subnet f(fatTree(4, engine, 2));
    EXPECT_EQ(f.sm.lids().lidsPerPort(), 4u);
    std::set<std::vector<PortId>> paths;
    for (uint32_t l = 0; l < 4; ++l) {
      const auto p = f.path(0, 15, l);
      EXPECT_EQ(f.topo->peerNode(p.back()), f.topo->hostOfNic(15)) << engine;
      paths.insert(p);
    }
    EXPECT_EQ(paths.size(), 4u) << engine;
  }
}

// LIDs: 2^LMC per NIC from an aligned base, then one per switch, all in the unicast range.
TEST(IbLidMap, BasesAreAlignedAndDistinct) {
  const Subnet f(fatTree(4, "ftree", 3));
  std::set<uint32_t> used;
  for (uint32_t nic = 0; nic < f.topo->nicCount(); ++nic) {
    const uint32_t base = f.sm.lids().baseLid(nic);
    EXPECT_EQ(base % 8, 0u);
    EXPECT_GT(base, 0u);
    for (uint32_t l = 0; l < 8; ++l) EXPECT_TRUE(used.insert(base + l).second);
  }
  for (NodeId sw = static_cast<NodeId>(f.topo->hostCount()); sw < f.topo->nodeCount(); ++sw)
    EXPECT_TRUE(used.insert(f.sm.lids().switchLid(sw)).second);
  EXPECT_EQ(*used.rbegin(), 16u * 8 + 8 - 1 + 20);  // 16 NICs x 8 from LID 8, then 20 switch LIDs
}

}  // namespace
