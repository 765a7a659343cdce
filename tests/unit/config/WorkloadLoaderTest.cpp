// WorkloadLoader: every kind of the workload schema, presets, calibration, --set and diagnostics.
#include "sim/config/WorkloadLoader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sim/config/SpecJson.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    parseWorkloadYaml(yaml, "w.yaml", sets);
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

TEST(WorkloadLoaderTest, ReadsPattern) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: pattern\npattern: incast\nmessage_size: 2MB\nstart: 10us\nrepetitions: 3\ngap: 1us\n"
      "incast: {senders: 16, receiver: 5}\ntraffic_class: 3\ngpus: {first: 8, count: 32}\nqps_per_pair: 4\n",
      "dir/incast-x.yaml");
  EXPECT_EQ(w.name, "incast-x");
  EXPECT_EQ(w.pattern.pattern, PatternKind::Incast);
  EXPECT_EQ(w.pattern.messageSize, 2'000'000);
  EXPECT_EQ(w.pattern.start, Time::us(10));
  EXPECT_EQ(w.pattern.repetitions, 3);
  EXPECT_EQ(w.pattern.incastSenders, 16);
  EXPECT_EQ(w.pattern.incastReceiver, 5u);
  EXPECT_EQ(w.pattern.trafficClass, 3);
  EXPECT_EQ(w.pattern.firstGpu, 8u);
  EXPECT_EQ(w.pattern.gpus, 32u);
  EXPECT_EQ(w.pattern.qpsPerPair, 4);
  EXPECT_EQ(toJson(w)["incast"]["receiver"], 5);
}

TEST(WorkloadLoaderTest, UnknownKindIsClear) {
  const auto d = diagnosticsOf("kind: replay\nmodel: gpt3-175b\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "kind");
  EXPECT_EQ(d[0].line, 1);
  EXPECT_NE(d[0].message.find("expected one of pattern | collective | training | trace | chakra, found 'replay'"),
            std::string::npos);
}

TEST(WorkloadLoaderTest, ReportsEveryBadField) {
  const auto d =
      diagnosticsOf("kind: pattern\npattern: broadcast\nmessage_size: 1024\ntraffic_class: 9\nfoo: 1\n");
  ASSERT_EQ(d.size(), 4u);
  // In file order.
  EXPECT_EQ(d[0].key, "pattern");
  EXPECT_EQ(d[1].key, "message_size");
  EXPECT_EQ(d[2].key, "traffic_class");
  EXPECT_EQ(d[2].line, 4);
  EXPECT_EQ(d[3].key, "foo");
}

TEST(WorkloadLoaderTest, ExampleWorkloadsLoad) {
  for (const char* f :
       {"permutation-1mib.yaml", "permutation-2mb.yaml", "incast-16.yaml", "all-to-all-64k.yaml"}) {
    const WorkloadSpec w = loadWorkloadFile(std::string(FABRICSIM_SOURCE_DIR) + "/workloads/" + f);
    EXPECT_GT(w.pattern.messageSize, 0) << f;
  }
  EXPECT_EQ(loadWorkloadFile(std::string(FABRICSIM_SOURCE_DIR) + "/workloads/permutation-2mb.yaml")
                .pattern.messageSize,
            2'000'000);
}

TEST(WorkloadLoaderTest, EveryFileInWorkloadsParses) {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(FABRICSIM_SOURCE_DIR) + "/workloads")) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    try {
      const WorkloadSpec w = loadWorkloadFile(e.path().string());
      EXPECT_FALSE(toJson(w).dump().empty());
    } catch (const InputError& err) {
      ADD_FAILURE() << e.path() << ": " << err.what();
    }
  }
  EXPECT_GE(n, 13);
}

