// Lossless means lossless (issue 16): with the default PFC headroom a lossless class never drops
// on a k=8 fat-tree, for permutations and incasts under static and dynamic thresholds, with and
// without DCQCN, with the default and with small pause quanta; a headroom set too small is caught
// and reported with its port; PAUSE frames do not pay the forwarding pipeline; InfiniBand credits
// survive a link failure and repair. Expected values are invariants (bytes conserved, zero drops)
// and facts computed in the test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/runtime/Experiment.h"
#include "sim/workload/PatternWorkload.h"
#include "tests/support/PacketBench.h"

using namespace fabricsim;

namespace {

using Bench = testsupport::PacketBench;

/// k=8 fat-tree (128 hosts), 100 Gb/s, 1 us links, 4,000 B payload, class 0 lossless.
TopologySpec fatTree8() {
  TopologySpec s;
  s.name = "k8";
  s.kind = TopologyKind::FatTree;
  s.fatTree.radix = 8;
  s.fatTree.pods = 8;
  s.fatTree.hostsPerEdge = 4;
  s.links.hostSpeed = BitRate::gbps(100);
  s.links.fabricSpeed = BitRate::gbps(100);
  s.links.latency = Time::us(1);
  s.links.mtu = 4000;
  s.sw.pfc.enabled = true;
  s.sw.pfc.classMask = 0x01;
  return s;
}

enum class Thresholds { Static, Dynamic };
enum class Pattern { Permutation, Incast };

WorkloadSpec pattern(Pattern p) {
  WorkloadSpec w;
  w.name = p == Pattern::Permutation ? "perm" : "incast";
  if (p == Pattern::Permutation) {
    w.pattern.pattern = PatternKind::Permutation;
    w.pattern.messageSize = 2'000'000;
  } else {
    w.pattern.pattern = PatternKind::Incast;
    w.pattern.incastReceiver = 0;
    w.pattern.incastSenders = 16;
    w.pattern.messageSize = 1'000'000;
  }
  return w;
}

struct Case {
  Thresholds thresholds;
  bool dcqcn;
  int quanta;
  Pattern pattern;
};

std::string name(const Case& c) {
  return std::string(c.pattern == Pattern::Permutation ? "Permutation" : "Incast") +
         (c.thresholds == Thresholds::Static ? "Static" : "Dynamic") + (c.dcqcn ? "Dcqcn" : "NoCc") +
         "Quanta" + std::to_string(c.quanta);
}

std::string caseName(const ::testing::TestParamInfo<std::tuple<Thresholds, bool, int, Pattern>>& info) {
  return name(Case{std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param),
                   std::get<3>(info.param)});
}

class Lossless : public ::testing::TestWithParam<std::tuple<Thresholds, bool, int, Pattern>> {};

}  // namespace

