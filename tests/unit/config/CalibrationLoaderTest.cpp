// CalibrationLoader: the calibration file's schema, what it overwrites, and its diagnostics.
#include "sim/config/CalibrationLoader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/config/GpuPresets.h"
#include "sim/config/ModelPresets.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml) {
  GpuSpec g;
  CollectiveTuning t;
  try {
    applyCalibrationYaml(yaml, "cal.yaml", g, t);
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

TEST(CalibrationLoaderTest, AppliesEveryKey) {
  GpuSpec g = *gpuPreset("h100-sxm");
  CollectiveTuning t;
  applyCalibrationYaml(
      "source: nccl-tests and GEMM microbenchmarks, 2026-11\n"
      "gpu:\n  peak: 950TFLOPS\n  efficiency: {gemm: 0.66, attention: 0.42}\n  hbm_bandwidth: 3200GBps\n"
      "collectives:\n  algorithm: tree\n  channels: 12\n  nvlink_channels: 4\n  step_latency_nvlink: 800ns\n"
      "  step_latency_network: 4.5us\n  protocol_efficiency: 0.9375\n  chunk_size: 256KiB\n  traffic_class: "
      "3\n"
      "fit: {rmse_percent: 3.1, samples: 120, residuals: [0.1, -0.2]}\n",
      "cal.yaml", g, t);
  EXPECT_EQ(g.preset, "h100-sxm");
  EXPECT_DOUBLE_EQ(g.peakFlops, 950e12);
  EXPECT_DOUBLE_EQ(g.gemmEfficiency, 0.66);
  EXPECT_DOUBLE_EQ(g.attentionEfficiency, 0.42);
  EXPECT_DOUBLE_EQ(g.hbmBytesPerSecond, 3.2e12);
  EXPECT_EQ(t.algorithm, CollectiveAlgorithm::Tree);
  EXPECT_EQ(t.channels, 12);
  EXPECT_EQ(t.nvlinkChannels, 4);
  EXPECT_EQ(t.stepLatencyNvlink, Time::ns(800));
  EXPECT_EQ(t.stepLatencyNetwork, Time::ps(4'500'000));
  EXPECT_DOUBLE_EQ(t.protocolEfficiency, 0.9375);
  EXPECT_EQ(t.chunkSize, 256 * 1024);
  EXPECT_EQ(t.trafficClass, 3);
}

TEST(CalibrationLoaderTest, KeysNotGivenAreKept) {
  GpuSpec g = *gpuPreset("h200-sxm");
  CollectiveTuning t;
  applyCalibrationYaml("gpu: {efficiency: 0.5}\n", "cal.yaml", g, t);
  EXPECT_DOUBLE_EQ(g.peakFlops, 989e12);
  EXPECT_DOUBLE_EQ(g.hbmBytesPerSecond, 4.8e12);
  EXPECT_DOUBLE_EQ(g.gemmEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(g.attentionEfficiency, 0.5);
  EXPECT_EQ(t.channels, CollectiveTuning{}.channels);
}

TEST(CalibrationLoaderTest, ReportsEveryErrorWithFileLineAndKey) {
  const auto d = diagnosticsOf(
      "gpu:\n"                                // 1
      "  peak: 989\n"                         // 2
      "  efficiency: {gemm: 0, matmul: 1}\n"  // 3
      "collectives:\n"                        // 4
      "  algorithm: butterfly\n"              // 5
      "  step_latency_nvlink: 5\n"            // 6
      "  traffic_class: 7\n"                  // 7
      "fit: 3\n"                              // 8
      "notes: x\n");                          // 9
  std::vector<std::string> keys;
  for (const auto& x : d) keys.push_back(x.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"gpu.peak", "gpu.efficiency.gemm", "gpu.efficiency.matmul",
                                            "collectives.algorithm", "collectives.step_latency_nvlink",
                                            "collectives.traffic_class", "fit", "notes"}));
  for (const auto& x : d) EXPECT_EQ(x.file, "cal.yaml");
  EXPECT_EQ(d[0].line, 2);
  EXPECT_EQ(d[3].line, 5);
  EXPECT_EQ(d[7].line, 9);
  EXPECT_NE(d[7].message.find("unknown key 'notes'"), std::string::npos);
  EXPECT_NE(d[3].message.find("found 'butterfly'"), std::string::npos);
}

