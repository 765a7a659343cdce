// PFC spreading in the flow and hybrid backends (PfcSpreading) against the packet backend, in a
// lossless class without congestion control: a 3-leaf, 2-spine leaf-spine at 100 Gb/s, PFC on
// class 0 (static XOFF 60 KB / XON 48 KB, as leafspine-64-cc), every transfer 1 MiB.
// - An incast with victims: four senders on leaf 0 each send to one receiver on leaf 1 and to
//   their own idle receiver on leaf 0 (the victims share only the sender's NIC with the incast).
//   At packet level the receiver's downlink fills, its ingress ports pause the spines, the
//   spines pause leaf 0's uplinks, leaf 0 pauses the senders' NICs, and a paused NIC stops its
//   victim QP with its incast QP: victims finish with the incast, about 4x their unloaded time,
//   where max-min (the flow backend before PFC spreading) has them done in a third of it.
// - An incast from mixed ingress ports: four senders beside the receiver and three on another
//   leaf. PFC shares the receiver's port per paused ingress port, so the local flows finish
//   first; a per-flow share finishes all seven together.
// Compared per group: median and p99 FCT, and the JCT (last delivery), for three seeds (each
// seed its ECMP hashing and packet-level randomness, the same hashing for every backend).
// - leafspine-64-cc's pure incast (16 x 4 MiB into one port) with PFC on RoCE and with
//   InfiniBand credits (subnet-manager routing), compared flow by flow.
// - Victims behind a paused spine port (from another leaf), and the results' backend_model,
//   which says when the flow and hybrid rates include PFC back-pressure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/flow/FlowFabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/IbSubnetManager.h"
#include "sim/runtime/PacketEpisodeModel.h"
#include "sim/topology/TopologyBuilder.h"
#include "tests/support/BackendRun.h"
#include "tests/support/FigureLine.h"
#include "tests/support/PacketBench.h"
#include "tests/support/TempDir.h"

using namespace fabricsim;
using fabricsim::testsupport::DeliveryLog;
using fabricsim::testsupport::leafSpineSpec;
using fabricsim::testsupport::PacketBench;