TEST(WorkloadLoaderTest, ExampleTrainingFiles) {
  const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/workloads/";
  const WorkloadSpec g = loadWorkloadFile(dir + "gpt3-175b.yaml");
  EXPECT_EQ(g.training.parallelism.tp * g.training.parallelism.pp * g.training.parallelism.dp, 256);
  EXPECT_EQ(g.training.model.layers, 96);
  const WorkloadSpec s = loadWorkloadFile(dir + "gpt-small.yaml");
  EXPECT_EQ(s.training.parallelism.tp * s.training.parallelism.pp * s.training.parallelism.dp, 32);
  EXPECT_EQ(s.training.model.ffnHidden, 4 * 2048);
  const WorkloadSpec a = loadWorkloadFile(dir + "nccl-allreduce.yaml");
  EXPECT_EQ(a.collective.op, CollectiveOp::AllReduce);
  EXPECT_EQ(a.collective.minBytes, 1 << 20);
  EXPECT_EQ(a.collective.maxBytes, 256 << 20);
  EXPECT_EQ(a.collective.warmup, 1);
  EXPECT_EQ(a.collective.iterations, 2);
}

// ---- collective ----

TEST(WorkloadLoaderTest, ReadsCollective) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: collective\nname: ar\nstart: 5us\noperation: reduce_scatter\nalgorithm: ring\n"
      "sizes: {min: 8KiB, max: 1MiB, step: 8KiB}\nhosts: 4\ngpus_per_host: 8\nwarmup: 0\niterations: 3\n"
      "data_type: bfloat16\nroot: 3\n"
      "collectives: {channels: 8, nvlink_channels: 2, step_latency_nvlink: 1us, step_latency_network: 3us,\n"
      "  protocol_efficiency: 0.9375, chunk_size: 512KiB, traffic_class: 2}\n"
      "placement: {policy: random-hosts, first_gpu: 16}\n",
      "dir/c.yaml");
  EXPECT_EQ(w.kind, "collective");
  EXPECT_EQ(w.name, "ar");
  EXPECT_EQ(w.start, Time::us(5));
  const CollectiveSweepSpec& c = w.collective;
  EXPECT_EQ(c.op, CollectiveOp::ReduceScatter);
  EXPECT_EQ(c.minBytes, 8192);
  EXPECT_EQ(c.maxBytes, 1 << 20);
  EXPECT_EQ(c.stepBytes, 8192);
  EXPECT_EQ(c.hosts, 4u);
  EXPECT_EQ(c.gpusPerHost, 8);
  EXPECT_EQ(c.ranks, 32u);
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.iterations, 3);
  EXPECT_EQ(c.dataType, "bfloat16");
  EXPECT_EQ(c.elementBytes, 2);
  EXPECT_EQ(c.root, 3u);
  const CollectiveTuning& t = w.tuning;
  EXPECT_EQ(t.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_EQ(t.channels, 8);
  EXPECT_EQ(t.nvlinkChannels, 2);
  EXPECT_EQ(t.stepLatencyNvlink, Time::us(1));
  EXPECT_EQ(t.stepLatencyNetwork, Time::us(3));
  EXPECT_DOUBLE_EQ(t.protocolEfficiency, 0.9375);
  EXPECT_EQ(t.chunkSize, 512 * 1024);
  EXPECT_EQ(t.trafficClass, 2);
  EXPECT_EQ(w.placement.policy, PlacementPolicy::RandomHosts);
  EXPECT_TRUE(w.placement.explicitRange);
  EXPECT_EQ(w.placement.firstGpu, 16u);
  const auto j = toJson(w);
  EXPECT_EQ(j["operation"], "reduce_scatter");
  EXPECT_EQ(j["sizes"]["step_bytes"], 8192);
  EXPECT_EQ(j["collectives"]["step_latency_network_ps"], 3'000'000);
  EXPECT_EQ(j["collectives"]["chunk_size_bytes"], 512 * 1024);
  EXPECT_EQ(j["collectives"]["algorithm"], "ring");
  EXPECT_EQ(j["placement"]["policy"], "random-hosts");
  EXPECT_EQ(j["start_ps"], 5'000'000);
}

