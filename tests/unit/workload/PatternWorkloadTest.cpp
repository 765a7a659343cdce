// PatternWorkload: the pairs each pattern draws, input checks, and closed-loop repetitions.
#include <gtest/gtest.h>

#include "tests/support/PacketBench.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"
#include "sim/core/Error.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/PatternWorkload.h"

using namespace fabricsim;
using namespace fabricsim::literals;

namespace {

/// A fabric that records requests and never delivers (pair-drawing tests never run it).
class NullFabric final : public Fabric {
 public:
  void send(const TransferRequest& r, TransferObserver*) override { requests.push_back(r); }
  std::string backendName() const override { return "null"; }
  Time pathLatency(uint32_t, uint32_t) const override { return Time::zero(); }
  double pathRate(uint32_t, uint32_t) const override { return 1e9; }
  const TransferTable& transfers() const override { return transfers_; }
  void keepFlowRecords(bool keep) override { transfers_.keepAll(keep); }
  NetworkCounters networkCounters() const override { return {}; }
  void setLinkUp(uint32_t, bool) override {}  // no links
  std::vector<TransferRequest> requests;

 private:
  TransferTable transfers_;
};

WorkloadSpec pattern(PatternKind kind, const std::string& name = "job") {
  WorkloadSpec w;
  w.name = name;
  w.file = "test.yaml";
  w.pattern.pattern = kind;
  w.pattern.messageSize = 64 * 1024;
  return w;
}

using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

Pairs drawPairs(const WorkloadSpec& w, size_t totalGpus, uint64_t seed = 1) {
  Simulator sim(seed);
  NullFabric fabric;
  PatternWorkload job(sim, fabric, w, totalGpus);
  return job.pairs();
}

void expectDerangement(const Pairs& pairs, uint32_t first, uint32_t n) {
  ASSERT_EQ(pairs.size(), n);
  std::vector<int> sends(n, 0), receives(n, 0);
  for (const auto& [s, d] : pairs) {
    ASSERT_GE(s, first);
    ASSERT_LT(s, first + n);
    ASSERT_GE(d, first);
    ASSERT_LT(d, first + n);
    EXPECT_NE(s, d) << "GPU " << s << " sends to itself";
    ++sends[s - first];
    ++receives[d - first];
  }
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(sends[i], 1) << "GPU " << first + i;
    EXPECT_EQ(receives[i], 1) << "GPU " << first + i;
  }
}

std::string firstKey(const InputError& e) {
  return e.diagnostics().empty() ? "" : e.diagnostics()[0].key;
}

using Bench = testsupport::PacketBench;

TopologySpec leafSpine(int leaves, int spines, int hostsPerLeaf) {
  return testsupport::leafSpineSpec(leaves, spines, hostsPerLeaf);
}

}  // namespace

TEST(PatternWorkload, PermutationIsADerangement) {
  for (uint32_t n : {2u, 3u, 5u, 16u, 64u, 1000u})
    for (uint64_t seed : {1u, 2u, 3u, 99u}) {
      SCOPED_TRACE("n = " + std::to_string(n) + " seed = " + std::to_string(seed));
      expectDerangement(drawPairs(pattern(PatternKind::Permutation), n, seed), 0, n);
    }
}

TEST(PatternWorkload, PermutationIsReproduciblePerSeed) {
  const WorkloadSpec w = pattern(PatternKind::Permutation);
  const Pairs a = drawPairs(w, 64, 7);
  EXPECT_EQ(a, drawPairs(w, 64, 7));
  EXPECT_NE(a, drawPairs(w, 64, 8));
  // The stream is also keyed by the job's name: two jobs in one run draw differently.
  EXPECT_NE(a, drawPairs(pattern(PatternKind::Permutation, "other"), 64, 7));
}

TEST(PatternWorkload, PermutationRespectsTheGpuRange) {
  WorkloadSpec w = pattern(PatternKind::Permutation);
  w.pattern.firstGpu = 8;
  w.pattern.gpus = 16;
  expectDerangement(drawPairs(w, 64), 8, 16);
  // gpus = 0: from firstGpu to the end.
  w.pattern.gpus = 0;
  expectDerangement(drawPairs(w, 64), 8, 56);
}