namespace {

constexpr int kSenders = 4;
constexpr Bytes kBytes = 1 << 20;

TopologySpec losslessSpec() {
  TopologySpec s = leafSpineSpec(3, 2, 8);
  s.sw.pfc.enabled = true;
  s.sw.pfc.classMask = 0x01;
  s.sw.pfc.xoff = 60'000;
  s.sw.pfc.xon = 48'000;
  return s;
}

/// FCT figures of one run, in microseconds.
struct Figures {
  double victimMedian = 0, victimP99 = 0, incastMedian = 0, incastP99 = 0, jct = 0;
};

double quantile(std::vector<double> v, double q) {  // linear interpolation between order statistics
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

/// The two workloads: an incast whose senders also send to idle hosts (victims), and an incast
/// from senders on the receiver's leaf and on another leaf, without victims (mixed ingress).
enum class Scenario { NicVictims, MixedIngress, FabricVictims };

/// The GPUs under each leaf, leaves in id order.
std::map<NodeId, std::vector<uint32_t>> gpusByLeaf(const Topology& topo) {
  std::map<NodeId, std::vector<uint32_t>> byLeaf;
  for (uint32_t g = 0; g < topo.gpuCount(); ++g) byLeaf[topo.attachedSwitch(topo.nicOfGpu(g))].push_back(g);
  return byLeaf;
}

/// Sends the workload on `fabric`, runs it, and reads the figures from the records.
Figures run(Fabric& fabric, Simulator& sim, const Topology& topo, Scenario scenario) {
  fabric.keepFlowRecords(true);
  const auto byLeaf = gpusByLeaf(topo);
  EXPECT_EQ(byLeaf.size(), 3u);
  const std::vector<uint32_t>& leaf0 = byLeaf.begin()->second;
  const std::vector<uint32_t>& leaf1 = std::next(byLeaf.begin())->second;
  const uint32_t receiver = leaf1.at(0);
  DeliveryLog log;
  std::vector<bool> isVictim;
  auto send = [&](uint32_t src, uint32_t dst, uint16_t qp, bool victim) {
    TransferRequest r;
    r.srcGpu = src;
    r.dstGpu = dst;
    r.bytes = kBytes;
    r.qp = qp;
    r.tag = isVictim.size();
    isVictim.push_back(victim);
    fabric.send(r, &log);
  };
  if (scenario == Scenario::NicVictims) {
    for (int i = 0; i < kSenders; ++i) {
      send(leaf0.at(i), receiver, 0, false);
      send(leaf0.at(i), leaf0.at(kSenders + i), 1, true);  // an idle host on the sender's own leaf
    }
  } else if (scenario == Scenario::FabricVictims) {
    const std::vector<uint32_t>& leaf2 = std::next(byLeaf.begin(), 2)->second;
    for (int i = 0; i < kSenders; ++i) {
      send(leaf0.at(i), receiver, 0, false);
      send(leaf2.at(i), leaf1.at(1 + i), 0, true);
    }
  } else {
    for (int i = 0; i < 4; ++i) send(leaf1.at(1 + i), receiver, 0, false);  // beside the receiver
    for (int i = 0; i < 3; ++i) send(leaf0.at(i), receiver, 0, false);      // through the spines
  }
  sim.run();
  EXPECT_EQ(log.at.size(), isVictim.size());
  std::vector<double> incast, victims;
  double last = 0;
  const auto& recs = fabric.flowRecords();
  for (size_t k = 0; k < recs.size(); ++k) {
    EXPECT_TRUE(recs[k].done());
    const double us = static_cast<double>(recs[k].fct().picos()) * 1e-6;
    (isVictim[k] ? victims : incast).push_back(us);
    last = std::max(last, static_cast<double>(recs[k].finish.picos()) * 1e-6);
  }
  Figures f;
  if (!victims.empty()) {
    f.victimMedian = quantile(victims, 0.5);
    f.victimP99 = quantile(victims, 0.99);
  }
  f.incastMedian = quantile(incast, 0.5);
  f.incastP99 = quantile(incast, 0.99);
  f.jct = last;
  return f;
}

/// The packet backend with ECMP hashing `seed` and its own randomness from `simSeed`.
Figures packetRun(uint64_t seed, uint64_t simSeed, Scenario scenario) {
  const TopologySpec s = losslessSpec();
  auto topo = buildTopology(s);
  Simulator sim(simSeed);
  EcmpFib fib(*topo, seed);
  PacketFabric fabric(sim, *topo, s, fib);
  const Figures f = run(fabric, sim, *topo, scenario);
  EXPECT_GT(fabric.networkCounters().pfcPauseFrames, 0u) << "PFC never acted: the case tests nothing";
  EXPECT_EQ(fabric.networkCounters().packetsDropped, 0u);
  return f;
}

/// The flow backend (hybrid: with the packet-level episode model) on the same fabric, ECMP
/// hashing and seed; `pfc` false runs it as before PFC spreading (PFC off: max-min).
Figures flowRun(uint64_t seed, Scenario scenario, bool hybrid, bool pfc = true) {
  TopologySpec s = losslessSpec();
  s.sw.pfc.enabled = pfc;
  auto topo = buildTopology(s);
  Simulator sim(seed);
  EcmpFib fib(*topo, seed);
  FlowFabric fabric(sim, *topo, s, fib);
  std::unique_ptr<PacketEpisodeModel> episodes;
  if (hybrid) {
    episodes = std::make_unique<PacketEpisodeModel>(s, seed);
    fabric.setEpisodeModel(episodes.get());
  }
  const Figures f = run(fabric, sim, *topo, scenario);
  if (pfc) {
    EXPECT_GT(fabric.pfcPausedRecomputations(), 0u) << "no pause was modelled";
    if (scenario == Scenario::NicVictims) {
      EXPECT_GT(fabric.pfcVictims(), 0u) << "no victim was modelled";
    }
  }
  return f;
}

void print(const char* name, const Figures& f) {
  std::printf(
      "[ pfc-spreading ] %-22s victims median %7.1f us p99 %7.1f us | incast median %7.1f us p99 %7.1f us"
      " | JCT %7.1f us\n",
      name, f.victimMedian, f.victimP99, f.incastMedian, f.incastP99, f.jct);
}

std::vector<double> fields(const Figures& f) {
  return {f.victimMedian, f.victimP99, f.incastMedian, f.incastP99, f.jct};
}

/// The FCTs of one backend over the three hashings as docs/flow-backend.md shows them
/// (scripts/test_figures.py integration_tests PfcSpreadingAgreement.*): one value where the three
/// agree to the printed digit, else the three.
std::string cell(const std::vector<Figures>& byHashing, size_t k) {
  std::vector<std::string> v;
  for (const Figures& f : byHashing) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", fields(f)[k]);
    v.emplace_back(buf);
  }
  if (std::all_of(v.begin(), v.end(), [&](const std::string& x) { return x == v[0]; })) return v[0];
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += v[i];
  }
  return out;
}

