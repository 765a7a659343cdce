// `kind: collective` end to end: the nccl-tests table on stdout, the same rows in the results
// JSON with nccl-tests' busbw definitions; the --timeline file; clear errors for jobs that do
// not fit or traces that do not exist.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/workload/CollectiveSweep.h"
#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

using testsupport::TempDir;

const std::string kTopo =
    "name: t\ntopology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
    "hosts: {gpus_per_host: 4, nvlink: {bandwidth: 400GBps, latency: 1us}}\n"
    "links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps, latency: 1us, mtu: 4096}\n";

std::string q(const std::string& s) { return "'" + s + "'"; }

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(CollectiveSweepCliTest, PrintsTheNcclTestsTableAndWritesItsRows) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", kTopo);
  const auto w = dir.write("ar.yaml", "kind: collective\noperation: all_reduce\nsizes: {min: 1MiB, max: 4MiB, factor: 2}\n"
                                      "hosts: 2\ngpus_per_host: 4\nwarmup: 1\niterations: 2\n");
  const auto r = testsupport::runFabricsim("run " + q(topo) + " --workload " + q(w) + " --out " + q(dir.file("r.json")),
                                           "2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(B)    (elements)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth    :"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("     1048576        262144     float     sum      -1"), std::string::npos) << r.out;
  const auto doc = readJson(dir.file("r.json"));
  const auto& nt = doc["jobs"][0]["nccl_tests"];
  ASSERT_EQ(nt["rows"].size(), 3u);
  EXPECT_EQ(nt["ranks"], 8);
  double sum = 0;
  for (const auto& row : nt["rows"]) {
    const double size = row["size_bytes"].get<double>();
    const double algbw = size / (row["time_us"].get<double>() * 1e-6) * 1e-9;
    EXPECT_NEAR(row["algbw_GBps"].get<double>(), algbw, 1e-6 * algbw);
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), algbw * 2 * 7 / 8, 1e-6 * algbw) << "all_reduce: 2(n-1)/n";
    // Every rank sends 2(n-1)/n of the buffer at most at the NIC's 100 Gb/s (hierarchical: less).
    EXPECT_LT(row["busbw_GBps"].get<double>(), 8 * 12.5);
    sum += row["busbw_GBps"].get<double>();
  }
  EXPECT_NEAR(nt["avg_busbw_GBps"].get<double>(), sum / 3, 1e-9);
  EXPECT_EQ(doc["jobs"][0]["collectives"].size(), 3u);
}

TEST(CollectiveSweepCliTest, SizesAreRoundedAsNcclTestsRoundsThem) {
  CollectiveSweepSpec s;
  s.op = CollectiveOp::AllGather;
  s.minBytes = 1 << 20;
  s.maxBytes = 1 << 20;
  s.elementBytes = 4;
  const auto sizes = CollectiveSweep::sizes(s, 3);
  ASSERT_EQ(sizes.size(), 1u);
  // 1 MiB / 4 B / 3 ranks = 87381 elements per rank, down to a multiple of 16 bytes: 87380.
  EXPECT_EQ(sizes[0].second, 87380u);
  EXPECT_EQ(sizes[0].first, 87380 * 4 * 3);
  s.op = CollectiveOp::AllReduce;
  s.minBytes = 1000;
  s.maxBytes = 8000;
  s.factor = 2;
  const auto ar = CollectiveSweep::sizes(s, 3);
  ASSERT_EQ(ar.size(), 4u);
  EXPECT_EQ(ar[3].first, 8000);
  EXPECT_EQ(ar[3].second, 2000u);
}

