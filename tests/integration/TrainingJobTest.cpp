// Training jobs and collectives end to end: the 1F1B closed form, per-GPU traffic against the
// TP/PP/DP formulas, jobs sharing (or not sharing) the fabric, and trace replay.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "sim/runtime/Experiment.h"
#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

using testsupport::TempDir;

std::string leafSpine(int leaves, int spines, int hostsPerLeaf, int gpusPerHost) {
  return "name: t\ntopology: {kind: leaf-spine, leaves: " + std::to_string(leaves) + ", spines: " +
         std::to_string(spines) + ", hosts_per_leaf: " + std::to_string(hostsPerLeaf) +
         "}\nhosts: {gpus_per_host: " + std::to_string(gpusPerHost) +
         ", nvlink: {bandwidth: 400GBps, latency: 1us}}\n"
         "links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps, latency: 1us, mtu: 4096}\n";
}

std::unique_ptr<Experiment> run(const std::string& topo, const std::vector<std::string>& workloads) {
  RunOptions o;
  o.topologyPath = topo;
  o.workloadPaths = workloads;
  o.progress = false;
  o.keepFlowRecords = true;
  auto e = std::make_unique<Experiment>(o);
  e->run();
  return e;
}

// A compute-only pipeline (no embedding or output layer, so the stages are uniform) takes
// exactly (m + p - 1)(t_f + t_b) + t_opt per iteration: m micro-batches, p stages, t_f and t_b
// one micro-batch's forward and backward on one stage, t_opt the optimizer step that closes
// the iteration. Integer picoseconds: exact equality.
TEST(TrainingJobTest, ComputeOnlyPipelineMatchesTheOneFOneBClosedForm) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", leafSpine(2, 1, 4, 1));
  for (const auto& [p, m] : std::vector<std::pair<int, int>>{{4, 8}, {2, 3}, {8, 8}, {1, 4}}) {
    const auto w = dir.write("w.yaml", "kind: training\nmodel: {layers: 16, hidden: 1024, heads: 8, seq_len: 512, vocab: 0}\n"
                                       "parallelism: {tp: 1, pp: " + std::to_string(p) + ", dp: 1, micro_batch: 1, global_batch: " +
                                           std::to_string(m) + "}\niterations: 2\ncommunication: false\n");
    auto e = run(topo, {w});
    const auto& job = e->jobs().at(0);
    const JobTrace& t = *job.trace;
    ASSERT_EQ(t.microbatches, m);
    ASSERT_GT(t.microbatchForward, Time::zero());
    ASSERT_GT(t.microbatchBackward, t.microbatchForward);
    Time optimizer;
    for (const auto& op : t.programs[0].ops)
      if (op.type == OpType::Compute && t.programs[0].labels[op.label] == "optimizer") optimizer += op.duration;
    ASSERT_GT(optimizer, Time::zero());
    const Time expected = (t.microbatchForward + t.microbatchBackward) * (m + p - 1) + optimizer;
    const auto& ends = job.executor->iterationEnds();
    ASSERT_EQ(ends.size(), 2u);
    EXPECT_EQ(ends[0] - job.executor->startTime(), expected) << "p=" << p << " m=" << m;
    EXPECT_EQ(ends[1] - ends[0], expected) << "p=" << p << " m=" << m;
    // Compute-only: nothing is exposed, and the idle time is the bubble (p-1)/(m+p-1).
    const auto r = e->results()["jobs"][0];
    EXPECT_NEAR(r["exposed_comm_s"].get<double>(), 0.0, 1e-12);
    EXPECT_NEAR(r["pipeline"]["bubble_fraction"].get<double>(), double(p - 1) / (m + p - 1), 1e-12);
    EXPECT_NEAR(r["idle_s"].get<double>() / (r["jct_s"].get<double>() / 2 - optimizer.seconds()) / 2,
                double(p - 1) / (m + p - 1), 1e-9);
  }
}