void figureTable(const std::string& title, size_t from,
                 const std::vector<std::pair<std::string, std::vector<Figures>>>& rows) {
  static const char* columns[] = {"victims median", "victims p99", "incast median", "incast p99", "JCT"};
  testsupport::figureLine(title);
  testsupport::figureLine("");
  std::string header = "| backend |", rule = "|---|";
  for (size_t k = from; k < 5; ++k) {
    header += std::string(" ") + columns[k] + " |";
    rule += "---|";
  }
  testsupport::figureLine(header);
  testsupport::figureLine(rule);
  for (const auto& [name, figures] : rows) {
    std::string line = "| " + name + " |";
    for (size_t k = from; k < 5; ++k) {
      line += ' ';
      line += cell(figures, k);
      line += " |";
    }
    testsupport::figureLine(line);
  }
  testsupport::figureLine("");
}

/// Packet, flow, hybrid and max-min flow for three ECMP hashings (seeds 1, 2, 3; the same paths
/// on every backend). Tolerance per hashing and figure: the packet backend's own spread over
/// three simulator seeds with those paths ((max - min) / mean) plus the model budget of 10%
/// argued in the tests. Flow and hybrid must agree with packet on every figure `from`.. within
/// it; max-min must miss each figure in `differ` by more than it for at least one hashing, or
/// the case does not test what it is for.
void compare(Scenario scenario, const std::string& title, size_t from, std::vector<size_t> differ) {
  static const char* names[] = {"victims median", "victims p99", "incast median", "incast p99", "JCT"};
  std::vector<bool> missed(5, false);
  std::vector<Figures> packets, flows, hybrids, oldFlows;
  for (uint64_t seed : {1, 2, 3}) {
    std::vector<Figures> packet;
    for (uint64_t simSeed : {seed, seed + 100, seed + 200})
      packet.push_back(packetRun(seed, simSeed, scenario));
    const Figures flow = flowRun(seed, scenario, false), hybrid = flowRun(seed, scenario, true),
                  oldFlow = flowRun(seed, scenario, false, false);
    const std::string tag = " hashing " + std::to_string(seed);
    print(("packet" + tag).c_str(), packet[0]);
    print(("flow" + tag).c_str(), flow);
    print(("hybrid" + tag).c_str(), hybrid);
    print(("flow, max-min" + tag).c_str(), oldFlow);
    packets.push_back(packet[0]);
    flows.push_back(flow);
    hybrids.push_back(hybrid);
    oldFlows.push_back(oldFlow);
    for (size_t k = from; k < 5; ++k) {
      double lo = 1e300, hi = 0, sum = 0;
      for (const Figures& p : packet) {
        const double v = fields(p)[k];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        sum += v;
      }
      const double spread = (hi - lo) / (sum / static_cast<double>(packet.size()));
      const double tolerance = spread + 0.10;
      const double p = fields(packet[0])[k];
      EXPECT_LE(std::abs(fields(flow)[k] / p - 1), tolerance)
          << names[k] << tag << ": flow " << fields(flow)[k] << " us, packet " << p << " us";
      EXPECT_LE(std::abs(fields(hybrid)[k] / p - 1), tolerance)
          << names[k] << tag << ": hybrid " << fields(hybrid)[k] << " us, packet " << p << " us";
      if (std::abs(fields(oldFlow)[k] / p - 1) > tolerance) missed[k] = true;
      std::printf("[ pfc-spreading ] %s%s: packet spread over simulator seeds %.2f%%, tolerance %.1f%%\n",
                  names[k], tag.c_str(), 100 * spread, 100 * tolerance);
    }
  }
  figureTable(title, from,
              {{"packet", packets},
               {"flow", flows},
               {"hybrid", hybrids},
               {"flow before PFC spreading (max-min)", oldFlows}});
  for (size_t k : differ)
    EXPECT_TRUE(missed[k]) << names[k] << ": max-min agrees too; the case tests nothing";
}

}  // namespace

