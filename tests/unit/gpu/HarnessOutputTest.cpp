#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "gpu/common/CollectiveOptions.h"
#include "gpu/common/CollectiveReport.h"
#include "gpu/common/ComputeOptions.h"
#include "gpu/common/ComputeReport.h"
#include "gpu/common/HostInfo.h"
#include "gpu/common/NcclTestsTable.h"
#include "gpu/common/TransformerGemms.h"

using namespace fabricsim::gpu;
namespace fs = std::filesystem;

namespace {

CollectiveSweepParams allReduceParams() {
  CollectiveSweepParams p;
  p.collective = Collective::kAllReduce;
  p.type = DataType::kFloat;
  p.op = ReduceOp::kSum;
  p.minBytes = 8;
  p.maxBytes = 134217728;
  p.stepFactor = 2;
  p.warmupIters = 5;
  p.iters = 20;
  p.checkIters = 1;
  p.ranks = 8;
  return p;
}

std::vector<const char*> argv(std::initializer_list<const char*> args) {
  std::vector<const char*> v{"prog"};
  v.insert(v.end(), args);
  return v;
}

}  // namespace

TEST(GpuNcclTestsTable, RowsAndHeadersMatchNcclTestsByteForByte) {
  const auto p = allReduceParams();
  CollectiveRow row;
  row.bytes = 134217728;
  row.count = 33554432;
  row.outOfPlace = {1234.56, 108.72, 190.26, 0};
  row.inPlace = {12345.6, 10.87, 19.03, 0};
  std::ostringstream os;
  NcclTestsTable::writeRow(os, p, row);
  EXPECT_EQ(
      os.str(),
      "   134217728      33554432     float     sum      -1   1234.6  108.72  190.26      0    12346   10.87"
      "   19.03      0\n");
  EXPECT_EQ(NcclTestsTable::formatTime(20.537), "  20.54");
  EXPECT_EQ(NcclTestsTable::formatTime(100.0), "  100.0");

  std::ostringstream pre;
  RankDevice d{0, 0, 4242, "node-001", 0, 0x18, "NVIDIA H100 80GB HBM3"};
  NcclTestsTable::writePreamble(pre, p, {d});
  const std::string text = pre.str();
  EXPECT_NE(text.find("# Collective test starting: all_reduce_perf\n"), std::string::npos);
  EXPECT_NE(text.find("# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 "
                      "iters: 20 agg iters: 1 validation: 1 graph: 0\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("#  Rank  0 Group  0 Pid   4242 on   node-001 device  0 [0x18] NVIDIA H100 80GB HBM3\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("#       size         count      type   redop    root     time   algbw   busbw #wrong     "
                "time   algbw   busbw #wrong\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
                "(us)  (GB/s)  (GB/s)       \n"),
      std::string::npos);
}

TEST(GpuNcclTestsTable, UncheckedInPlaceAndFooter) {
  auto p = allReduceParams();
  p.collective = Collective::kAllToAll;
  CollectiveRow row;
  row.bytes = 1024;
  row.count = 32;
  row.outOfPlace = {10, 0.1, 0.0875, 0};
  row.inPlace = {10, 0.1, 0.0875, std::nullopt};
  std::ostringstream os;
  NcclTestsTable::writeRow(os, p, row);
  EXPECT_EQ(os.str().substr(0, 52), "        1024            32     float    none      -1");
  EXPECT_EQ(os.str().substr(os.str().size() - 6), "  N/A\n");
  CollectiveRow bad = row;
  bad.outOfPlace.wrong = 3;
  bad.outOfPlace.busBwGBps = 1.0;
  bad.inPlace.busBwGBps = 3.0;
  std::ostringstream foot;
  NcclTestsTable::writeFooter(foot, {bad});
  EXPECT_EQ(foot.str(), "# Out of bounds values : 1 FAILED\n# Avg bus bandwidth    : 2 \n#\n");
}

