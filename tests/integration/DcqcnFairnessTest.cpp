// DCQCN's published behaviour: N long flows sharing one 100 Gb/s bottleneck converge to their
// fair share (Zhu et al., SIGCOMM 2015, section 5), with the bottleneck busy and its queue held
// around the ECN marking band instead of growing to the buffer limit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/cc/CongestionControl.h"
#include "sim/config/DcqcnPresets.h"
#include "sim/core/Simulator.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {

struct Sampler : EventHandler {
  Simulator* sim = nullptr;
  PacketFabric* fabric = nullptr;
  PortId bottleneck = 0;
  std::vector<uint32_t> qps;
  std::vector<BitRate> lines;
  Time from, every;
  std::vector<double> rateSum;
  std::vector<double> queue;
  int samples = 0;
  void onEvent(uint32_t) override {
    if (sim->now() >= from) {
      for (size_t i = 0; i < qps.size(); ++i)
        rateSum[i] += static_cast<double>(fabric->congestionControl()->rate(qps[i], sim->now()).bitsPerSecond());
      queue.push_back(static_cast<double>(fabric->port(bottleneck).queuedBytes()));
      ++samples;
    }
    sim->schedule(sim->now() + every, this, 0);
  }
};

struct Starter : EventHandler, TransferObserver {
  PacketFabric* fabric = nullptr;
  std::vector<TransferRequest> flows;
  void onEvent(uint32_t i) override { fabric->send(flows[i], this); }
  void onTransferDelivered(uint64_t, Time) override {}
};

struct Outcome {
  double jain = 0, util = 0, queueMean = 0, queueMax = 0;
  uint64_t drops = 0, cnps = 0;
};

Outcome runFairness(int n, const std::string& preset, Time duration, Time stagger) {
  TopologySpec s;
  s.kind = TopologyKind::LeafSpine;
  s.leafSpine = {2, 1, n + 1, 1};
  s.links.hostSpeed = s.links.fabricSpeed = BitRate::gbps(100);
  s.links.latency = 1_us;
  s.links.mtu = 4096;
  s.sw.buffer = 32LL << 20;
  s.sw.ecn = EcnSpec{true, 100 * 1000, 400 * 1000, 0.2, false, 0x7F};  // HPCC ns-3's map for 100G
  s.congestionControl.algorithm = "dcqcn";
  EXPECT_TRUE(applyDcqcnPreset(preset, s.congestionControl.dcqcn));
  const auto topo = buildTopology(s);
  Simulator sim(7);
  EcmpFib fib(*topo, 7);
  PacketFabric fabric(sim, *topo, s, fib);
  // Senders: hosts 1..n; receiver: host 0, all on leaf 0. Bottleneck: leaf-0 -> host 0.
  Starter starter;
  starter.fabric = &fabric;
  for (int i = 0; i < n; ++i) {
    TransferRequest r;
    r.srcGpu = static_cast<uint32_t>(1 + i);
    r.dstGpu = 0;
    r.bytes = 1LL << 40;  // longer than the run
    r.tag = static_cast<uint64_t>(i);
    starter.flows.push_back(r);
    sim.schedule(stagger * i, &starter, static_cast<uint32_t>(i));
  }
  const PortId bottleneck = topo->peerPort(topo->nicPort(0));
  sim.run(duration / 2);
  Sampler sampler;
  sampler.sim = &sim;
  sampler.fabric = &fabric;
  sampler.bottleneck = bottleneck;
  for (int i = 0; i < n; ++i)
    sampler.qps.push_back(fabric.findQueuePair(topo->nicOfGpu(static_cast<uint32_t>(1 + i)), 0, 0, 0));
  sampler.rateSum.assign(static_cast<size_t>(n), 0.0);
  sampler.from = sim.now();
  sampler.every = 5_us;
  sim.schedule(sim.now(), &sampler, 0);
  const Time busy0 = fabric.port(bottleneck).busyTime();
  sim.run(duration);
  const Time busy1 = fabric.port(bottleneck).busyTime();
  Outcome o;
  double sum = 0, sumSq = 0;
  for (double r : sampler.rateSum) {
    sum += r;
    sumSq += r * r;
  }
  o.jain = sum * sum / (n * sumSq);
  o.util = static_cast<double>((busy1 - busy0).picos()) / static_cast<double>((duration / 2).picos());
  for (double q : sampler.queue) {
    o.queueMean += q / static_cast<double>(sampler.queue.size());
    o.queueMax = std::max(o.queueMax, q);
  }
  const auto c = fabric.networkCounters();
  o.drops = c.packetsDropped;
  o.cnps = c.cnps;
  return o;
}

}  // namespace

// The dcqcn-paper preset with HPCC's 100G marking map (Kmin 100 KB, Kmax 400 KB, Pmax 0.2).
// Flows start 500 us apart and run 60 ms: the paper's additive step (40 Mb/s per 55 us) was
// sized for 40G links, so at 100G recovery after the joining transients takes tens of ms.
// Thresholds are the issue's: Jain >= 0.95 and utilisation >= 90% over the second half; the
// queue must stay near the marking band (mean below Kmax, peak below 2 Kmax) rather than grow
// toward the 32 MiB buffer, and nothing is dropped.
class DcqcnFairness : public ::testing::TestWithParam<int> {};

TEST_P(DcqcnFairness, ConvergesToFairShareWithTheQueueInTheMarkingBand) {
  const int n = GetParam();
  const Outcome o = runFairness(n, "dcqcn-paper", 60_ms, 500_us);
  EXPECT_GE(o.jain, 0.95) << n << " flows";
  EXPECT_GE(o.util, 0.90) << n << " flows";
  EXPECT_LT(o.queueMean, 400e3) << n << " flows";
  EXPECT_LT(o.queueMax, 800e3) << n << " flows";
  EXPECT_GT(o.cnps, 0u);
  EXPECT_EQ(o.drops, 0u);
}

INSTANTIATE_TEST_SUITE_P(Flows, DcqcnFairness, ::testing::Values(2, 4, 8, 16));