TEST(PfcSpreadingAgreement, IncastWithVictimsMatchesPacketLevel) {
  // Model budget, 10%, argued before the results were seen:
  //  - queueing delay the fluid leaves out: the root queue holds about XOFF per paused ingress
  //    (2 spine ports x 60 KB) and each upstream hop as much again, some 0.4 MB in all ahead of
  //    a last byte: ~35 us at 12.1 GB/s of payload, 8-10% of a ~350 us FCT at most, and half of
  //    that on average over the flows;
  //  - pause granularity: a NIC resumes for at least XOFF - XON = 12 KB at a time, so its round
  //    robin evens its QPs out to within a frame or two per cycle: well under 1%.
  // The old max-min rates must miss the victims (they finish in about a third of the packet
  // time), or the case does not test spreading.
  compare(
      Scenario::NicVictims,
      "Incast with victims: four senders each send to one receiver on another leaf and to an idle host on "
      "their own leaf (the victims share only the NIC).",
      0, {0, 1});
}

// Victims behind a paused switch port: the four senders on leaf 0 incast to the receiver on leaf
// 1, and four hosts on leaf 2 each send to an idle host on leaf 1, through the same spine ports
// into leaf 1 (ECMP decides which). A spine port into leaf 1 is paused by the receiver's leaf and
// serves its two paused ingress ports (from leaf 0 and from leaf 2) alike, so the victims get the
// incast traffic's share there, not a share per flow. Same budget as above (the queues are the
// same). Max-min must miss the victims for at least one hashing.
TEST(PfcSpreadingAgreement, IncastWithVictimsBehindAPausedSpinePortMatchesPacketLevel) {
  compare(Scenario::FabricVictims,
          "Victims behind a paused spine port: the same incast, and four hosts on a third leaf each send to "
          "an idle "
          "host on the receiver's leaf, through the spine ports the incast pauses.",
          0, {0, 1});
}

// PFC's per-ingress sharing: four senders beside the receiver (four ingress ports of its leaf)
// and three on another leaf (arriving through at most two spine ports) each send 1 MiB. Each
// paused ingress gets an equal share of the receiver's port, so the local flows finish first
// (at 5/7 to 6/7 of the time a per-flow share would give them, by the ECMP split of the three
// remote flows) and the remote ones last; the JCT is the total bytes through the port either
// way. Tolerance as above (the packet spread plus 10%: five paused ingress ports x 60 KB of
// queue, ~25 us of ~600 us, and the same granularity). The per-flow (max-min) share finishes all
// seven together: its median must miss.
TEST(PfcSpreadingAgreement, IncastFromMixedIngressPortsMatchesPacketLevel) {
  compare(Scenario::MixedIngress,
          "Incast from mixed ingress ports: four senders beside the receiver, three on another leaf.", 2,
          {2});
}