TEST_P(Lossless, DefaultHeadroomNeverDropsAndConservesBytes) {
  const auto [thresholds, dcqcn, quanta, pat] = GetParam();
  TopologySpec s = fatTree8();
  s.sw.pfc.quanta = quanta;
  if (thresholds == Thresholds::Static) {
    s.sw.pfc.xoff = 60'000;
    s.sw.pfc.xon = 48'000;
  } else {
    // A 1 MiB buffer with alpha 1/16 puts XOFF near 40 KB, so PFC acts on this workload (a test in
    // which no PAUSE is sent would prove nothing).
    s.sw.buffer = 1024 * 1024;
    s.sw.pfc.dynamicAlpha = 1.0 / 16;
  }
  if (dcqcn) {
    s.congestionControl.algorithm = "dcqcn";
    s.sw.ecn.enabled = true;
    s.sw.ecn.kmin = 40'000;
    s.sw.ecn.kmax = 160'000;
    s.sw.ecn.pmax = 0.2;
  }
  Bench b(s, 3);
  PatternWorkload job(b.sim, b.fabric, pattern(pat), b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  const auto c = b.fabric.networkCounters();
  EXPECT_GT(c.pfcPauseFrames, 0u) << "PFC never acted: the case tests nothing";
  EXPECT_EQ(c.losslessDrops, 0u);
  EXPECT_TRUE(c.losslessViolations.empty());
  EXPECT_EQ(c.packetsDropped, 0u);
  EXPECT_EQ(c.retransmittedBytes, 0);
  EXPECT_EQ(c.bytesSent, c.bytesDelivered);
  EXPECT_EQ(c.goodputBytes, job.bytesRequested());
  for (const auto& r : b.fabric.flowRecords()) EXPECT_TRUE(r.done());
  for (const auto& h : c.headroomPeaks) EXPECT_LE(h.peak, h.headroom) << h.node << " port " << h.port;
  EXPECT_EQ(b.fabric.pool().live(), 0u);
  EXPECT_EQ(b.sim.pendingEvents(), 0u);
}

INSTANTIATE_TEST_SUITE_P(K8, Lossless,
                         ::testing::Combine(::testing::Values(Thresholds::Static, Thresholds::Dynamic),
                                            ::testing::Bool(), ::testing::Values(65535, 200),
                                            ::testing::Values(Pattern::Permutation, Pattern::Incast)),
                         caseName);

// A headroom far below the link's budget: the drops it causes are counted, attributed to the
// ports where they happened, and go-back-N still delivers every byte.
TEST(LosslessViolation, TooSmallHeadroomIsReportedWithItsPort) {
  TopologySpec s = fatTree8();
  s.sw.pfc.xoff = 60'000;
  s.sw.pfc.xon = 48'000;
  s.sw.pfc.headroom = 8'000;  // the budget is 37,330 B (MmuTest); two frames fit, not a round trip
  Bench b(s, 3);
  PatternWorkload job(b.sim, b.fabric, pattern(Pattern::Incast), b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  const auto c = b.fabric.networkCounters();
  ASSERT_GT(c.losslessDrops, 0u);
  uint64_t listed = 0;
  for (const auto& v : c.losslessViolations) {
    listed += v.drops;
    EXPECT_FALSE(v.node.empty());
    EXPECT_EQ(v.tc, 0u);
  }
  EXPECT_EQ(listed, c.losslessDrops);
  EXPECT_EQ(c.goodputBytes, job.bytesRequested());
  EXPECT_EQ(c.bytesSent, c.bytesDelivered + c.bytesDropped);
}

// PAUSE frames leave from the ingress MAC and pay the wire's delay only. With a 20 us forwarding
// pipeline, a PAUSE that went through it would arrive 20 us late, and 20 us x 100 Gb/s = 250 KB
// more would pile into a headroom that budgets the pipeline once (for the data ahead of the
// packet that crossed XOFF): the incast below would drop. It must not.
TEST(LosslessControlFrames, PauseSkipsTheForwardingPipeline) {
  TopologySpec s = fatTree8();
  s.sw.latency = Time::us(20);
  s.sw.pfc.xoff = 60'000;
  s.sw.pfc.xon = 48'000;
  Bench b(s, 3);
  PatternWorkload job(b.sim, b.fabric, pattern(Pattern::Incast), b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  const auto c = b.fabric.networkCounters();
  EXPECT_GT(c.pfcPauseFrames, 0u);
  EXPECT_EQ(c.losslessDrops, 0u);
  EXPECT_EQ(c.packetsDropped, 0u);
}

// InfiniBand: a spine-leaf link fails under a permutation and comes back. Packets lost on the
// dead link must not take their credits with them, and the link coming up must restart both
// ends' credits from the real free buffer: every flow completes, and once the fabric has drained
// every credit is back (none leaked, none counted twice).
TEST(LosslessInfiniBand, FailureAndRepairCompleteWithEveryCreditBack) {
  RunOptions o;
  o.topologyPath = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/leafspine-64.yaml";
  o.workloadPaths = {std::string(FABRICSIM_SOURCE_DIR) + "/workloads/permutation-1mib.yaml"};
  o.progress = false;
  o.routing = "ib-sm";  // InfiniBand forwards by the subnet manager's tables
  o.sets = {
      "links.technology=infiniband", "switch.credit_buffer=64KiB", "routing.ib_sm={reroute_delay: 100us}",
      "failures=[{at: 20us, action: down, link: [leaf-0, spine-0]}, {at: 300us, action: up, link: [leaf-0, "
      "spine-0]}]"};
  Experiment e(o);
  e.run();
  const nlohmann::json r = e.results();
  const auto& n = r["network"];
  EXPECT_GT(r["routing"]["packets_lost_dead_links"].get<uint64_t>(), 0u);  // the failure did cost packets
  EXPECT_EQ(n["goodput_bytes"].get<int64_t>(), 64LL * 1024 * 1024);
  EXPECT_EQ(n["credits_outstanding_bytes"].get<int64_t>(), 0);
  EXPECT_GE(n["min_credit_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(n["lossless_drops"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["flows"]["count"].get<uint64_t>(), 64u);
}