TEST(WorkloadLoaderTest, CollectiveDefaults) {
  const WorkloadSpec w =
      parseWorkloadYaml("kind: collective\noperation: alltoall\nranks: 16\nplacement: random\n", "x.yaml");
  EXPECT_EQ(w.name, "x");
  EXPECT_EQ(w.collective.op, CollectiveOp::AllToAll);
  EXPECT_EQ(w.collective.ranks, 16u);
  EXPECT_EQ(w.collective.elementBytes, 4);
  EXPECT_DOUBLE_EQ(w.collective.factor, 2);
  EXPECT_EQ(w.tuning.algorithm, CollectiveAlgorithm::Auto);
  EXPECT_EQ(w.placement.policy, PlacementPolicy::Random);
  EXPECT_FALSE(w.placement.explicitRange);
}

TEST(WorkloadLoaderTest, CollectiveErrorsAllAtOnce) {
  const auto d = diagnosticsOf(
      "kind: collective\n"                                      // 1
      "operation: all_reduce\n"                                 // 2
      "sizes: {min: 4MiB, max: 1MiB, factor: 2, step: 1MiB}\n"  // 3
      "ranks: 8\n"                                              // 4
      "hosts: 2\n"                                              // 5
      "data_type: complex\n"                                    // 6
      "warmup: -1\n"                                            // 7
      "bogus: 1\n");                                            // 8
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0].key, "sizes.max");
  EXPECT_EQ(d[0].line, 3);
  EXPECT_EQ(d[1].key, "sizes.step");
  EXPECT_NE(d[1].message.find("mutually exclusive"), std::string::npos);
  EXPECT_EQ(d[2].key, "hosts");
  EXPECT_EQ(d[2].line, 5);
  EXPECT_NE(d[2].message.find("'ranks' and 'hosts' are mutually exclusive"), std::string::npos);
  EXPECT_EQ(d[3].key, "data_type");
  EXPECT_NE(d[3].message.find("found 'complex'"), std::string::npos);
  EXPECT_EQ(d[4].key, "warmup");
  EXPECT_EQ(d[5].key, "bogus");
  EXPECT_EQ(d[5].line, 8);
  EXPECT_NE(d[5].message.find("unknown key 'bogus'"), std::string::npos);
}

TEST(WorkloadLoaderTest, CollectiveMissingOperationAndBadValues) {
  const auto d = diagnosticsOf(
      "kind: collective\nsizes: {min: 1024, factor: 1}\nranks: 1\ngpus_per_host: 4\nalgorithm: tree\n"
      "collectives: {algorithm: ring, protocol_efficiency: 0, channels: 0, step_latency_network: 3}\n");
  std::vector<std::string> keys;
  for (const auto& x : d) keys.push_back(x.key);
  const std::vector<std::string> want = {"operation",
                                         "sizes.min",
                                         "sizes.factor",
                                         "ranks",
                                         "gpus_per_host",
                                         "algorithm",
                                         "collectives.channels",
                                         "collectives.step_latency_network",
                                         "collectives.protocol_efficiency"};
  for (const auto& k : want)
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << "missing diagnostic for " << k;
  EXPECT_EQ(d.size(), want.size());
  for (const auto& x : d) {
    if (x.key == "algorithm") {
      EXPECT_NE(x.message.find("contradicts 'collectives.algorithm: ring'"), std::string::npos);
    } else if (x.key == "sizes.factor") {
      EXPECT_NE(x.message.find("expected a number > 1"), std::string::npos);
    } else if (x.key == "sizes.min") {
      EXPECT_NE(x.message.find("1024"), std::string::npos);
    }
  }
}