// The step past the largest size need not fit in 64 bits (issue 21: the product overflowed):
// sizes from 2^62 up to 2^63 - 1 doubling are the one size 2^62, and 3 x 2^61 by a factor 1.5
// ends the list there too (its next, 4.5 x 2^61, is past the maximum).
TEST(CollectiveSweepCliTest, SizesNear2To63DoNotOverflow) {
  CollectiveSweepSpec s;
  s.op = CollectiveOp::AllReduce;
  s.elementBytes = 4;
  s.minBytes = Bytes{1} << 62;
  s.maxBytes = INT64_MAX;
  s.factor = 2;
  auto sizes = CollectiveSweep::sizes(s, 8);
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].first, Bytes{1} << 62);
  s.factor = 1.5;
  sizes = CollectiveSweep::sizes(s, 8);
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[1].first, 3 * (Bytes{1} << 61));
}

TEST(CollectiveSweepCliTest, TimelineIsAPerfettoTraceOfEveryRankAndStream) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", kTopo);
  const auto w = dir.write("w.yaml", "kind: training\nmodel: {layers: 4, hidden: 512, heads: 4, seq_len: 256, vocab: 1000}\n"
                                     "parallelism: {tp: 4, pp: 2, dp: 2, micro_batch: 1, global_batch: 4}\n");
  const auto r = testsupport::runFabricsim("run " + q(topo) + " --workload " + q(w) + " --quiet --timeline " +
                                               q(dir.file("tl.json")) + " --timeline-ranks 8",
                                           "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto doc = readJson(dir.file("tl.json"));
  std::set<std::string> cats;
  std::set<int> tids;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    cats.insert(e["cat"].get<std::string>());
    tids.insert(e["tid"].get<int>());
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_LT(e["tid"].get<int>() / 16, 8) << "only the first 8 ranks";
  }
  EXPECT_EQ(cats, (std::set<std::string>{"compute", "collective", "send", "recv"}));
  EXPECT_GE(tids.size(), 8u * 3);  // compute, send and receive streams of 8 ranks at least
}

TEST(CollectiveSweepCliTest, JobsThatDoNotFitAndMissingTracesAreClearErrors) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", kTopo);
  const auto big = dir.write("big.yaml", "kind: training\nmodel: {layers: 4, hidden: 512, heads: 4, seq_len: 256}\n"
                                         "parallelism: {tp: 4, pp: 2, dp: 4, micro_batch: 1, global_batch: 4}\n");
  auto r = testsupport::runFabricsim("run " + q(topo) + " --workload " + q(big) + " --quiet", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("big.yaml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("big.yaml:3: 'parallelism'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tp 4 x cp 1 x ep 1 x dp 4 x pp 2 = 32 GPUs, the fabric has 16"), std::string::npos) << r.out;
  // A shape the generator cannot split (fewer layers than stages) is reported against the
  // workload file too.
  const auto odd = dir.write("odd.yaml", "kind: training\nmodel: {layers: 1, hidden: 512, heads: 4, seq_len: 256}\n"
                                         "parallelism: {tp: 1, pp: 2, dp: 1, micro_batch: 1, global_batch: 4}\n");
  r = testsupport::runFabricsim("run " + q(topo) + " --workload " + q(odd) + " --quiet", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("error: " + odd), std::string::npos) << r.out;
  const auto tr = dir.write("tr.yaml", "kind: trace\ntrace: missing.json\n");
  r = testsupport::runFabricsim("run " + q(topo) + " --workload " + q(tr) + " --quiet", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("tr.yaml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("missing.json"), std::string::npos) << r.out;
  // Two jobs on overlapping explicit ranges.
  const auto a = dir.write("a.yaml", "kind: collective\noperation: all_gather\nranks: 8\nplacement: {first_gpu: 0}\n"
                                     "sizes: {min: 1MiB, max: 1MiB}\n");
  const auto b = dir.write("b.yaml", "kind: collective\noperation: all_gather\nranks: 8\nplacement: {first_gpu: 4}\n"
                                     "sizes: {min: 1MiB, max: 1MiB}\n");
  r = testsupport::runFabricsim("run " + q(topo) + " --workload " + q(a) + " --workload " + q(b) + " --quiet", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("already used by another job"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fabricsim