// leafspine-64-cc's incast (8 leaves of 8 hosts, 8 spines, 100 Gb/s, 500 ns switches, 32 MiB;
// 16 senders x 4 MiB into GPU 0): seven senders beside the receiver, the others behind one or
// more spine ports. On RoCE with PFC (ECMP) and on InfiniBand (credits, subnet-manager routes),
// each flow's FCT on the flow backend against the packet backend's. Tolerance: the 10% model
// budget argued above (the root queue is 15 ingress ports x XOFF or credits, ~1 MB: ~80 us of
// 2.7-5.5 ms, under 3%). This case was added after its figures were seen; the budget is the
// other cases', not fitted to them. Max-min (one share per flow) must miss the median by more.
TEST(PfcSpreadingAgreement, PureIncastFlowByFlowOnRoceAndInfiniband) {
  for (const std::string tech : {"roce", "infiniband"}) {
    SCOPED_TRACE(tech);
    TopologySpec s = leafSpineSpec(8, 8, 8, tech);
    s.sw.latency = Time::ns(500);
    if (tech == "roce") {
      s.sw.pfc.enabled = true;
      s.sw.pfc.xoff = 60'000;
      s.sw.pfc.xon = 48'000;
    } else {
      s.routing.algorithm = "ib-sm";
    }
    auto runOne = [&](int backend) {  // 0 packet, 1 flow, 2 flow with every class lossy (max-min)
      TopologySpec spec = s;
      if (backend == 2) spec.congestionControl.algorithm = tech == "roce" ? "dcqcn" : "ibcc";
      auto topo = buildTopology(spec);
      Simulator sim(1);
      EcmpFib fib(*topo, 1);
      std::unique_ptr<IbSubnetManager> sm;
      if (tech == "infiniband") sm = std::make_unique<IbSubnetManager>(sim, *topo, spec, &fib);
      std::unique_ptr<Fabric> fabric;
      if (backend == 0) {
        auto p = std::make_unique<PacketFabric>(sim, *topo, spec, fib);
        if (sm) p->setSubnetManager(*sm);
        fabric = std::move(p);
      } else {
        auto f = std::make_unique<FlowFabric>(sim, *topo, spec, fib);
        if (sm) f->setSubnetManager(*sm);
        fabric = std::move(f);
      }
      fabric->keepFlowRecords(true);
      for (uint32_t g = 1; g <= 16; ++g) {
        TransferRequest r;
        r.srcGpu = g;
        r.dstGpu = 0;
        r.bytes = 4 << 20;
        r.tag = g;
        fabric->send(r, nullptr);
      }
      sim.run();
      std::vector<double> fct;
      for (const FlowRecord& rec : fabric->flowRecords()) {
        EXPECT_TRUE(rec.done());
        fct.push_back(static_cast<double>(rec.fct().picos()) * 1e-6);
      }
      return fct;
    };
    const std::vector<double> packet = runOne(0), flow = runOne(1), maxMin = runOne(2);
    ASSERT_EQ(packet.size(), 16u);
    ASSERT_EQ(flow.size(), 16u);
    double worst = 0;
    for (size_t i = 0; i < packet.size(); ++i) {
      EXPECT_LE(std::abs(flow[i] / packet[i] - 1), 0.10)
          << "sender " << i + 1 << ": flow " << flow[i] << " us, packet " << packet[i] << " us";
      worst = std::max(worst, std::abs(flow[i] / packet[i] - 1));
    }
    const double pm = quantile(packet, 0.5), fm = quantile(flow, 0.5), mm = quantile(maxMin, 0.5);
    std::printf(
        "[ pfc-spreading ] %s pure incast: median FCT packet %.1f us, flow %.1f us, max-min %.1f us; "
        "largest per-flow difference %.2f%%\n",
        tech.c_str(), pm, fm, mm, 100 * worst);
    EXPECT_GT(std::abs(mm / pm - 1), 0.10) << "max-min agrees too: the case tests nothing";
  }
}

// The results say what the flow and hybrid backends model of PFC: with a lossless class and no
// congestion control their rates include the back-pressure; with DCQCN they do not, and the
// pauses under a congestion control are listed as not modelled.
TEST(PfcSpreadingAgreement, ResultsSayWhenPfcSpreadingIsModelled) {
  using fabricsim::testsupport::runBackend;
  using fabricsim::testsupport::TempDir;
  const std::string topo = "'" + std::string(FABRICSIM_SOURCE_DIR) + "/topologies/leafspine-64-cc.yaml'";
  for (const char* backend : {"flow", "hybrid"}) {
    SCOPED_TRACE(backend);
    TempDir dir;
    const nlohmann::json lossless = runBackend(dir, topo, backend);
    const nlohmann::json dcqcn = runBackend(dir, topo + " --cc dcqcn", backend);
    ASSERT_TRUE(lossless.is_object() && dcqcn.is_object());
    const std::string with = lossless["backend_model"]["rates"], without = dcqcn["backend_model"]["rates"];
    EXPECT_NE(with.find("lossless classes without congestion control"), std::string::npos) << with;
    EXPECT_EQ(without.find("lossless"), std::string::npos) << without;
    bool listed = false;
    for (const auto& e : dcqcn["backend_model"]["not_modelled"])
      listed |= e.get<std::string>().find("under a congestion control") != std::string::npos;
    EXPECT_TRUE(listed) << dcqcn["backend_model"]["not_modelled"].dump();
  }
}

