// ECMP hashing as switches do it, checked against counting arguments and the chi-square
// distribution: how n flows hashed onto m uplinks collide, hash polarisation with equal seeds
// and its absence with per-switch seeds, and the header fields that feed the hash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
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

std::vector<uint32_t> nicsOn(const Topology& topo, NodeId leaf) {
  std::vector<uint32_t> v;
  for (uint32_t nic = 0; nic < topo.nicCount(); ++nic)
    if (topo.attachedSwitch(nic) == leaf) v.push_back(nic);
  return v;
}

struct MeanSe {
  double mean = 0, se = 0;
};
MeanSe meanAndStandardError(const std::vector<double>& x) {
  double sum = 0, sq = 0;
  for (double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  for (double v : x) sq += (v - mean) * (v - mean);
  const double var = sq / static_cast<double>(x.size() - 1);
  return {mean, std::sqrt(var / static_cast<double>(x.size()))};
}

/// Pearson chi-square statistic of independence of an r x c contingency table.
double chiSquareIndependence(const std::vector<std::vector<int>>& t) {
  const size_t r = t.size(), c = t[0].size();
  std::vector<double> rows(r, 0), cols(c, 0);
  double n = 0;
  for (size_t i = 0; i < r; ++i)
    for (size_t j = 0; j < c; ++j) {
      rows[i] += t[i][j];
      cols[j] += t[i][j];
      n += t[i][j];
    }
  double chi = 0;
  for (size_t i = 0; i < r; ++i)
    for (size_t j = 0; j < c; ++j) {
      const double e = rows[i] * cols[j] / n;
      chi += (t[i][j] - e) * (t[i][j] - e) / e;
    }
  return chi;
}

uint32_t indexIn(std::span<const PortId> group, PortId p) {
  return static_cast<uint32_t>(std::find(group.begin(), group.end(), p) - group.begin());
}

}  // namespace

TEST(EcmpHashing, CollisionsOnUplinksMatchTheCountingArgument) {
  // n flows from distinct NICs of leaf-0 to distinct NICs of leaf-1, hashed by leaf-0 onto its
  // m = 8 spine uplinks. If the hash is uniform and independent per flow, the expected number of
  // uplinks left empty is m(1-1/m)^n and the expected number of flows that share their uplink with
  // another is n(1-(1-1/m)^(n-1)) (each other flow misses this one's uplink with probability 1-1/m).
  // Each of R = 2000 runs uses another run seed (per-switch seeds) and other QP numbers. The sample
  // mean of R independent runs is normal to a good approximation with the standard error computed
  // below; 4 standard errors leave a false failure probability of 6e-5.
  constexpr int kRuns = 2000;
  constexpr int m = 8;
  const TopologySpec spec = leafSpine(2, m, 16);
  const auto topo = buildTopology(spec);
  const NodeId leaf0 = topo->findNode("leaf-0");
  const NodeId leaf1 = topo->findNode("leaf-1");
  const auto src = nicsOn(*topo, leaf0);
  const auto dst = nicsOn(*topo, leaf1);
  ASSERT_EQ(src.size(), 16u);
  for (int n : {8, 16}) {
    std::vector<double> empty, sharing;
    for (int r = 0; r < kRuns; ++r) {
      const EcmpFib fib(*topo, static_cast<uint64_t>(r) * 7919 + 1);
      ASSERT_EQ(fib.groupToLeaf(leaf0, leaf1).size(), static_cast<size_t>(m));
      std::vector<int> load(topo->portCount(), 0);
      std::vector<PortId> used;
      for (int i = 0; i < n; ++i) {
        const uint32_t d = dst[static_cast<size_t>(i + r) % dst.size()];
        const PortId p = fib.nextHop(
            leaf0, d, fib.queuePairTuple(src[static_cast<size_t>(i)], d, 0, static_cast<uint16_t>(r)));
        ++load[p];
        used.push_back(p);
      }
      int e = 0, s = 0;
      for (PortId p : fib.groupToLeaf(leaf0, leaf1)) e += load[p] == 0;
      for (PortId p : used) s += load[p] >= 2;
      empty.push_back(e);
      sharing.push_back(s);
    }
    const double q = 1.0 - 1.0 / m;
    const double expectEmpty = m * std::pow(q, n);
    const double expectSharing = n * (1.0 - std::pow(q, n - 1));
    const MeanSe e = meanAndStandardError(empty), s = meanAndStandardError(sharing);
    EXPECT_NEAR(e.mean, expectEmpty, 4 * e.se) << "n = " << n << ", se " << e.se;
    EXPECT_NEAR(s.mean, expectSharing, 4 * s.se) << "n = " << n << ", se " << s.se;
    // The test is sharp enough to mean something: the standard errors are small against the means.
    EXPECT_LT(e.se, 0.05);
    EXPECT_LT(s.se, 0.1);
  }
}