TEST(GpuCollectiveReport, JsonCarriesParamsRowsAndSystem) {
  auto p = allReduceParams();
  CollectiveRow row{1024, 256, {10, 0.1024, 0.1792, 0}, {11, 0.0931, 0.1629, std::nullopt}, std::nullopt};
  const auto j = CollectiveReport::toJson(p, {row}, {{"gpu_model", "NVIDIA H200"}});
  EXPECT_EQ(j["tool"], "fabricsim-gpu-collectives");
  EXPECT_EQ(j["schema"], 2);
  EXPECT_EQ(j["op"], "all_reduce");
  EXPECT_EQ(j["gpu"]["model"], "NVIDIA H200");
  EXPECT_TRUE(j["hosts"].empty());  // the system description gave none
  EXPECT_TRUE(j["results"][0]["nccl"].is_null());
  EXPECT_EQ(j["nccl_tests_name"], "all_reduce_perf");
  EXPECT_EQ(j["ranks"], 8);
  EXPECT_EQ(j["redop"], "sum");
  EXPECT_EQ(j["root"], -1);
  EXPECT_EQ(j["params"]["step_factor"], 2);
  EXPECT_EQ(j["system"]["gpu_model"], "NVIDIA H200");
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["size_bytes"], 1024);
  EXPECT_DOUBLE_EQ(j["results"][0]["out_of_place"]["busbw_GBps"].get<double>(), 0.1792);
  EXPECT_EQ(j["results"][0]["out_of_place"]["wrong"], 0);
  EXPECT_TRUE(j["results"][0]["in_place"]["wrong"].is_null());
  EXPECT_EQ(j["failed_checks"], 0);
}

TEST(GpuCollectiveOptions, NcclTestsFlags) {
  auto a = argv({"-b", "8",  "-e", "128M", "-f", "2", "-d", "bfloat16",       "-o",     "max",
                 "-n", "50", "-w", "10",   "-c", "0", "-C", "reduce_scatter", "--json", "out.json"});
  const auto o = CollectiveOptions::parse(static_cast<int>(a.size()), a.data());
  EXPECT_EQ(o.params.collective, Collective::kReduceScatter);
  EXPECT_EQ(o.params.type, DataType::kBfloat16);
  EXPECT_EQ(o.params.op, ReduceOp::kMax);
  EXPECT_EQ(o.params.maxBytes, 128u << 20);
  EXPECT_EQ(o.params.iters, 50);
  EXPECT_EQ(o.params.checkIters, 0);
  EXPECT_EQ(o.jsonPath, "out.json");
  EXPECT_EQ(o.sizes().size(), 25u);  // 8 B .. 128 MiB
  auto d = argv({});
  const auto def = CollectiveOptions::parse(static_cast<int>(d.size()), d.data());
  EXPECT_EQ(def.sizes(), std::vector<size_t>{32u << 20});
  for (auto bad : {argv({"-b", "1G", "-e", "1M"}), argv({"-d", "fp4"}), argv({"-C", "gather"}),
                   argv({"--bogus"}), argv({"-n", "0"}), argv({"-f", "1", "-i", "0"}), argv({"-a", "7"})})
    EXPECT_THROW(CollectiveOptions::parse(static_cast<int>(bad.size()), bad.data()), std::invalid_argument);
}

TEST(GpuHostInfo, NcclEnvironmentAndDriver) {
  const char* env[] = {"NCCL_IB_HCA=mlx5_0,mlx5_1", "PATH=/bin", "NCCL_ALGO=Ring", "CUDA_VISIBLE_DEVICES=0,1",
                       nullptr};
  const auto j = HostInfo::ncclEnvironment(const_cast<char**>(env));
  EXPECT_EQ(j.size(), 3u);
  EXPECT_EQ(j["NCCL_IB_HCA"], "mlx5_0,mlx5_1");
  EXPECT_FALSE(j.contains("PATH"));
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_gpu_hostinfo_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "version") << "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  "
                                      "Release Build  (dvs-builder@U16-I1-N07-12-3)  Thu Jan 23 2025\n"
                                      "GCC version:  gcc version 12.2.0\n";
  }
  EXPECT_EQ(HostInfo::nvidiaDriverVersion(dir / "version"), "570.86.15");
  EXPECT_FALSE(HostInfo::nvidiaDriverVersion(dir / "missing"));
  fs::remove_all(dir);
}