// The interleaved schedule with v chunks per stage (one layer each) and m a multiple of p: a
// compute-only iteration idles (p - 1)(t_f + t_b) / v, i.e. (p - 1) / (v m) of the ideal time
// m (t_f + t_b) (Narayanan et al. 2021, Megatron-LM's interleaved 1F1B), to the picosecond
// up to one per op; the results' bubble_fraction is that idle over the iteration.
TEST(TrainingJobTest, ComputeOnlyInterleavedBubbleIsPMinusOneOverVM) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", leafSpine(2, 1, 4, 1));
  for (const auto& [p, v, m] : std::vector<std::tuple<int, int, int>>{{4, 2, 8}, {4, 4, 4}, {3, 2, 6}}) {
    const auto w = dir.write("w.yaml", "kind: training\nmodel: {layers: " + std::to_string(p * v) +
                                           ", hidden: 1024, heads: 8, seq_len: 512, vocab: 0}\n"
                                           "parallelism: {tp: 1, pp: " + std::to_string(p) +
                                           ", dp: 1, micro_batch: 1, global_batch: " + std::to_string(m) +
                                           ", schedule: interleaved, virtual_stages: " + std::to_string(v) +
                                           "}\ncommunication: false\n");
    auto e = run(topo, {w});
    const JobTrace& t = *e->jobs().at(0).trace;
    const double tfb = (t.microbatchForward + t.microbatchBackward).seconds();  // a stage's v chunks
    const auto r = e->results()["jobs"][0];
    // Tolerance: 1 ps of rounding per op (a few hundred ops).
    EXPECT_NEAR(r["idle_s"].get<double>(), (p - 1) * tfb / v, 1e-9) << p << " " << v << " " << m;
    EXPECT_NEAR(r["idle_s"].get<double>() / (m * tfb), double(p - 1) / (v * m), 1e-9);
    EXPECT_EQ(r["pipeline"]["virtual_stages"].get<int>(), v);
    EXPECT_NEAR(r["pipeline"]["bubble_fraction"].get<double>(), double(p - 1) / (v * m + p - 1), 1e-12);
  }
}

// What each GPU puts on the wire in one iteration, taken from the fabric's flow records and
// classified by the ranks at both ends, against the formulas (docs/training-model.md):
//   TP: 4 all-reduces per layer and micro-batch of S = b*s*h*2 bytes; a ring all-reduce over t
//       ranks sends 2(t-1)/t * S per rank;
//   PP: one message of S/t per micro-batch, forward on stage 0, backward on stage 1;
//   DP: a ring all-reduce over d ranks of the stage's gradients, (layers/p)(12h^2 + 4h)/t * 2.
TEST(TrainingJobTest, BytesPerGpuMatchTheTpPpDpFormulas) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", leafSpine(2, 2, 2, 2));
  const auto w = dir.write("w.yaml", "kind: training\nmodel: {layers: 4, hidden: 512, heads: 4, seq_len: 256, vocab: 0}\n"
                                     "parallelism: {tp: 2, pp: 2, dp: 2, micro_batch: 1, global_batch: 4}\n"
                                     "collectives: {algorithm: ring}\n");
  auto e = run(topo, {w});
  const auto& job = e->jobs().at(0);
  std::map<uint32_t, uint32_t> rankOf;
  for (uint32_t r = 0; r < job.gpus.size(); ++r) rankOf[job.gpus[r]] = r;
  const int64_t b = 1, s = 256, h = 512, t = 2, d = 2, m = 2, layersPerStage = 2;
  const int64_t S = b * s * h * 2;
  std::map<uint32_t, std::map<std::string, int64_t>> sent;  // GPU -> kind -> bytes
  for (const auto& f : e->fabric().flowRecords()) {
    const uint32_t a = rankOf.at(f.srcGpu), c = rankOf.at(f.dstGpu);
    const auto tpOf = [&](uint32_t r) { return r % t; };
    const auto dpOf = [&](uint32_t r) { return (r / t) % d; };
    const auto ppOf = [&](uint32_t r) { return r / (t * d); };
    std::string kind = "other";
    if (dpOf(a) == dpOf(c) && ppOf(a) == ppOf(c)) kind = "tp";
    else if (tpOf(a) == tpOf(c) && dpOf(a) == dpOf(c)) kind = "pp";
    else if (tpOf(a) == tpOf(c) && ppOf(a) == ppOf(c)) kind = "dp";
    sent[f.srcGpu][kind] += f.bytes;
    if (kind == "tp") {
      EXPECT_TRUE(f.intraHost) << "TP stays inside the host (rail-aligned placement)";
    }
  }
  ASSERT_EQ(sent.size(), 8u);
  for (const auto& [gpu, kinds] : sent) {
    EXPECT_EQ(kinds.count("other"), 0u);
    EXPECT_EQ(kinds.at("tp"), layersPerStage * m * 4 * 2 * (t - 1) * S / t) << "GPU " << gpu;
    EXPECT_EQ(kinds.at("pp"), m * S / t) << "GPU " << gpu;
    // Gradients reduced in fp32 (4 bytes each; Megatron's default with bf16 training).
    EXPECT_EQ(kinds.at("dp"), 2 * (d - 1) * (layersPerStage * (12 * h * h + 4 * h) / t * 4) / d)
        << "GPU " << gpu;
  }
}