// A size list that would hold more sizes than anyone simulates (issue 21: a factor of 1.0000001
// or a step of 1 KiB over 1 GiB grew until memory ran out) is refused at its key and line; the
// limit is 10,000 sizes (1 KiB steps over 1-9 MiB pass: 8,193 sizes).
TEST(WorkloadLoaderTest, SizeListsOfMillionsOfSizesAreRefused) {
  auto d = diagnosticsOf(
      "kind: collective\noperation: all_reduce\nsizes: {min: 1KiB, max: 1GiB, factor: 1.0000001}\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "sizes.factor");
  EXPECT_EQ(d[0].line, 3);
  EXPECT_NE(d[0].message.find("more than 10000 sizes"), std::string::npos) << d[0].message;
  d = diagnosticsOf("kind: collective\noperation: all_reduce\nsizes: {min: 1KiB, max: 1GiB, step: 1KiB}\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "sizes.step");
  EXPECT_NO_THROW(parseWorkloadYaml(
      "kind: collective\noperation: all_reduce\nsizes: {min: 1MiB, max: 9MiB, step: 1KiB}\n", "w.yaml"));
}

TEST(WorkloadLoaderTest, AlgorithmShorthandAgreeingWithBlockIsFine) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: collective\noperation: all_reduce\nalgorithm: tree\ncollectives: {algorithm: tree}\n", "w.yaml");
  EXPECT_EQ(w.tuning.algorithm, CollectiveAlgorithm::Tree);
}

TEST(WorkloadLoaderTest, RootMustBeARank) {
  const auto d = diagnosticsOf("kind: collective\noperation: broadcast\nranks: 4\nroot: 4\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "root");
  EXPECT_EQ(d[0].line, 4);
}

// ---- training ----

TEST(WorkloadLoaderTest, ReadsTrainingPresets) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: training\nmodel: llama3-70b\ngpu: h200-sxm\n"
      "parallelism: {tp: 8, pp: 4, dp: 2, micro_batch: 2, global_batch: 64, schedule: interleaved,\n"
      "  virtual_stages: 2, sequence_parallel: true, distributed_optimizer: true, recompute: full}\n"
      "iterations: 3\ndtype: fp8\ndp_bucket: 100MB\ncommunication: false\ntp_granularity: stage\n",
      "t.yaml");
  EXPECT_EQ(w.kind, "training");
  const ModelSpec& m = w.training.model;
  EXPECT_EQ(m.preset, "llama3-70b");
  EXPECT_EQ(m.layers, 80);
  EXPECT_EQ(m.hidden, 8192);
  EXPECT_EQ(m.ffnHidden, 28672);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kvHeads, 8);
  EXPECT_EQ(m.seqLen, 8192);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_TRUE(m.gatedMlp);
  const GpuSpec& g = w.training.gpu;
  EXPECT_EQ(g.preset, "h200-sxm");
  EXPECT_DOUBLE_EQ(g.peakFlops, 989e12);
  EXPECT_DOUBLE_EQ(g.hbmBytesPerSecond, 4.8e12);
  EXPECT_DOUBLE_EQ(g.gemmEfficiency, GpuSpec{}.gemmEfficiency);
  const ParallelismSpec& p = w.training.parallelism;
  EXPECT_EQ(p.tp, 8);
  EXPECT_EQ(p.pp, 4);
  EXPECT_EQ(p.dp, 2);
  EXPECT_EQ(p.microBatch, 2);
  EXPECT_EQ(p.globalBatch, 64);
  EXPECT_EQ(p.schedule, "interleaved");
  EXPECT_EQ(p.virtualStages, 2);
  EXPECT_TRUE(p.sequenceParallel);
  EXPECT_TRUE(p.distributedOptimizer);
  EXPECT_EQ(p.recompute, "full");
  EXPECT_EQ(w.training.iterations, 3);
  EXPECT_EQ(w.training.dtype, "fp8");
  EXPECT_EQ(w.training.dtypeBytes, 1);
  EXPECT_EQ(w.training.dpBucketBytes, 100'000'000);
  EXPECT_FALSE(w.training.communication);
  EXPECT_EQ(w.training.tpGranularity, "stage");
  const auto j = toJson(w);
  EXPECT_EQ(j["model"]["layers"], 80);
  EXPECT_EQ(j["model"]["kv_heads"], 8);
  EXPECT_EQ(j["gpu"]["preset"], "h200-sxm");
  EXPECT_DOUBLE_EQ(j["gpu"]["hbm_bandwidth_bytes_per_second"].get<double>(), 4.8e12);
  EXPECT_EQ(j["parallelism"]["global_batch"], 64);
  EXPECT_EQ(j["dp_bucket_bytes"], 100'000'000);
}