TEST(GpuHostInfo, InfinibandNicsFromSysfs) {
  const fs::path root = fs::temp_directory_path() / ("fabricsim_gpu_ib_" + std::to_string(::getpid()));
  fs::create_directories(root / "mlx5_0" / "ports" / "1");
  fs::create_directories(root / "mlx5_0" / "device" / "net" / "ibp24s0");
  std::ofstream(root / "mlx5_0" / "fw_ver") << "28.39.1002\n";
  std::ofstream(root / "mlx5_0" / "ports" / "1" / "state") << "4: ACTIVE\n";
  std::ofstream(root / "mlx5_0" / "ports" / "1" / "rate") << "400 Gb/sec (4X NDR)\n";
  std::ofstream(root / "mlx5_0" / "ports" / "1" / "link_layer") << "InfiniBand\n";
  const auto nics = HostInfo::infinibandNics(root);
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(nics[0]["name"], "mlx5_0");
  EXPECT_EQ(nics[0]["fw_ver"], "28.39.1002");
  EXPECT_EQ(nics[0]["netdevs"][0], "ibp24s0");
  EXPECT_EQ(nics[0]["ports"][0]["state"], "4: ACTIVE");
  EXPECT_DOUBLE_EQ(nics[0]["ports"][0]["rate_Gbps"].get<double>(), 400.0);
  EXPECT_EQ(nics[0]["ports"][0]["link_layer"], "InfiniBand");
  EXPECT_TRUE(HostInfo::infinibandNics(root / "absent").empty());
  fs::remove_all(root);
}

TEST(GpuTransformerGemms, Gpt3ShapesAndFlops) {
  auto s = *TransformerShape::preset("gpt3-175b");
  s.tp = 8;
  s.finalize();
  const auto gemms = transformerLayerGemms(s, false);
  ASSERT_EQ(gemms.size(), 12u);
  EXPECT_EQ(gemms[0].name, "qkv");
  EXPECT_EQ(gemms[0].m, 2048);
  EXPECT_EQ(gemms[0].n, 3 * 12288 / 8);
  EXPECT_EQ(gemms[0].k, 12288);
  double fwd = 0, all = 0;
  for (const auto& g : gemms) {
    all += g.flops();
    if (g.pass == "forward") fwd += g.flops();
  }
  // Forward linear GEMMs: 24 b s h^2 / tp; backward is twice that.
  const double h = 12288;
  EXPECT_DOUBLE_EQ(fwd, 24.0 * 2048 * h * h / 8);
  EXPECT_DOUBLE_EQ(all, 3 * fwd);
  const auto withAttention = transformerLayerGemms(s, true);
  double attn = 0;
  for (const auto& g : withAttention)
    if (g.name.starts_with("attn_") && g.pass == "forward" && g.name != "attn_proj") attn += g.flops();
  EXPECT_DOUBLE_EQ(attn, 4.0 * 2048 * 2048 * h / 8);  // 4 b s^2 h / tp
}

TEST(GpuTransformerGemms, GqaAndGatedMlp) {
  auto s = *TransformerShape::preset("llama3-70b");
  s.tp = 8;
  s.finalize();
  const auto g = transformerLayerGemms(s, false);
  EXPECT_EQ(g[0].n, 8192 / 8 + 2 * 128);  // one KV head per rank
  EXPECT_EQ(g[2].name, "mlp_up");
  EXPECT_EQ(g[2].n, 2 * 28672 / 8);
  EXPECT_EQ(g[3].k, 28672 / 8);
  s.tp = 16;  // more ranks than KV heads: replicated
  s.heads = 128;
  s.finalize();
  EXPECT_EQ(transformerLayerGemms(s, false)[0].n, 8192 / 16 + 2 * 64);
}