namespace {

/// Flows from the NICs of edge-0-0 to the NICs of edge-(k-1)-0 of a fat-tree: the first-tier
/// choice (aggregation switch) and the second-tier choice (core, as an index in the aggregation
/// switch's group), counted in a (k/2) x (k/2) table; `paths` collects the distinct two-hop paths.
std::vector<std::vector<int>> twoTierChoices(const Topology& topo, const EcmpFib& fib, int flows,
                                             std::set<std::pair<PortId, PortId>>& paths) {
  const int half =
      static_cast<int>(fib.groupToLeaf(topo.findNode("edge-0-0"), topo.findNode("edge-0-1")).size());
  const NodeId edge = topo.findNode("edge-0-0");
  const NodeId far = topo.findNode("edge-" + std::to_string(2 * half - 1) + "-0");
  const auto src = nicsOn(topo, edge);
  const auto dst = nicsOn(topo, far);
  const auto g1 = fib.groupToLeaf(edge, far);
  std::vector<std::vector<int>> t(static_cast<size_t>(half), std::vector<int>(static_cast<size_t>(half), 0));
  for (int i = 0; i < flows; ++i) {
    const uint32_t s = src[static_cast<size_t>(i) % src.size()];
    const uint32_t d = dst[static_cast<size_t>(i / 4) % dst.size()];
    const uint64_t tuple = fib.queuePairTuple(s, d, 0, static_cast<uint16_t>(i / 16));
    const PortId p1 = fib.nextHop(edge, d, tuple);
    const NodeId agg = topo.peerNode(p1);
    const PortId p2 = fib.nextHop(agg, d, tuple);
    ++t[indexIn(g1, p1)][indexIn(fib.groupToLeaf(agg, far), p2)];
    paths.insert({p1, p2});
  }
  return t;
}

}  // namespace

TEST(EcmpHashing, EqualSeedsPolariseConsecutiveTiers) {
  // Fat-tree k=8: edge-0-0 hashes a flow onto one of m = 4 aggregation switches, which hashes it
  // onto one of its m = 4 cores. With equal seeds both hash engines compute the same function of
  // the same tuple over groups of the same size, so the second choice repeats the first (the
  // polarisation real fabrics suffer): all flows through a given aggregation switch leave it on
  // one core, and only m of the m x m two-hop paths carry traffic.
  constexpr int kFlows = 4000;
  const TopologySpec spec = fatTree(8);
  const auto topo = buildTopology(spec);
  EcmpFib::Options equal;
  equal.equalSeeds = true;
  for (uint64_t seed : {1ULL, 2ULL, 3ULL}) {
    const EcmpFib fib(*topo, seed, equal);
    std::set<std::pair<PortId, PortId>> paths;
    const auto t = twoTierChoices(*topo, fib, kFlows, paths);
    EXPECT_EQ(paths.size(), 4u) << "seed " << seed;
    for (size_t a = 0; a < 4; ++a) {
      int used = 0, flows = 0;
      for (int c : t[a]) {
        used += c > 0;
        flows += c;
      }
      EXPECT_EQ(used, 1) << "aggregation choice " << a;
      EXPECT_GT(flows, 0) << "the first tier still uses every aggregation switch";
    }
  }
}