// A pause spreads only along the paths of the flows that share resources with the congested
// port (its connected component), so what happens on another leaf cannot move a flow's rate:
// the flow backend refills only the components a change reaches. Leaf 0 holds an incast with
// victims (senders 1-4 send 256 KiB x k to host 0 and 1 MiB each to an idle host on leaf 2,
// through the spines, which leaf 1's flows never cross); leaf 1
// an incast of five flows of 128 KiB x (k + 2) whose staggered ends refill its own component five
// times while leaf 0's flows are live. Leaf 0's completion times with leaf 1 busy must be those
// of leaf 0 alone, exactly: neither fill reads the other's state (a refill of everything gives
// the same rates up to rounding; this one gives them bit for bit). And leaf 0 alone against a
// hand-worked fill (rate C of the receiver's port, s = 256 KiB): the four incast flows share the
// receiver's port per ingress, C/4 each, and each sender's paused NIC holds its victim to the
// same rate; incast 1 ends at 4s/C, then C/3 each to 7s/C, C/2 each to 9s/C (victims 2-4 have
// sent s, 2s and 3s by then). Incast 4 is then alone at the port with s left, no longer paused,
// and shares its NIC with its victim (s left too): C/2 each, both end at 11s/C. Differences
// from incast 1's end cancel the fixed path latency: 3s, 5s and 7s over C, ratios 5/3 and 7/3
// to the first; within 1% (nothing else enters a fluid with exact event times).
TEST(PfcSpreadingComponents, AnIncastOnAnotherLeafLeavesTheRatesAlone) {
  const TopologySpec s = losslessSpec();
  auto runLeaves = [&](bool withLeaf1) {
    auto topo = buildTopology(s);
    Simulator sim(1);
    EcmpFib fib(*topo, 1);
    FlowFabric fabric(sim, *topo, s, fib);
    fabric.keepFlowRecords(true);
    const auto byLeaf = gpusByLeaf(*topo);
    const std::vector<uint32_t>& leaf0 = byLeaf.begin()->second;
    const std::vector<uint32_t>& leaf1 = std::next(byLeaf.begin())->second;
    const std::vector<uint32_t>& leaf2 = std::next(byLeaf.begin(), 2)->second;
    auto send = [&](uint32_t src, uint32_t dst, Bytes bytes, uint16_t qp) {
      TransferRequest r;
      r.srcGpu = src;
      r.dstGpu = dst;
      r.bytes = bytes;
      r.qp = qp;
      fabric.send(r, nullptr);
    };
    for (uint32_t k = 1; k <= 4; ++k) {
      send(leaf0.at(k), leaf0.at(0), Bytes{256 << 10} * k, 0);
      send(leaf0.at(k), leaf2.at(k), Bytes{1} << 20, 1);  // a victim behind the paused NIC
    }
    if (withLeaf1)
      for (uint32_t k = 1; k <= 5; ++k) send(leaf1.at(k), leaf1.at(0), Bytes{128 << 10} * (k + 2), 0);
    sim.run();
    EXPECT_GT(fabric.pfcPausedRecomputations(), 0u) << "no pause was modelled";
    std::vector<int64_t> finish;
    for (const FlowRecord& rec : fabric.flowRecords()) {
      EXPECT_TRUE(rec.done());
      finish.push_back(rec.finish.picos());
    }
    return finish;
  };
  const std::vector<int64_t> alone = runLeaves(false), busy = runLeaves(true);
  ASSERT_EQ(alone.size(), 8u);
  ASSERT_EQ(busy.size(), 13u);
  for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(busy[i], alone[i]) << "leaf 0's flow " << i;
  // Leaf 1's flows end while leaf 0's run: its refills happen in the window that matters.
  EXPECT_LT(busy[8], *std::max_element(alone.begin(), alone.end()));
  const double step = static_cast<double>(alone[2] - alone[0]);  // incast 2's end less incast 1's
  const double expected[] = {5.0 / 3, 7.0 / 3};
  for (size_t k = 2; k < 4; ++k)
    EXPECT_NEAR(static_cast<double>(alone[2 * k] - alone[0]) / step, expected[k - 2], 0.01 * expected[k - 2])
        << "incast flow " << k + 1;
}
