// PfcSpreading against hand-worked fluid cases of PFC back-pressure without congestion control:
// an incast whose senders also carry victim flows (each victim is slowed to the congested QP's
// rate by its NIC's pause and round robin), a pause that spreads through a switch port to a NIC
// that sends nothing to the congested egress, a flow downstream of a victim (not paused: it takes
// the capacity the victim leaves), a flow of another class on a paused NIC (not paused), lossy
// classes (plain max-min), and which classes pause under which spec.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/flow/PfcSpreading.h"

using namespace fabricsim;

namespace {

using Hop = MaxMinSolver::Hop;
constexpr double C = 12.0;  // bytes/ps of every port (any positive value: rates scale with it)

/// A fabric of abstract ports: `roots[r]` says whether port r is a switch egress.
struct Case {
  std::vector<double> capacity;
  std::vector<bool> switchEgress;
  PfcSpreading pfc;
  uint32_t flows = 0;
  uint32_t port(double cap, bool egress) {
    capacity.push_back(cap);
    switchEgress.push_back(egress);
    return static_cast<uint32_t>(capacity.size() - 1);
  }
  void begin() { pfc.clear(capacity.size()); }
  uint32_t flow(std::initializer_list<uint32_t> path, bool pausing, uint8_t tc = 0) {
    std::vector<Hop> hops;
    for (uint32_t r : path) hops.push_back({r, 1.0f});
    pfc.addFlow(flows, hops, static_cast<uint32_t>(hops.size()), tc, pausing);
    return flows++;
  }
  bool solve() {
    return pfc.solve([&](uint32_t r) { return capacity[r]; }, [&](uint32_t r) { return switchEgress[r]; });
  }
};

// Rates come out of a handful of additions and divisions of exact binary fractions of C: the
// relative tolerance only absorbs rounding (1e-12), so any modelling difference fails.
void expectRate(const Case& c, uint32_t f, double expected, const char* what) {
  EXPECT_NEAR(c.pfc.rate(f), expected, 1e-12 * C) << what << " (flow " << f << ")";
}

}  // namespace

// N senders, each NIC with one QP into the incast egress (capacity C) and one victim QP to an
// idle receiver. FIFO argument: the egress serves its N equal arrival streams in proportion, C/N
// each; the ingress ports fill past XOFF and pause every NIC; while unpaused a NIC's round robin
// sends its two QPs alike, so its victim departs at its incast QP's rate: C/N, not the
// C - C/N that max-min (a congestion control keeping queues short) gives it.
TEST(PfcSpreading, VictimsSharingTheSendersNicsGetTheCongestedShare) {
  const int n = 4;
  for (bool lossless : {true, false}) {
    SCOPED_TRACE(lossless ? "lossless" : "lossy");
    Case c;
    const uint32_t root = c.port(C, true);
    std::vector<uint32_t> incast, victim;
    std::vector<uint32_t> nic, idle;
    for (int i = 0; i < n; ++i) {
      nic.push_back(c.port(C, false));
      idle.push_back(c.port(C, true));
    }
    c.begin();
    for (int i = 0; i < n; ++i) {
      incast.push_back(c.flow({nic[i], root}, lossless));
      victim.push_back(c.flow({nic[i], idle[i]}, lossless));
    }
    EXPECT_EQ(c.solve(), lossless);
    for (int i = 0; i < n; ++i) {
      expectRate(c, incast[i], C / n, "incast flow");
      expectRate(c, victim[i], lossless ? C / n : C - C / n, "victim flow");
    }
    if (lossless) {
      EXPECT_EQ(c.pfc.pausedPorts(), static_cast<uint32_t>(n));  // the N NIC uplinks
      EXPECT_EQ(c.pfc.victims(), static_cast<uint32_t>(n));
    }
  }
}