TEST(GpuComputeOptions, PresetsWorkloadsAndFlags) {
  auto a = argv({"--preset", "llama3-70b", "--tp", "8", "--mbs", "2", "--dtypes", "bf16,fp8"});
  auto o = ComputeOptions::parse(static_cast<int>(a.size()), a.data());
  EXPECT_EQ(o.shape.hidden, 8192);
  EXPECT_EQ(o.shape.tp, 8);
  EXPECT_EQ(o.shape.microBatch, 2);
  EXPECT_TRUE(o.shape.gatedMlp);
  EXPECT_EQ(o.gemmTypes, (std::vector<std::string>{"bf16", "fp8"}));
  EXPECT_TRUE(o.flushL2);  // the default: each timed GEMM after the L2 is evicted
  auto nf = argv({"--no-l2-flush"});
  EXPECT_FALSE(ComputeOptions::parse(static_cast<int>(nf.size()), nf.data()).flushL2);
  EXPECT_EQ(o.sustainMs, 0.0);  // the default: no sustained-load warm-up
  auto su = argv({"--sustain-ms", "2000"});
  EXPECT_EQ(ComputeOptions::parse(static_cast<int>(su.size()), su.data()).sustainMs, 2000.0);
  auto w = argv({"--workload", FABRICSIM_SOURCE_DIR "/workloads/gpt-small.yaml"});
  o = ComputeOptions::parse(static_cast<int>(w.size()), w.data());
  EXPECT_EQ(o.shape.hidden, 2048);
  EXPECT_EQ(o.shape.ffnHidden, 8192);
  EXPECT_EQ(o.shape.tp, 4);
  EXPECT_EQ(o.shape.seqLen, 1024);
  auto f = argv({"--hidden", "4096", "--heads", "32", "--seq", "4096", "--tp", "2"});
  o = ComputeOptions::parse(static_cast<int>(f.size()), f.data());
  EXPECT_EQ(o.shape.ffnHidden, 16384);
  EXPECT_EQ(o.shape.kvHeads, 32);
  for (auto bad : {argv({"--preset", "gpt5"}), argv({"--hidden", "100", "--heads", "3", "--seq", "8"}),
                   argv({"--dtypes", "int4"}), argv({"--workload", "/nonexistent.yaml"}),
                   argv({"--preset", "gpt3-175b", "--tp", "5"}), argv({"--sustain-ms", "-1"}),
                   argv({"--workload", FABRICSIM_SOURCE_DIR "/workloads/nccl-allreduce.yaml"})})
    EXPECT_THROW(ComputeOptions::parse(static_cast<int>(bad.size()), bad.data()), std::invalid_argument);
}

TEST(GpuComputeReport, PeaksEfficiencyAndSummary) {
  EXPECT_DOUBLE_EQ(datasheetPeaks("NVIDIA H200")->hbmGBps, 4800);
  EXPECT_DOUBLE_EQ(datasheetPeaks("NVIDIA H100 80GB HBM3")->bf16Tflops, 989.4);
  EXPECT_DOUBLE_EQ(datasheetPeaks("NVIDIA H100 PCIe")->fp8Tflops, 1513);
  EXPECT_FALSE(datasheetPeaks("NVIDIA A10"));
  auto a = argv({"--peak-hbm-GBps", "4000"});
  const auto o = ComputeOptions::parse(static_cast<int>(a.size()), a.data());
  const auto peaks = o.peaksFor("NVIDIA H200");
  EXPECT_DOUBLE_EQ(peaks.hbmGBps, 4000);
  EXPECT_DOUBLE_EQ(peaks.bf16Tflops, 989.4);
  EXPECT_EQ(o.peaksFor("Some GPU").bf16Tflops, 0);

  GemmShape g{"qkv", "forward", 1000, 1000, 1000, 1};  // 2e9 FLOPs
  std::vector<GemmResult> gemms = {{g, "bf16", 4.0, "", {}}, {g, "fp8", std::nullopt, "fp8 needs ...", {}}};
  g.pass = "backward_data";
  gemms.push_back({g, "bf16", 6.0, "", {}});
  std::vector<BandwidthResult> mem = {{"copy_kernel", 1'000'000'000, 1000.0, 2.0, {}}};
  const auto j = ComputeReport::toJson(o, "NVIDIA H200", nlohmann::json::object(), peaks, gemms, mem,
                                       LaunchLatency{2.0, 8.0});
  EXPECT_DOUBLE_EQ(j["gemms"][0]["tflops"].get<double>(), 500.0);
  EXPECT_NEAR(j["gemms"][0]["efficiency"].get<double>(), 500.0 / 989.4, 1e-12);
  EXPECT_TRUE(j["gemms"][1]["time_us"].is_null());
  EXPECT_DOUBLE_EQ(j["gemm_summary"]["bf16"]["total"]["tflops"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(j["gemm_summary"]["bf16"]["backward"]["time_us"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(j["memory"][0]["hbm_GBps"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(j["memory"][0]["efficiency"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["launch"]["sync_us"].get<double>(), 8.0);
  EXPECT_EQ(j["peaks"]["source"], "datasheet:H200 + command line");
}