TEST(PatternWorkload, IncastPairs) {
  WorkloadSpec w = pattern(PatternKind::Incast);
  w.pattern.incastReceiver = 5;
  // Default: every other GPU sends.
  Pairs p = drawPairs(w, 16);
  ASSERT_EQ(p.size(), 15u);
  std::set<uint32_t> senders;
  for (const auto& [s, d] : p) {
    EXPECT_EQ(d, 5u);
    EXPECT_NE(s, 5u);
    senders.insert(s);
  }
  EXPECT_EQ(senders.size(), 15u);
  // N senders, the receiver excluded even when it falls among the first N.
  w.pattern.incastSenders = 7;
  p = drawPairs(w, 16);
  ASSERT_EQ(p.size(), 7u);
  senders.clear();
  for (const auto& [s, d] : p) {
    EXPECT_EQ(d, 5u);
    EXPECT_NE(s, 5u);
    senders.insert(s);
  }
  EXPECT_EQ(senders.size(), 7u);
  // Within a GPU range.
  w.pattern.firstGpu = 4;
  w.pattern.gpus = 8;
  w.pattern.incastSenders = 0;
  p = drawPairs(w, 16);
  ASSERT_EQ(p.size(), 7u);
  for (const auto& [s, d] : p) {
    EXPECT_GE(s, 4u);
    EXPECT_LT(s, 12u);
    EXPECT_NE(s, 5u);
    EXPECT_EQ(d, 5u);
  }
}

TEST(PatternWorkload, AllToAllHasEveryOrderedPairOnce) {
  for (uint32_t n : {2u, 5u, 12u}) {
    WorkloadSpec w = pattern(PatternKind::AllToAll);
    const Pairs p = drawPairs(w, n);
    ASSERT_EQ(p.size(), n * (n - 1));
    std::set<std::pair<uint32_t, uint32_t>> distinct(p.begin(), p.end());
    EXPECT_EQ(distinct.size(), n * (n - 1));
    for (const auto& [s, d] : p) {
      EXPECT_NE(s, d);
      EXPECT_LT(s, n);
      EXPECT_LT(d, n);
    }
  }
  WorkloadSpec w = pattern(PatternKind::AllToAll);
  w.pattern.firstGpu = 3;
  w.pattern.gpus = 4;
  const Pairs p = drawPairs(w, 10);
  ASSERT_EQ(p.size(), 12u);
  for (const auto& [s, d] : p) {
    EXPECT_GE(s, 3u);
    EXPECT_LT(s, 7u);
    EXPECT_GE(d, 3u);
    EXPECT_LT(d, 7u);
  }
}

TEST(PatternWorkload, BadRangesAndReceiversThrowInputError) {
  Simulator sim;
  NullFabric fabric;
  auto expectKey = [&](const WorkloadSpec& w, size_t total, const std::string& key) {
    try {
      PatternWorkload job(sim, fabric, w, total);
      ADD_FAILURE() << "expected InputError for key " << key;
    } catch (const InputError& e) {
      EXPECT_EQ(firstKey(e), key) << e.what();
      EXPECT_EQ(e.diagnostics()[0].file, "test.yaml");
    }
  };
  WorkloadSpec w = pattern(PatternKind::Permutation);
  w.pattern.firstGpu = 10;
  w.pattern.gpus = 8;
  expectKey(w, 16, "gpus");  // past the end
  w.pattern.firstGpu = 16;
  w.pattern.gpus = 0;
  expectKey(w, 16, "gpus");  // nothing left
  w.pattern.firstGpu = 0;
  w.pattern.gpus = 1;
  expectKey(w, 16, "gpus");  // a single GPU cannot form a pattern
  expectKey(pattern(PatternKind::Permutation), 1, "gpus");

  WorkloadSpec in = pattern(PatternKind::Incast);
  in.pattern.incastReceiver = 16;
  expectKey(in, 16, "incast.receiver");
  in.pattern.firstGpu = 4;
  in.pattern.gpus = 4;
  in.pattern.incastReceiver = 2;  // below the range
  expectKey(in, 16, "incast.receiver");
  in.pattern.incastReceiver = 8;  // just past the range
  expectKey(in, 16, "incast.receiver");
  in.pattern.incastReceiver = 5;
  in.pattern.incastSenders = 4;  // only 3 others in the range
  expectKey(in, 16, "incast.senders");
  EXPECT_TRUE(fabric.requests.empty());
}