// The pause crosses a switch: the senders reach the incast egress through a leaf uplink U (8C:
// never full itself). U feeds the congested egress, so its ingress there pauses it; U's FIFO then
// holds a flow d1 from NIC D (which sends nothing to the incast) behind the incast packets: with
// equal service per paused ingress, d1 gets the incast QPs' C/N. D's packets backing up at U
// pause NIC D, whose round robin gives its other QP d2, which crosses no paused switch port, C/N
// too. A flow e from NIC E into sender 0's victim port is downstream of every pause: that port
// carries the victim's C/N and e takes the rest, C - C/N. A flow of another (lossy) class on NIC 0
// is not paused: NIC 0 sends it in the time its paused class leaves, C - 2 C/N.
TEST(PfcSpreading, PauseSpreadsThroughASwitchPortToAnotherNicAndNotDownstream) {
  const int n = 4;
  Case c;
  const uint32_t root = c.port(C, true);
  const uint32_t up = c.port(8 * C, true);
  std::vector<uint32_t> nic, idle;
  for (int i = 0; i < n; ++i) {
    nic.push_back(c.port(C, false));
    idle.push_back(c.port(C, true));
  }
  const uint32_t nicD = c.port(C, false), w = c.port(C, true), x = c.port(C, true);
  const uint32_t nicE = c.port(C, false);
  c.begin();
  std::vector<uint32_t> incast, victim;
  for (int i = 0; i < n; ++i) {
    incast.push_back(c.flow({nic[i], up, root}, true));
    victim.push_back(c.flow({nic[i], idle[i]}, true));
  }
  const uint32_t d1 = c.flow({nicD, up, w}, true);
  const uint32_t d2 = c.flow({nicD, x}, true);
  const uint32_t e = c.flow({nicE, idle[0]}, true);
  const uint32_t other = c.flow({nic[0], x}, false, 1);
  EXPECT_TRUE(c.solve());
  for (int i = 0; i < n; ++i) {
    expectRate(c, incast[i], C / n, "incast flow");
    expectRate(c, victim[i], C / n, "victim on a sender's NIC");
  }
  expectRate(c, d1, C / n, "victim queued at the paused uplink");
  expectRate(c, d2, C / n, "victim of the paused NIC D");
  expectRate(c, e, C - C / n, "flow downstream of a victim");
  // NIC 0 carries its incast and victim QPs at C/N each and the other class: C - 2C/N; the local
  // port x carries d2 (C/N) and it: C/N + C - 2C/N < C, so NIC 0 is its bottleneck.
  expectRate(c, other, C - 2 * C / n, "other class on a paused NIC");
  // Paused: U, the N sender NICs, NIC D, and NIC E: sender 0's victim port is full (C/N + C -
  // C/N) while NIC E could send e at C, so that port is a root too (with no victim behind it).
  EXPECT_EQ(c.pfc.pausedPorts(), static_cast<uint32_t>(n + 3));
}

// A flow held below the congested share elsewhere (its NIC has many QPs) does not spread the
// pause: its ingress never holds enough of the congested queue to pass XOFF. Sender A has six
// QPs (one into the egress, five to idle receivers): round robin gives each C/6, below the C/3
// the egress leaves to the other two senders (B, B'), whose own victims get C/3 from their
// paused NICs; A's victims keep C/6 (its NIC is not paused, it is simply full).
TEST(PfcSpreading, FlowsLimitedBelowTheShareDoNotPauseTheirNic) {
  Case c;
  const uint32_t root = c.port(C, true);
  const uint32_t nicA = c.port(C, false), nicB = c.port(C, false), nicB2 = c.port(C, false);
  std::vector<uint32_t> idle;
  for (int i = 0; i < 7; ++i) idle.push_back(c.port(C, true));
  c.begin();
  const uint32_t a = c.flow({nicA, root}, true);
  std::vector<uint32_t> aVictims;
  for (int i = 0; i < 5; ++i) aVictims.push_back(c.flow({nicA, idle[i]}, true));
  const uint32_t b = c.flow({nicB, root}, true), bv = c.flow({nicB, idle[5]}, true);
  const uint32_t b2 = c.flow({nicB2, root}, true), b2v = c.flow({nicB2, idle[6]}, true);
  EXPECT_TRUE(c.solve());
  expectRate(c, a, C / 6, "A's incast QP");
  for (uint32_t v : aVictims) expectRate(c, v, C / 6, "A's other QPs");
  // The egress: C - C/6 left to B and B': each (C - C/6) / 2.
  const double share = (C - C / 6) / 2;
  expectRate(c, b, share, "B's incast QP");
  expectRate(c, b2, share, "B' incast QP");
  expectRate(c, bv, share, "B's victim");
  expectRate(c, b2v, share, "B' victim");
  EXPECT_EQ(c.pfc.pausedPorts(), 2u);
}