TEST(WorkloadLoaderTest, ModelPresetsArePublishedShapes) {
  const WorkloadSpec a = parseWorkloadYaml("kind: training\nmodel: gpt3-175b\n", "a.yaml");
  EXPECT_EQ(a.training.model.layers, 96);
  EXPECT_EQ(a.training.model.hidden, 12288);
  EXPECT_EQ(a.training.model.ffnHidden, 49152);
  EXPECT_EQ(a.training.model.heads, 96);
  EXPECT_EQ(a.training.model.kvHeads, 96);
  EXPECT_EQ(a.training.model.seqLen, 2048);
  EXPECT_EQ(a.training.model.vocab, 50257);
  EXPECT_FALSE(a.training.model.gatedMlp);
  EXPECT_EQ(a.training.gpu.preset, "h100-sxm");  // the default GPU
  EXPECT_DOUBLE_EQ(a.training.gpu.hbmBytesPerSecond, 3.35e12);
  const WorkloadSpec b = parseWorkloadYaml("kind: training\nmodel: llama3-405b\n", "b.yaml");
  EXPECT_EQ(b.training.model.layers, 126);
  EXPECT_EQ(b.training.model.hidden, 16384);
  EXPECT_EQ(b.training.model.ffnHidden, 53248);
  EXPECT_EQ(b.training.model.heads, 128);
  EXPECT_EQ(b.training.model.kvHeads, 8);
  EXPECT_EQ(b.training.model.vocab, 128256);
}

TEST(WorkloadLoaderTest, ModelMapOverridesPreset) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: training\nmodel: {preset: gpt3-175b, layers: 4, seq_len: 4096}\n"
      "gpu: {preset: h100-sxm, peak: 1.2PFLOPS, hbm_bandwidth: 4TBps, efficiency: {gemm: 0.7, attention: "
      "0.5}}\n",
      "w.yaml");
  EXPECT_EQ(w.training.model.preset, "gpt3-175b");
  EXPECT_EQ(w.training.model.layers, 4);
  EXPECT_EQ(w.training.model.seqLen, 4096);
  EXPECT_EQ(w.training.model.hidden, 12288);
  EXPECT_DOUBLE_EQ(w.training.gpu.peakFlops, 1.2e15);
  EXPECT_DOUBLE_EQ(w.training.gpu.hbmBytesPerSecond, 4e12);
  EXPECT_DOUBLE_EQ(w.training.gpu.gemmEfficiency, 0.7);
  EXPECT_DOUBLE_EQ(w.training.gpu.attentionEfficiency, 0.5);
}

TEST(WorkloadLoaderTest, CustomModelDefaults) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: training\nmodel: {layers: 2, hidden: 1024, heads: 8, seq_len: 512}\ngpu: {peak: 500TFLOPS, "
      "efficiency: 0.5}\n",
      "w.yaml");
  EXPECT_EQ(w.training.model.preset, "");
  EXPECT_EQ(w.training.model.ffnHidden, 4096);
  EXPECT_EQ(w.training.model.kvHeads, 8);
  EXPECT_EQ(w.training.model.vocab, 0);
  EXPECT_EQ(w.training.gpu.preset, "");
  EXPECT_DOUBLE_EQ(w.training.gpu.peakFlops, 500e12);
  EXPECT_DOUBLE_EQ(w.training.gpu.gemmEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(w.training.gpu.attentionEfficiency, 0.5);
  EXPECT_EQ(w.training.parallelism.globalBatch, 1);
}

TEST(WorkloadLoaderTest, CustomModelNeedsItsShape) {
  const auto d = diagnosticsOf("kind: training\nmodel: {hidden: 1024}\n");
  ASSERT_EQ(d.size(), 3u);
  for (const auto& x : d) EXPECT_EQ(x.line, 2);
  EXPECT_EQ(d[0].key, "model.layers");
  EXPECT_EQ(d[1].key, "model.heads");
  EXPECT_EQ(d[2].key, "model.seq_len");
  EXPECT_NE(d[0].message.find("missing required key 'layers'"), std::string::npos);
}