// Two jobs whose rings cross the same leaf uplink (one spine) slow each other down; two jobs in
// different leaves of a leaf-spine do not touch a common link and finish exactly as alone.
TEST(TrainingJobTest, JobsSharingLinksInterfereAndDisjointJobsDoNot) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", leafSpine(3, 1, 4, 1));
  auto job = [&](const std::string& name, int first) {
    return dir.write(name, "kind: collective\nname: " + name + "\noperation: all_reduce\nalgorithm: ring\n"
                           "sizes: {min: 16MiB, max: 16MiB}\nranks: 4\nwarmup: 0\niterations: 1\n"
                           "placement: {first_gpu: " + std::to_string(first) + "}\n");
  };
  const auto jct = [](const Experiment& e, size_t i) { return e.results()["jobs"][i]["jct_s"].get<double>(); };
  // Shared: A on GPUs 2..5 (leaves 0 and 1), B on 6..9 (leaves 1 and 2): both cross leaf 1's links.
  const auto a = job("a.yaml", 2), b = job("b.yaml", 6);
  const double aloneA = jct(*run(topo, {a}), 0), aloneB = jct(*run(topo, {b}), 0);
  auto both = run(topo, {a, b});
  EXPECT_GT(jct(*both, 0), aloneA * 1.3);
  EXPECT_GT(jct(*both, 1), aloneB * 1.3);
  // Disjoint: C on leaf 0 (GPUs 0..3), D on leaf 2 (GPUs 8..11).
  const auto c = job("c.yaml", 0), d = job("d.yaml", 8);
  const double aloneC = jct(*run(topo, {c}), 0), aloneD = jct(*run(topo, {d}), 0);
  auto apart = run(topo, {c, d});
  EXPECT_DOUBLE_EQ(jct(*apart, 0), aloneC);
  EXPECT_DOUBLE_EQ(jct(*apart, 1), aloneD);
}

// `fabricsim trace` then `kind: trace` gives the generator's JCT exactly; a trace regenerated
// with another DP degree has the new number of ranks.
TEST(TrainingJobTest, TraceReplayReproducesTheGeneratorsJct) {
  TempDir dir;
  const auto topo = dir.write("t.yaml", leafSpine(2, 2, 2, 4));
  const auto w = dir.write("train.yaml",
                           "kind: training\nname: gpt-tiny\nmodel: {layers: 4, hidden: 1024, heads: 8, seq_len: 512, vocab: 32000}\n"
                           "parallelism: {tp: 4, pp: 2, dp: 2, micro_batch: 1, global_batch: 8}\niterations: 2\n");
  const auto q = [](const std::string& s) { return "'" + s + "'"; };
  auto r = testsupport::runFabricsim("trace " + q(topo) + " --workload " + q(w) + " --out " + q(dir.file("t.json")), "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto replay = dir.write("replay.yaml", "kind: trace\nname: replay\ntrace: t.json\n");
  auto gen = run(topo, {w});
  auto rep = run(topo, {replay});
  const auto g = gen->results()["jobs"][0], p = rep->results()["jobs"][0];
  EXPECT_EQ(g["jct_s"].get<double>(), p["jct_s"].get<double>());
  EXPECT_EQ(g["iterations"].dump(), p["iterations"].dump());
  EXPECT_EQ(gen->results()["network"]["bytes_sent"], rep->results()["network"]["bytes_sent"]);
  EXPECT_EQ(gen->jobs()[0].gpus, rep->jobs()[0].gpus);

  r = testsupport::runFabricsim("trace " + q(topo) + " --workload " + q(dir.file("t.json")) +
                                    " --workload-set parallelism.dp=1 --out " + q(dir.file("t1.json")),
                                "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("8 ranks"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fabricsim