TEST(CalibrationLoaderTest, AppliesTheNcclModelKeys) {
  GpuSpec g;
  CollectiveTuning t;
  applyCalibrationYaml(
      "collectives:\n  algorithm: nvls_tree\n  protocol: auto\n  ll_latency_scale: 0.2\n"
      "  ll128_latency_scale: 0.5\n  ll_network_latency_scale: 0.25\n  ll128_network_latency_scale: 0.3\n"
      "  ll_max_bandwidth: 30GBps\n  ll128_channel_bandwidth: 20GBps\n  simple_channel_bandwidth: 21GBps\n  net_overhead: 2us\n  nvls: true\n  nvls_efficiency: 0.86\n  nvls_tree_efficiency: 0.84\n"
      "  nvls_latency: 22.9us\n  nvls_pipeline: 56236KiB\n"
      "fabric: {nvlink_bandwidth: 2960.000Gbps, nic_bandwidth: 400.000Gbps}\n",
      "cal.yaml", g, t);
  EXPECT_EQ(t.algorithm, CollectiveAlgorithm::NvlsTree);
  EXPECT_EQ(t.protocol, CollectiveProtocol::Auto);
  EXPECT_DOUBLE_EQ(t.llLatencyScale, 0.2);
  EXPECT_DOUBLE_EQ(t.ll128LatencyScale, 0.5);
  EXPECT_DOUBLE_EQ(t.llNetworkLatencyScale, 0.25);
  EXPECT_DOUBLE_EQ(t.ll128NetworkLatencyScale, 0.3);
  EXPECT_DOUBLE_EQ(t.llMaxBandwidth(4), 30.0);
  EXPECT_DOUBLE_EQ(t.ll128ChannelBandwidthGBps, 20.0);
  EXPECT_DOUBLE_EQ(t.simpleChannelBandwidthGBps, 21.0);
  EXPECT_EQ(t.netOverhead, Time::us(2));
  EXPECT_TRUE(t.nvls);
  EXPECT_DOUBLE_EQ(t.nvlsEfficiency, 0.86);
  EXPECT_DOUBLE_EQ(t.nvlsTreeEfficiency, 0.84);
  EXPECT_EQ(t.nvlsLatency, Time::ns(22900));
  EXPECT_EQ(t.nvlsPipeline, Bytes{56236} * 1024);
}

TEST(CalibrationLoaderTest, AnNcclAlgoListIsAutoAmongItsAlgorithms) {
  // NCCL_ALGO semantics: '^NVLS,NVLSTree' is auto without the NVLS algorithms (bits in NCCL's
  // order: Tree 0, Ring 1, CollNetDirect 2, CollNetChain 3, NVLS 4, NVLSTree 5, PAT 6), and
  // call_channels is read; an unknown name in a list is refused at its line.
  GpuSpec g;
  CollectiveTuning t;
  applyCalibrationYaml("collectives:\n  algorithm: ^NVLS,NVLSTree\n  call_channels: 24\n", "cal.yaml", g, t);
  EXPECT_EQ(t.algorithm, CollectiveAlgorithm::Auto);
  EXPECT_EQ(t.algorithmsAllowed, 0b1001111);
  EXPECT_EQ(t.callChannels, 24);
  const auto bad = diagnosticsOf("collectives:\n  algorithm: Ring,Butterfly\n");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].line, 2);
  EXPECT_NE(bad[0].message.find("NCCL_ALGO list"), std::string::npos);
}

