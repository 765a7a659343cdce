// The gpu/ harness's JSON is what `fabricsim calibrate` reads: a collective sweep written by the
// harness's own report code (gpu/common/CollectiveReport, with the system description its
// collectives program builds) reads back as the same measurement, and JSON of another kind or
// schema is refused with the file, line and key.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gpu/common/CollectiveReport.h"
#include "gpu/common/ComputeReport.h"
#include "sim/calibrate/MeasurementReader.h"
#include "sim/core/Error.h"

using namespace fabricsim;

namespace {

gpu::CollectiveSweepParams allGather16() {
  gpu::CollectiveSweepParams p;
  p.collective = gpu::Collective::kAllGather;
  p.type = gpu::DataType::kBfloat16;
  p.minBytes = 1 << 20;
  p.maxBytes = 1 << 22;
  p.stepFactor = 2;
  p.iters = 20;
  p.ranks = 16;
  p.processes = 16;
  return p;
}

/// As gpu/cuda/collectives_main.cpp's systemInfo() describes two hosts of 8 H100s.
nlohmann::json twoHosts() {
  return {{"gpu_model", "NVIDIA H100 80GB HBM3"},
          {"gpu_count", 16},
          {"host_count", 2},
          {"gpus_per_host", 8},
          {"hosts", {{{"hostname", "node-a"}, {"gpus", 8}}, {{"hostname", "node-b"}, {"gpus", 8}}}},
          {"nccl_version", "2.30.7"},
          {"nccl_env", {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "^LL"}, {"NCCL_IB_HCA", "mlx5"}}}};
}

std::vector<gpu::CollectiveRow> rows() {
  std::vector<gpu::CollectiveRow> r(3);
  for (int i = 0; i < 3; ++i) {
    r[i].bytes = size_t{1} << (20 + i);
    r[i].count = r[i].bytes / 2;
    r[i].outOfPlace = {30.0 + 10 * i, 35.0 + i, 32.8 + i, 0};
    r[i].inPlace = {29.5 + 10 * i, 35.5 + i, 33.3 + i, std::nullopt};
  }
  r[0].nccl = gpu::NcclChoice{"AllGather", r[0].bytes / 16, "ring", "ll128", 16};
  r[2].nccl = gpu::NcclChoice{"AllGather", r[2].bytes / 16, "ring", "simple", 32};
  return r;
}

std::string errorKeyOf(const std::string& text, int* line = nullptr) {
  try {
    MeasurementReader::parse(text, "run.json");
  } catch (const InputError& e) {
    if (line) *line = e.diagnostics()[0].line;
    return e.diagnostics()[0].key + ": " + e.diagnostics()[0].message;
  }
  return "no error";
}

}  // namespace

TEST(HarnessRoundTrip, TheReaderAndTheHarnessAgreeOnTheSchema) {
  EXPECT_STREQ(MeasurementReader::kHarnessTool, gpu::CollectiveReport::kTool);
  EXPECT_EQ(MeasurementReader::kHarnessSchema, gpu::CollectiveReport::kSchema);
}

TEST(HarnessRoundTrip, ACollectiveSweepReadsBackAsTheMeasurementItWas) {
  const auto r = rows();
  const std::string text = gpu::CollectiveReport::toJson(allGather16(), r, twoHosts()).dump(2);
  const auto ms = MeasurementReader::parse(text, "run.json");
  ASSERT_EQ(ms.size(), 1u);
  const Measurement& m = ms[0];
  EXPECT_EQ(m.op, CollectiveOp::AllGather);
  EXPECT_EQ(m.ranks, 16u);
  EXPECT_EQ(m.hosts, 2u);
  EXPECT_EQ(m.gpusPerHost, 8u);
  EXPECT_EQ(m.gpuModel, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m.algorithm, "ring");  // NCCL_ALGO=Ring pinned it
  EXPECT_EQ(m.protocol, "^LL");    // and NCCL_PROTO=^LL restricted the protocols
  EXPECT_EQ(m.dataType, "bfloat16");
  ASSERT_EQ(m.points.size(), r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    const auto& p = m.points[i];
    EXPECT_EQ(p.sizeBytes, static_cast<int64_t>(r[i].bytes));
    EXPECT_EQ(p.count, r[i].count);
    EXPECT_DOUBLE_EQ(p.oopTimeUs, r[i].outOfPlace.timeUs);
    EXPECT_DOUBLE_EQ(p.oopBusbwGBps, r[i].outOfPlace.busBwGBps);
    EXPECT_DOUBLE_EQ(p.ipAlgbwGBps, r[i].inPlace.algBwGBps);
    EXPECT_EQ(p.oopWrong, 0);
    EXPECT_EQ(p.ncclAlgorithm, r[i].nccl ? r[i].nccl->algorithm : "");
    EXPECT_EQ(p.ncclProtocol, r[i].nccl ? r[i].nccl->protocol : "");
    EXPECT_EQ(p.ncclChannels, r[i].nccl ? r[i].nccl->channels : 0);
  }
}

TEST(HarnessRoundTrip, JsonOfAnotherKindOrSchemaIsRefusedWithItsLine) {
  auto doc = gpu::CollectiveReport::toJson(allGather16(), rows(), twoHosts());
  // Schema 1 (an older harness): the line of its "schema" key.
  doc["schema"] = 1;
  int line = 0;
  const std::string text = doc.dump(2);
  EXPECT_NE(errorKeyOf(text, &line).find("schema: expected schema 2"), std::string::npos) << errorKeyOf(text);
  const size_t at = text.find("\"schema\"");
  EXPECT_EQ(line, 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')));
  // The harness's compute result.
  gpu::ComputeOptions options;
  const auto compute = gpu::ComputeReport::toJson(options, "NVIDIA H100", {}, {}, {}, {}, std::nullopt);
  EXPECT_NE(errorKeyOf(compute.dump(2)).find("--compute"), std::string::npos) << errorKeyOf(compute.dump(2));
  // Someone else's JSON.
  EXPECT_NE(errorKeyOf(R"({"op": "all_reduce", "ranks": 8, "results": []})")
                .find("tool: expected the gpu/ harness"),
            std::string::npos);
  // A row whose NCCL choice is not one.
  doc["schema"] = 2;
  doc["results"][1]["nccl"] = {{"algorithm", "ring"}};
  EXPECT_NE(errorKeyOf(doc.dump(2)).find("results[1].nccl"), std::string::npos) << errorKeyOf(doc.dump(2));
}

// The harness's one-GPU runs on an H100 and an H200 (validation/data/gpu-harness-2026-11-27-*):
// a one-rank collective has no peer and measures no NVLink or network, so calibrate and validate
// refuse it at its `ranks` line (it once reached the solver and crashed it).
TEST(HarnessRoundTrip, RealOneGpuSweepsAreRefusedAtTheirRanksLine) {
  for (const char* dir : {"gpu-harness-2026-11-27-h100", "gpu-harness-2026-11-27-h200"}) {
    const std::string path =
        std::string(FABRICSIM_SOURCE_DIR) + "/validation/data/" + dir + "/collectives-1rank.json";
    SCOPED_TRACE(path);
    try {
      MeasurementReader::read(path);
      ADD_FAILURE() << "a one-rank sweep was accepted";
    } catch (const InputError& e) {
      const auto& d = e.diagnostics()[0];
      EXPECT_EQ(d.key, "ranks");
      EXPECT_GT(d.line, 0);
      EXPECT_NE(d.message.find("at least 2 ranks"), std::string::npos) << d.message;
    }
  }
}