TEST(PfcSpreading, PausingClassesFollowTheSpec) {
  TopologySpec s;
  s.links.technology = "roce";
  EXPECT_EQ(PfcSpreading::pausingClasses(s), 0);  // PFC off: lossy
  s.sw.pfc.enabled = true;
  s.sw.pfc.classMask = 0x09;
  EXPECT_EQ(PfcSpreading::pausingClasses(s), 0x09);
  s.congestionControl.algorithm = "dcqcn";  // its converged rates keep queues below XOFF
  EXPECT_EQ(PfcSpreading::pausingClasses(s), 0);
  TopologySpec ib;
  ib.links.technology = "infiniband";
  EXPECT_EQ(PfcSpreading::pausingClasses(ib), 0x7F);  // credits on every virtual lane
  ib.congestionControl.algorithm = "ibcc";
  EXPECT_EQ(PfcSpreading::pausingClasses(ib), 0);
}

// PFC's unfairness at a congested egress (Zhu et al., SIGCOMM 2015, section 2: the flows behind
// one ingress port share what a lone flow on another gets alone): three senders reach the
// incast egress through one switch port P1, a fourth through P2. Each paused ingress holds about
// XOFF in the FIFO, so P1 and P2 each get C/2: the three flows behind P1 C/6 each, the lone one
// C/2. A flow w from NIC 5 that crosses P1 to an idle receiver arrives on a fifth ingress of
// P1's switch: P1 serves its paused ingress ports alike, so w gets what each of the three
// incast ingresses gets, C/6. NIC 4 also sends v4 to an idle host: its round robin gives v4 and
// the lone flow C/2 each, and the lone flow is not held below that (no pause at NIC 4).
TEST(PfcSpreading, CongestedEgressIsSharedPerIngressPort) {
  Case c;
  const uint32_t root = c.port(C, true);
  const uint32_t p1 = c.port(4 * C, true), p2 = c.port(4 * C, true);
  std::vector<uint32_t> nic;
  for (int i = 0; i < 5; ++i) nic.push_back(c.port(C, false));
  const uint32_t idleW = c.port(C, true), idleV = c.port(C, true);
  c.begin();
  std::vector<uint32_t> behindP1;
  for (int i = 0; i < 3; ++i) behindP1.push_back(c.flow({nic[i], p1, root}, true));
  const uint32_t lone = c.flow({nic[3], p2, root}, true);
  const uint32_t v4 = c.flow({nic[3], idleV}, true);
  const uint32_t w = c.flow({nic[4], p1, idleW}, true);
  EXPECT_TRUE(c.solve());
  for (uint32_t f : behindP1) expectRate(c, f, C / 6, "flow behind the crowded ingress");
  expectRate(c, lone, C / 2, "lone flow on the other ingress");
  expectRate(c, v4, C / 2, "NIC 4's other QP");
  expectRate(c, w, C / 6, "flow from another ingress through the paused port");
}