TEST(WorkloadLoaderTest, ModelDivisibility) {
  auto d = diagnosticsOf("kind: training\nmodel:\n  preset: llama3-70b\n  heads: 48\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "model.heads");
  EXPECT_EQ(d[0].line, 4);
  EXPECT_NE(d[0].message.find("hidden (8192) must be divisible by heads, found heads 48"), std::string::npos);
  d = diagnosticsOf("kind: training\nmodel: {preset: llama3-70b, kv_heads: 6}\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "model.kv_heads");
  EXPECT_NE(d[0].message.find("heads (64) must be divisible by kv_heads, found kv_heads 6"),
            std::string::npos);
}

TEST(WorkloadLoaderTest, UnknownPresetsListTheKnownOnes) {
  const auto d = diagnosticsOf("kind: training\nmodel: gpt4\ngpu: {preset: b200, peak: 2PFLOPS}\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].key, "model");
  EXPECT_NE(d[0].message.find("gpt3-175b | llama3-70b | llama3-405b"), std::string::npos);
  EXPECT_NE(d[0].message.find("found 'gpt4'"), std::string::npos);
  EXPECT_EQ(d[1].key, "gpu.preset");
  EXPECT_NE(d[1].message.find("h100-sxm | h200-sxm"), std::string::npos);
}

TEST(WorkloadLoaderTest, GpuUnitsAreChecked) {
  const auto d = diagnosticsOf(
      "kind: training\nmodel: gpt3-175b\ngpu:\n  peak: 989\n  hbm_bandwidth: 3.35TB\n  efficiency: 1.5\n"
      "  clock: 2GHz\n");
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].key, "gpu.peak");
  EXPECT_EQ(d[0].line, 4);
  EXPECT_NE(d[0].message.find("bare number"), std::string::npos);
  EXPECT_EQ(d[1].key, "gpu.hbm_bandwidth");
  EXPECT_EQ(d[2].key, "gpu.efficiency");
  EXPECT_NE(d[2].message.find("expected a positive number at most 1, found 1.5"), std::string::npos);
  EXPECT_EQ(d[3].key, "gpu.clock");
  const auto e = diagnosticsOf("kind: training\nmodel: gpt3-175b\ngpu: {peak: 989TB}\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].message.find("FLOPS, GFLOPS, TFLOPS or PFLOPS"), std::string::npos);
}

TEST(WorkloadLoaderTest, GlobalBatchMustDivide) {
  const auto d = diagnosticsOf(
      "kind: training\nmodel: gpt3-175b\nparallelism: {tp: 8, pp: 8, dp: 16, micro_batch: 2, global_batch: "
      "100}\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "parallelism.global_batch");
  EXPECT_EQ(d[0].line, 3);
  EXPECT_NE(d[0].message.find("micro_batch * dp = 2 * 16 = 32, found 100"), std::string::npos);
}

TEST(WorkloadLoaderTest, ParallelismRules) {
  const auto d = diagnosticsOf(
      "kind: training\nmodel: gpt3-175b\nparallelism:\n  tp: 1\n  virtual_stages: 2\n  sequence_parallel: "
      "true\n"
      "  schedule: gpipe\n  pp: 0\n");
  std::vector<std::string> keys;
  for (const auto& x : d) keys.push_back(x.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"parallelism.virtual_stages", "parallelism.sequence_parallel",
                                            "parallelism.schedule", "parallelism.pp"}));
  EXPECT_NE(d[0].message.find("only to 'schedule: interleaved'"), std::string::npos);
  EXPECT_NE(d[1].message.find("tp > 1"), std::string::npos);
}

TEST(WorkloadLoaderTest, TrainingTopLevelErrors) {
  const auto d = diagnosticsOf(
      "kind: training\nmodel: gpt3-175b\ndtype: int4\niterations: 0\ndp_bucket: 25\noperation: all_reduce\n"
      "placement: {policy: spread}\n");
  std::vector<std::string> keys;
  for (const auto& x : d) keys.push_back(x.key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"dtype", "iterations", "dp_bucket", "operation", "placement.policy"}));
  EXPECT_NE(d[3].message.find("unknown key 'operation'"), std::string::npos);
}