TEST(EcmpHashing, PerSwitchSeedsMakeTierChoicesIndependent) {
  // Same flows with per-switch seeds: every one of the 16 two-hop paths carries traffic (each
  // path has probability 1/16 per flow, so one is missed by 4000 flows with probability
  // 16 (15/16)^4000 ~ 1e-111), and the 4 x 4 table of (first, second) choices follows the
  // independence hypothesis. Under independence the Pearson statistic has mean df = 9 and
  // variance 2 df = 18; over 20 run seeds the mean statistic has standard error sqrt(18/20) =
  // 0.95, and 4 standard errors allow 9 +- 3.8. Polarisation would give a statistic of 3 x 4000.
  constexpr int kFlows = 4000;
  constexpr int kSeeds = 20;
  const TopologySpec spec = fatTree(8);
  const auto topo = buildTopology(spec);
  double sum = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const EcmpFib fib(*topo, seed);
    std::set<std::pair<PortId, PortId>> paths;
    const auto t = twoTierChoices(*topo, fib, kFlows, paths);
    EXPECT_EQ(paths.size(), 16u) << "seed " << seed;
    sum += chiSquareIndependence(t);
  }
  EXPECT_NEAR(sum / kSeeds, 9.0, 4 * std::sqrt(18.0 / kSeeds));
}

TEST(EcmpHashing, WithoutTheSourcePortEveryQueuePairOfANicPairTakesOnePath) {
  // Fat-tree k=4, NIC 0 (pod 0) to the last NIC (pod 3): 4 shortest paths. 64 QPs differ only
  // in their RoCEv2 UDP source port. Hashing the source port, each QP picks a path uniformly, so
  // some path is unused with probability at most 4 (3/4)^64 ~ 4e-8; without it, every QP has the
  // same hash input and all share one path.
  const TopologySpec spec = fatTree(4);
  const auto topo = buildTopology(spec);
  const uint32_t a = 0, b = static_cast<uint32_t>(topo->nicCount() - 1);
  const auto pathsOf = [&](const EcmpFib& fib) {
    std::set<std::vector<PortId>> paths;
    for (uint16_t qp = 0; qp < 64; ++qp) {
      const uint64_t t = fib.queuePairTuple(a, b, 0, qp);
      std::vector<PortId> path;
      for (NodeId at = topo->attachedSwitch(a); !topo->isHost(at); at = topo->peerNode(path.back()))
        path.push_back(fib.nextHop(at, b, t));
      paths.insert(path);
    }
    return paths;
  };
  EcmpFib::Options noPort;
  noPort.hashFields = FlowHash::kAllFields & ~FlowHash::kSrcPort;
  EcmpFib all(*topo, 5), without(*topo, 5, noPort);
  EXPECT_EQ(pathsOf(all).size(), 4u);
  EXPECT_EQ(pathsOf(without).size(), 1u);
  // Hashing only the source port still separates QPs; only the addresses and protocol does not.
  EcmpFib::Options portOnly, addressesOnly;
  portOnly.hashFields = FlowHash::kSrcPort;
  addressesOnly.hashFields = FlowHash::kSrcIp | FlowHash::kDstIp | FlowHash::kProtocol;
  EXPECT_EQ(pathsOf(EcmpFib(*topo, 5, portOnly)).size(), 4u);
  EXPECT_EQ(pathsOf(EcmpFib(*topo, 5, addressesOnly)).size(), 1u);
}

TEST(EcmpHashing, HashFieldsFromTheRoutingSpec) {
  RoutingSpec r;
  EXPECT_EQ(EcmpFib::optionsFor(r).hashFields, FlowHash::kAllFields);
  EXPECT_FALSE(EcmpFib::optionsFor(r).equalSeeds);
  r.hashFields = {"dst_ip", "src_ip"};
  r.seeds = "equal";
  r.resilientBuckets = 128;
  r.wcmp = true;
  const EcmpFib::Options o = EcmpFib::optionsFor(r);
  EXPECT_EQ(o.hashFields, FlowHash::kSrcIp | FlowHash::kDstIp);
  EXPECT_TRUE(o.equalSeeds);
  EXPECT_EQ(o.resilientBuckets, 128u);
  EXPECT_TRUE(o.wcmp);
}