TEST(PatternWorkload, RepetitionsAreClosedLoop) {
  for (const Time gap : {0_ns, 5_us}) {
    SCOPED_TRACE("gap " + std::to_string(gap.picos()) + " ps");
    Bench b(leafSpine(2, 2, 2));
    WorkloadSpec w = pattern(PatternKind::Incast);
    w.pattern.incastSenders = 1;
    w.pattern.incastReceiver = 3;  // single pair 0 -> 3, across the spines
    w.pattern.repetitions = 3;
    w.pattern.gap = gap;
    w.pattern.start = 2_us;
    w.pattern.messageSize = 100'000;
    PatternWorkload job(b.sim, b.fabric, w, b.topo->gpuCount());
    ASSERT_EQ(job.pairs(), (Pairs{{0, 3}}));
    job.start();
    b.sim.run();
    ASSERT_TRUE(job.finished());
    const auto& recs = b.fabric.flowRecords();
    ASSERT_EQ(recs.size(), 3u);
    EXPECT_EQ(recs[0].start, 2_us);
    for (size_t i = 0; i < recs.size(); ++i) {
      ASSERT_TRUE(recs[i].done());
      EXPECT_EQ(recs[i].srcGpu, 0u);
      EXPECT_EQ(recs[i].dstGpu, 3u);
      EXPECT_EQ(recs[i].bytes, 100'000);
      if (i > 0) {
        EXPECT_EQ(recs[i].start, recs[i - 1].finish + gap) << "repetition " << i;
      }
    }
    EXPECT_EQ(job.startTime(), 2_us);
    EXPECT_EQ(job.finishTime(), recs[2].finish);
    EXPECT_EQ(job.bytesRequested(), 300'000);
    EXPECT_EQ(job.bytesDelivered(), 300'000);
  }
}

TEST(PatternWorkload, QpsPerPairSpreadsRepetitionsOverQueuePairs) {
  for (const auto& [qps, reps, expected] :
       std::vector<std::tuple<int, int, size_t>>{{1, 4, 1}, {2, 4, 2}, {3, 4, 3}, {4, 4, 4}, {8, 4, 4}}) {
    SCOPED_TRACE("qps_per_pair " + std::to_string(qps) + " repetitions " + std::to_string(reps));
    Bench b(leafSpine(2, 2, 2));
    WorkloadSpec w = pattern(PatternKind::Incast);
    w.pattern.incastSenders = 1;
    w.pattern.incastReceiver = 2;
    w.pattern.repetitions = reps;
    w.pattern.qpsPerPair = qps;
    w.pattern.messageSize = 10'000;
    PatternWorkload job(b.sim, b.fabric, w, b.topo->gpuCount());
    job.start();
    b.sim.run();
    ASSERT_TRUE(job.finished());
    EXPECT_EQ(b.fabric.flowRecords().size(), static_cast<size_t>(reps));
    EXPECT_EQ(b.fabric.queuePairs(), expected);
  }
}

TEST(PatternWorkload, PermutationRunDeliversEverything) {
  Bench b(leafSpine(2, 2, 4), 3);
  WorkloadSpec w = pattern(PatternKind::Permutation);
  w.pattern.repetitions = 2;
  PatternWorkload job(b.sim, b.fabric, w, b.topo->gpuCount());
  job.start();
  b.sim.run();
  ASSERT_TRUE(job.finished());
  EXPECT_EQ(b.fabric.flowRecords().size(), 16u);
  EXPECT_EQ(job.bytesDelivered(), job.bytesRequested());
  EXPECT_EQ(job.bytesRequested(), 16 * 64 * 1024);
  std::set<std::pair<uint32_t, uint32_t>> recPairs;
  for (const auto& r : b.fabric.flowRecords()) recPairs.emplace(r.srcGpu, r.dstGpu);
  const Pairs& p = job.pairs();
  using PairSet = std::set<std::pair<uint32_t, uint32_t>>;
  EXPECT_EQ(recPairs, PairSet(p.begin(), p.end()));
}