// A paused switch port serves its paused ingress ports alike, counting all their traffic. NIC a
// sends f into the incast egress and g elsewhere, both through port U (4C, never full); three
// more senders reach the egress directly. The egress gives each of its four ingress ports C/4:
// f gets C/4, below NIC a's round-robin C/2, so NIC a is paused and g, its other QP, gets C/4 as
// well. U, feeding the egress, is paused: its ingress from NIC a passes f + g = C/2, so its
// ingress from NIC b, whose only flow w crosses U to an idle port, passes C/2 too: w = C/2 (not
// the C/4 of the held flow alone).
TEST(PfcSpreading, VictimAtAPausedSwitchPortGetsWhatAHeldIngressPasses) {
  Case c;
  const uint32_t root = c.port(C, true), u = c.port(4 * C, true);
  const uint32_t nicA = c.port(C, false), nicB = c.port(C, false);
  std::vector<uint32_t> nic;
  for (int i = 0; i < 3; ++i) nic.push_back(c.port(C, false));
  const uint32_t idleG = c.port(C, true), idleW = c.port(C, true);
  c.begin();
  const uint32_t f = c.flow({nicA, u, root}, true);
  const uint32_t g = c.flow({nicA, u, idleG}, true);
  std::vector<uint32_t> h;
  for (int i = 0; i < 3; ++i) h.push_back(c.flow({nic[i], root}, true));
  const uint32_t w = c.flow({nicB, u, idleW}, true);
  EXPECT_TRUE(c.solve());
  expectRate(c, f, C / 4, "held flow behind U");
  expectRate(c, g, C / 4, "NIC a's other QP");
  for (uint32_t x : h) expectRate(c, x, C / 4, "direct incast flow");
  expectRate(c, w, C / 2, "flow from another ingress through the paused port");
}

// Invariants on random instances: every resource within its capacity, every rate positive; and
// without a pausing flow the rates are MaxMinSolver's max-min allocation (another implementation).
TEST(PfcSpreading, RandomInstancesAreFeasibleAndMaxMinWithoutPauses) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int nics = 6, switches = 10;
    std::vector<double> cap;
    std::vector<bool> egress;
    for (int i = 0; i < nics + switches; ++i) {
      cap.push_back(C * (1 + static_cast<double>(rng() % 4)));
      egress.push_back(i >= nics);
    }
    struct F {
      std::vector<Hop> hops;
      bool pausing;
    };
    std::vector<F> flows;
    const int n = 5 + static_cast<int>(rng() % 20);
    for (int f = 0; f < n; ++f) {
      F x;
      x.hops.push_back({static_cast<uint32_t>(rng() % nics), 1.0f});
      std::vector<uint32_t> sw(switches);
      for (int i = 0; i < switches; ++i) sw[i] = static_cast<uint32_t>(nics + i);
      std::shuffle(sw.begin(), sw.end(), rng);
      const int len = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < len; ++i) x.hops.push_back({sw[i], 1.0f});
      x.pausing = rng() % 2 == 0;
      flows.push_back(x);
    }
    for (bool anyPausing : {true, false}) {
      PfcSpreading pfc;
      pfc.clear(cap.size());
      for (size_t f = 0; f < flows.size(); ++f)
        pfc.addFlow(static_cast<uint32_t>(f), flows[f].hops, static_cast<uint32_t>(flows[f].hops.size()), 0,
                    anyPausing && flows[f].pausing);
      const bool paused =
          pfc.solve([&](uint32_t r) { return cap[r]; }, [&](uint32_t r) { return egress[r]; });
      std::vector<double> load(cap.size(), 0);
      for (size_t f = 0; f < flows.size(); ++f) {
        EXPECT_GT(pfc.rate(static_cast<uint32_t>(f)), 0) << "trial " << trial;
        for (const Hop& h : flows[f].hops) load[h.resource] += pfc.rate(static_cast<uint32_t>(f));
      }
      for (size_t r = 0; r < cap.size(); ++r) EXPECT_LE(load[r], cap[r] * (1 + 1e-9)) << "trial " << trial;
      if (anyPausing) continue;
      EXPECT_FALSE(paused);
      MaxMinSolver mm;
      for (double c : cap) mm.addResource(c);
      for (const F& x : flows) mm.addFlow(x.hops);
      mm.solve([](uint32_t, double) {});
      for (size_t f = 0; f < flows.size(); ++f)
        EXPECT_NEAR(pfc.rate(static_cast<uint32_t>(f)), mm.rate(static_cast<uint32_t>(f)), 1e-9 * C)
            << "trial " << trial << " flow " << f;
    }
  }
}