TEST(WorkloadLoaderTest, TrainingNeedsAModel) {
  const auto d = diagnosticsOf("kind: training\niterations: 2\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "model");
}

// ---- trace ----

TEST(WorkloadLoaderTest, ReadsTrace) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: trace\ntrace: traces/job.json\nstart: 1ms\nplacement: rail-aligned\n", "runs/w/t.yaml");
  EXPECT_EQ(w.kind, "trace");
  EXPECT_EQ(w.trace.path, "runs/w/traces/job.json");
  EXPECT_EQ(w.start, Time::ms(1));
  EXPECT_EQ(toJson(w)["trace"], "runs/w/traces/job.json");
  const auto d = diagnosticsOf("kind: trace\nmodel: gpt3-175b\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].key, "trace");  // reported at the top-level map, line 1
  EXPECT_NE(d[0].message.find("missing required key 'trace'"), std::string::npos);
  EXPECT_EQ(d[1].key, "model");
  EXPECT_EQ(d[1].line, 2);
}

// ---- --set ----

TEST(WorkloadLoaderTest, SetOverridesApply) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: training\nmodel: gpt3-175b\nparallelism: {tp: 8, pp: 8, dp: 4, global_batch: 128}\n", "w.yaml",
      {"parallelism.dp=8", "parallelism.global_batch=256", "model={preset: gpt3-175b, layers: 12}",
       "gpu=h200-sxm", "collectives.channels=2"});
  EXPECT_EQ(w.training.parallelism.dp, 8);
  EXPECT_EQ(w.training.parallelism.globalBatch, 256);
  EXPECT_EQ(w.training.parallelism.tp, 8);
  EXPECT_EQ(w.training.model.layers, 12);
  EXPECT_EQ(w.training.model.hidden, 12288);
  EXPECT_EQ(w.training.gpu.preset, "h200-sxm");
  EXPECT_EQ(w.tuning.channels, 2);
}

TEST(WorkloadLoaderTest, SetOverridesAreNamedInDiagnostics) {
  const auto d = diagnosticsOf("kind: collective\noperation: all_reduce\nsizes: {min: 1MiB, max: 4MiB}\n",
                               {"sizes.max=4", "iterations=0"});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].key, "sizes.max");
  EXPECT_EQ(d[0].line, 0);
  EXPECT_NE(d[0].message.find("(given by --set 'sizes.max=4')"), std::string::npos);
  EXPECT_EQ(d[1].key, "iterations");
  EXPECT_NE(d[1].message.find("(given by --set 'iterations=0')"), std::string::npos);
  const auto bad = diagnosticsOf("kind: pattern\n", {"novalue"});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].file, "w.yaml");
  EXPECT_EQ(bad[0].key, "--set");
}

TEST(WorkloadLoaderTest, SetCanChangeKind) {
  const WorkloadSpec w =
      parseWorkloadYaml("kind: pattern\n", "w.yaml", {"kind=collective", "operation=alltoall"});
  EXPECT_EQ(w.kind, "collective");
  EXPECT_EQ(w.collective.op, CollectiveOp::AllToAll);
}

// ---- calibration ----

class WorkloadCalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fabricsim-wl-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "cal");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& rel, const std::string& text) {
    std::ofstream(dir_ / rel) << text;
    return (dir_ / rel).string();
  }
  std::filesystem::path dir_;
};