TEST(CalibrationLoaderTest, NcclModelKeysAreCheckedWithLineAndKey) {
  const auto d = diagnosticsOf(
      "collectives:\n"              // 1
      "  protocol: ll256\n"         // 2
      "  nvls: maybe\n"             // 3
      "  nvls_efficiency: 1.2\n"    // 4
      "  nvls_pipeline: -1\n"       // 5
      "  nvls_channels: 16\n"       // 6
      "  ll_max_bandwidth: 0GBps\n" // 7
      "  net_overhead: -1us\n");    // 8
  // An NCCL_PROTO list is accepted for auto; an unknown name in one is not.
  GpuSpec g;
  CollectiveTuning t;
  applyCalibrationYaml("collectives:\n  protocol: ^LL128\n", "cal.yaml", g, t);
  EXPECT_EQ(t.protocol, CollectiveProtocol::Auto);
  EXPECT_EQ(t.protocolsAllowed, 0b101);
  const auto bad = diagnosticsOf("collectives:\n  protocol: LL,LL256\n");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].line, 2);
  EXPECT_NE(bad[0].message.find("NCCL_PROTO list"), std::string::npos);
  std::vector<std::string> keys;
  for (const auto& x : d) keys.push_back(x.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"collectives.protocol", "collectives.nvls",
                                            "collectives.nvls_efficiency", "collectives.nvls_pipeline",
                                            "collectives.nvls_channels", "collectives.ll_max_bandwidth",
                                            "collectives.net_overhead"}));
  for (const auto& x : d) EXPECT_EQ(x.file, "cal.yaml");
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i].line, static_cast<int>(i) + 2) << d[i].key;
  EXPECT_NE(d[4].message.find("unknown key 'nvls_channels'"), std::string::npos);
}

TEST(CalibrationLoaderTest, LeavesSpecsUnchangedOnError) {
  GpuSpec g;
  CollectiveTuning t;
  EXPECT_THROW(applyCalibrationYaml("gpu: {peak: 1PFLOPS}\ncollectives: {channels: -1}\n", "cal.yaml", g, t),
               InputError);
  EXPECT_DOUBLE_EQ(g.peakFlops, GpuSpec{}.peakFlops);
}

TEST(CalibrationLoaderTest, BadYamlAndMissingFile) {
  auto d = diagnosticsOf("gpu: [1, 2\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("invalid YAML"), std::string::npos);
  d = diagnosticsOf("- 1\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("expected a map of calibration keys"), std::string::npos);
  GpuSpec g;
  CollectiveTuning t;
  try {
    applyCalibrationFile("/nonexistent/cal.yaml", g, t);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].file, "/nonexistent/cal.yaml");
  }
}

TEST(CalibrationLoaderTest, ReadsAFile) {
  const auto path =
      std::filesystem::temp_directory_path() /
      ("fabricsim-cal-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".yaml");
  std::ofstream(path) << "collectives: {channels: 7}\n";
  GpuSpec g;
  CollectiveTuning t;
  applyCalibrationFile(path.string(), g, t);
  std::filesystem::remove(path);
  EXPECT_EQ(t.channels, 7);
}

TEST(CalibrationLoaderTest, ParseFlops) {
  EXPECT_DOUBLE_EQ(*parseFlops("989TFLOPS").value, 989e12);
  EXPECT_DOUBLE_EQ(*parseFlops("1.5PFLOPS").value, 1.5e15);
  EXPECT_DOUBLE_EQ(*parseFlops("500GFLOPS").value, 500e9);
  EXPECT_DOUBLE_EQ(*parseFlops("1e12FLOPS").value, 1e12);
  EXPECT_FALSE(parseFlops("989").value.has_value());
  EXPECT_FALSE(parseFlops("989tflops").value.has_value());
  EXPECT_FALSE(parseFlops("0TFLOPS").value.has_value());
  EXPECT_FALSE(parseFlops("TFLOPS").value.has_value());
  EXPECT_NE(parseFlops("989").error.find("bare number"), std::string::npos);
}

TEST(CalibrationLoaderTest, PresetNames) {
  EXPECT_EQ(gpuPresetNames(), (std::vector<std::string>{"h100-sxm", "h200-sxm"}));
  EXPECT_EQ(modelPresetNames(),
            (std::vector<std::string>{"gpt3-175b", "llama3-70b", "llama3-405b", "mixtral-8x7b"}));
  EXPECT_FALSE(gpuPreset("a100").has_value());
  EXPECT_FALSE(modelPreset("gpt2").has_value());
  EXPECT_EQ(modelPreset("llama3-405b")->layers, 126);
}

}  // namespace
}  // namespace fabricsim
