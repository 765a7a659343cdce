// KernelFit: attention, memory-bound and overlap results written here in the harness's layout
// (gpu/torch/attention_bench.py, overlap_bench.py) with times chosen to hit known fractions give
// the geometric means of those fractions, worked out here; kernels too small to fill the GPU and
// memory rows under 64 MiB are left out; the real H100 results read and fit; other JSON is refused.
#include "sim/calibrate/KernelFit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/Error.h"

using namespace fabricsim;

namespace {

constexpr double kPeak = 989e12;
constexpr double kHbm = 3.0e12;

/// A causal attention row whose forward + backward runs at `fraction` of the peak (causal FLOPs,
/// backward twice the forward).
nlohmann::json attentionRow(const char* backend, int heads, int seq, double fraction) {
  const double causal = 2.0 * seq * static_cast<double>(seq) * 128 * heads;
  return {{"backend", backend},
          {"batch", 1},
          {"heads", heads},
          {"seq_len", seq},
          {"causal", true},
          {"flops_forward_causal", causal},
          {"forward_backward_us", 3 * causal / (fraction * kPeak) * 1e6}};
}

nlohmann::json memoryRow(double bytes, double fraction) {
  return {{"kernel", "k"}, {"min_hbm_bytes", bytes}, {"time_us", bytes / (fraction * kHbm) * 1e6}};
}

std::string errorOf(const std::string& text, bool overlap) {
  try {
    if (overlap)
      KernelFit::fitOverlap(text, "o.json");
    else
      KernelFit::fitAttention(text, "a.json", kPeak, kHbm);
  } catch (const InputError& e) {
    return e.diagnostics()[0].key + ": " + e.diagnostics()[0].message;
  }
  return "no error";
}

}  // namespace

TEST(KernelFit, AttentionAndMemoryAreGeometricMeansOfTheirFractions) {
  nlohmann::json j = {{"tool", "fabricsim-gpu-attention"}, {"schema", 1}, {"system", {{"sm_count", 132}}}};
  // 16 heads x 64 query tiles = 1024 CTAs (7.8 waves) and 8 x 64 = 512 (3.9): both fill the GPU;
  // 2 heads x 16 tiles = 32 CTAs is a quarter of a wave and is left out whatever it measured.
  j["attention"] = {attentionRow("cudnn", 16, 8192, 0.45), attentionRow("cudnn", 8, 8192, 0.36),
                    attentionRow("cudnn", 2, 2048, 0.02), attentionRow("flash", 16, 8192, 0.3)};
  j["memory_bound"] = {memoryRow(256e6, 0.9), memoryRow(512e6, 0.4), memoryRow(1e6, 0.01)};  // last < 64 MiB
  j["optimizer"] = memoryRow(2.8e9, 0.625);
  const KernelFit::Attention a = KernelFit::fitAttention(j.dump(2), "a.json", kPeak, kHbm);
  EXPECT_EQ(a.backend, "cudnn");  // cuDNN's rows win over FlashAttention's
  EXPECT_EQ(a.rows, 2);
  ASSERT_TRUE(a.efficiency && a.memoryEfficiency);
  // Tolerance 1e-9: the times pass through JSON doubles.
  EXPECT_NEAR(*a.efficiency, std::sqrt(0.45 * 0.36), 1e-9);
  EXPECT_EQ(a.memoryRows, 3);
  EXPECT_NEAR(*a.memoryEfficiency, std::cbrt(0.9 * 0.4 * 0.625), 1e-9);

  // Without cuDNN rows, FlashAttention's.
  j["attention"] = {attentionRow("flash", 16, 8192, 0.3), attentionRow("cudnn", 16, 8192, 0.5)};
  j["attention"][1]["error"] = "RuntimeError: no cuDNN";
  j["attention"][1].erase("forward_backward_us");
  const KernelFit::Attention f = KernelFit::fitAttention(j.dump(2), "a.json", kPeak, kHbm);
  EXPECT_EQ(f.backend, "flash");
  EXPECT_NEAR(*f.efficiency, 0.3, 1e-9);
}