TEST_F(WorkloadCalibrationTest, PresetThenCalibrationThenExplicitKeys) {
  write("cal/c.yaml",
        "source: fit against 16 H100 nodes\n"
        "gpu: {peak: 900TFLOPS, efficiency: {gemm: 0.65, attention: 0.4}, hbm_bandwidth: 3TBps}\n"
        "collectives: {channels: 16, step_latency_network: 5us, protocol_efficiency: 0.9}\n"
        "fit: {rmse: 0.03, points: 42, per_size: {a: 1}}\n");
  const std::string w =
      write("w.yaml",
            "kind: training\nmodel: gpt3-175b\ngpu: {preset: h200-sxm, efficiency: {gemm: 0.7}}\n"
            "calibration: cal/c.yaml\ncollectives: {channels: 2}\n");
  const WorkloadSpec s = loadWorkloadFile(w);
  EXPECT_EQ(s.calibrationPath, (dir_ / "cal/c.yaml").lexically_normal().string());
  EXPECT_EQ(s.training.gpu.preset, "h200-sxm");
  EXPECT_DOUBLE_EQ(s.training.gpu.peakFlops, 900e12);         // calibration over preset
  EXPECT_DOUBLE_EQ(s.training.gpu.hbmBytesPerSecond, 3e12);   // calibration over preset
  EXPECT_DOUBLE_EQ(s.training.gpu.gemmEfficiency, 0.7);       // explicit over calibration
  EXPECT_DOUBLE_EQ(s.training.gpu.attentionEfficiency, 0.4);  // calibration
  EXPECT_EQ(s.tuning.channels, 2);                            // explicit over calibration
  EXPECT_EQ(s.tuning.stepLatencyNetwork, Time::us(5));        // calibration over default
  EXPECT_DOUBLE_EQ(s.tuning.protocolEfficiency, 0.9);
  EXPECT_EQ(toJson(s)["calibration"], s.calibrationPath);
}

TEST_F(WorkloadCalibrationTest, ErrorsInBothFilesReportedTogether) {
  write("c.yaml", "gpu: {peak: 9e14}\ncollectives: {channels: 0}\nextra: 1\n");
  const std::string w =
      write("w.yaml", "kind: collective\noperation: all_reduce\ncalibration: c.yaml\nwarmup: x\n");
  try {
    loadWorkloadFile(w);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const auto& d = e.diagnostics();
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d[0].file, w);
    EXPECT_EQ(d[0].key, "warmup");
    const std::string cal = (dir_ / "c.yaml").lexically_normal().string();
    EXPECT_EQ(d[1].file, cal);
    EXPECT_EQ(d[1].key, "gpu.peak");
    EXPECT_EQ(d[1].line, 1);
    EXPECT_EQ(d[2].key, "collectives.channels");
    EXPECT_EQ(d[2].line, 2);
    EXPECT_EQ(d[3].key, "extra");
  }
}

TEST_F(WorkloadCalibrationTest, MissingCalibrationFileNamesTheKey) {
  const std::string w = write("w.yaml", "kind: collective\noperation: all_reduce\ncalibration: nope.yaml\n");
  try {
    loadWorkloadFile(w);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].key, "calibration");
    EXPECT_EQ(e.diagnostics()[0].line, 3);
    EXPECT_NE(e.diagnostics()[0].message.find("nope.yaml"), std::string::npos);
  }
}

// ---- names ----

TEST(WorkloadLoaderTest, EnumNamesRoundTrip) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                  CollectiveOp::AllToAll, CollectiveOp::Broadcast, CollectiveOp::SendRecv})
    EXPECT_EQ(parseCollectiveOp(toString(op)), op);
  EXPECT_STREQ(toString(CollectiveOp::AllToAll), "alltoall");
  EXPECT_STREQ(toString(CollectiveAlgorithm::Direct), "direct");
  EXPECT_STREQ(toString(PlacementPolicy::RandomHosts), "random-hosts");
  EXPECT_FALSE(parseCollectiveOp("all-reduce").has_value());
  EXPECT_EQ(parsePlacementPolicy("random"), PlacementPolicy::Random);
}

TEST(WorkloadLoaderTest, PatternJsonUnchanged) {
  const auto j = toJson(parseWorkloadYaml("kind: pattern\npattern: permutation\n", "p.yaml"));
  EXPECT_EQ(j.size(), 11u);
  EXPECT_FALSE(j.contains("collectives"));
  EXPECT_EQ(j["pattern"], "permutation");
}

}  // namespace
}  // namespace fabricsim