TEST(KernelFit, CommShareIsOneMinusTheInverseMeanSlowdownOfCopyRows) {
  nlohmann::json j = {{"tool", "fabricsim-gpu-overlap"}, {"schema", 1}};
  j["gemms"] = {{{"m", 8192},
                 {"overlap",
                  {{{"kind", "copy"}, {"ctas", 8}, {"slowdown", 1.2}},
                   {{"kind", "spin"}, {"ctas", 8}, {"slowdown", 3.0}}}}},
                {{"m", 2048}, {"overlap", {{{"kind", "copy"}, {"ctas", 16}, {"slowdown", 1.5}}}}}};
  const KernelFit::Overlap o = KernelFit::fitOverlap(j.dump(2), "o.json");
  EXPECT_EQ(o.rows, 2);
  ASSERT_TRUE(o.commSmShare);
  EXPECT_NEAR(o.meanSlowdown, std::sqrt(1.2 * 1.5), 1e-12);
  EXPECT_NEAR(*o.commSmShare, 1 - 1 / std::sqrt(1.2 * 1.5), 1e-12);
}

TEST(KernelFit, OtherJsonIsRefused) {
  const std::string compute = R"({"tool": "fabricsim-gpu-compute", "schema": 1, "gemms": []})";
  EXPECT_NE(errorOf(compute, false).find("give it with --compute"), std::string::npos)
      << errorOf(compute, false);
  EXPECT_NE(errorOf(compute, true).find("give it with --compute"), std::string::npos);
  EXPECT_NE(errorOf(R"({"tool": "fabricsim-gpu-attention", "schema": 2})", false).find("schema"),
            std::string::npos);
  // Nothing that can be fitted.
  EXPECT_EQ(
      errorOf(R"({"tool": "fabricsim-gpu-attention", "schema": 1, "attention": []})", false).substr(0, 10),
      "attention:");
  EXPECT_EQ(errorOf(R"({"tool": "fabricsim-gpu-overlap", "schema": 1, "gemms": []})", true).substr(0, 6),
            "gemms:");
  EXPECT_NE(errorOf(R"({"tool": "fabricsim-gpu-overlap", "schema": 1, "gemms": [{"overlap": [{"kind": "copy",
            "slowdown": -1}]}]})",
                    true)
                .find("positive"),
            std::string::npos);
}

// The harness's H100 results (validation/data/gpu-harness-2026-11-27-h100) fit to figures a
// reader can check in its attention.txt: cuDNN's fused attention at the two Llama shapes (the
// only ones that fill the GPU) ran 754 and 844 TFLOP/s counting the full s x s square, so 38%
// and 43% of the peak in causal FLOPs; tolerance 2 points (the .txt rounds). The overlap rows'
// copy slowdowns lie between 1.1 and 1.7 (overlap.txt), so the share lies in (0.09, 0.41).
TEST(KernelFit, RealH100Results) {
  const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/validation/data/gpu-harness-2026-11-27-h100/";
  const KernelFit::Attention a = KernelFit::fitAttentionFile(dir + "attention.json", 989.4e12, 3.35e12);
  EXPECT_EQ(a.backend, "cudnn");
  EXPECT_EQ(a.rows, 2);
  ASSERT_TRUE(a.efficiency);
  EXPECT_NEAR(*a.efficiency, std::sqrt(0.381 * 0.427), 0.02);
  ASSERT_TRUE(a.memoryEfficiency);
  EXPECT_GT(*a.memoryEfficiency, 0.2);
  EXPECT_LT(*a.memoryEfficiency, 1.0);
  const KernelFit::Overlap o = KernelFit::fitOverlapFile(dir + "overlap.json");
  ASSERT_TRUE(o.commSmShare);
  EXPECT_GT(*o.commSmShare, 0.09);
  EXPECT_LT(*o.commSmShare, 0.41);
}
