#include "sim/calibrate/MeasurementReader.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const std::string kData = std::string(FABRICSIM_SOURCE_DIR) + "/validation/data/";

TEST(MeasurementReader, DgxCsvAsPublished) {
  const auto ms = MeasurementReader::read(kData + "nccltests_nvidia_dgxc_1node_8xH100_allreduce.csv");
  ASSERT_EQ(ms.size(), 1u);
  const Measurement& m = ms[0];
  EXPECT_EQ(m.op, CollectiveOp::AllReduce);
  EXPECT_EQ(m.ranks, 8u);
  EXPECT_EQ(m.hosts, 1u);
  ASSERT_EQ(m.points.size(), 32u);
  EXPECT_EQ(m.points.front().sizeBytes, 8);
  EXPECT_EQ(m.points.back().sizeBytes, 17179869184LL);
  EXPECT_DOUBLE_EQ(m.points.back().oopTimeUs, 62648);
  EXPECT_DOUBLE_EQ(m.points.back().oopBusbwGBps, 479.90);
  EXPECT_DOUBLE_EQ(m.points.back().ipBusbwGBps, 479.99);
}

TEST(MeasurementReader, AzureCsvHasBusbwOnlySoTimeIsDerived) {
  const auto ms = MeasurementReader::read(kData + "nccltests_azure_ndh100v5_1node_allreduce_busbw.csv");
  ASSERT_EQ(ms.size(), 1u);
  const auto& p = ms[0].points.back();
  EXPECT_EQ(p.sizeBytes, 8589934592LL);
  EXPECT_TRUE(std::isnan(p.oopTimeUs));
  EXPECT_DOUBLE_EQ(p.busbwGBps(CollectiveOp::AllReduce, 8), 478.87);
  // busbw = 2 (n-1)/n S / t  ->  t = 1.75 S / busbw
  EXPECT_NEAR(p.timeUs(CollectiveOp::AllReduce, 8), 1.75 * 8589934592.0 / 478.87e3, 1e-6);
}

TEST(MeasurementReader, YamlTablesOnePerTableWithAlgorithmFromEnv) {
  const auto ms = MeasurementReader::read(kData + "nccltests_gh_nccl-tests-309_h100_ib_ndr_2nodes.yaml");
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_NE(ms[0].label.find("#A_2nodes_16gpus_default"), std::string::npos);
  EXPECT_EQ(ms[0].ranks, 16u);
  EXPECT_EQ(ms[0].hosts, 2u);
  EXPECT_EQ(ms[0].gpusPerHost, 8u);
  EXPECT_EQ(ms[0].points.size(), 32u);
  EXPECT_EQ(ms[0].algorithm, "");
  EXPECT_EQ(ms[2].algorithm, "ring");
  EXPECT_EQ(ms[2].minChannels, 24);  // NCCL_MIN_CTAS=24 in its env
  EXPECT_EQ(ms[0].minChannels, 0);
  EXPECT_DOUBLE_EQ(ms[2].points.back().oopBusbwGBps, 392.69);
}

TEST(MeasurementReader, YamlTableEnvPinsTheProtocol) {
  // NCCL_PROTO in a table's env (digits included: LL128) is the run's protocol, as written; a
  // table without one leaves NCCL's choice.
  const std::string yaml =
      "# fabricsim: op=all_gather\n"
      "tables:\n"
      "  - id: pinned\n"
      "    nodes: 2\n"
      "    ranks: 16\n"
      "    env: \"NCCL_ALGO=Ring NCCL_PROTO=LL,LL128 NCCL_MIN_CTAS=8\"\n"
      "    rows:\n"
      "      - [1048576, 262144, 90.0, 0, 0, 90.0, 0, 0]\n"
      "  - id: free\n"
      "    nodes: 2\n"
      "    ranks: 16\n"
      "    rows:\n"
      "      - [1048576, 262144, 90.0, 0, 0, 90.0, 0, 0]\n";
  const auto ms = MeasurementReader::parse(yaml, "t.yaml");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].protocol, "LL,LL128");
  EXPECT_EQ(ms[0].algorithm, "ring");
  EXPECT_EQ(ms[0].minChannels, 8);
  EXPECT_EQ(ms[1].protocol, "");
}

TEST(MeasurementReader, SharedOriginalNeedsTheOpAndRanksFromTheCommandLine) {
  const std::string shared = std::string(FABRICSIM_SOURCE_DIR) + "/../shared/calibration/";
  const std::string csv = "# a table without the fabricsim line\nsize_bytes,oop_time_us\n1048576,27.37\n";
  try {
    MeasurementReader::parse(csv, "t.csv");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].file, "t.csv");
    EXPECT_NE(e.diagnostics()[0].message.find("--op"), std::string::npos);
  }
  MeasurementReader::Overrides o;
  o.op = CollectiveOp::AllReduce;
  o.ranks = 16;
  o.gpusPerHost = 8;
  const auto ms = MeasurementReader::parse(csv, "t.csv", o);
  EXPECT_EQ(ms[0].hosts, 2u);
  EXPECT_DOUBLE_EQ(ms[0].points[0].oopTimeUs, 27.37);
}

TEST(MeasurementReader, CsvErrorsNameTheLine) {
  const std::string csv =
      "# fabricsim: op=all_reduce ranks=8\nsize_bytes,oop_time_us\n1048576,27.37\n2097152,fast\n";
  try {
    MeasurementReader::parse(csv, "t.csv");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].line, 4);
    EXPECT_EQ(e.diagnostics()[0].key, "oop_time_us");
    EXPECT_NE(e.diagnostics()[0].message.find("'fast'"), std::string::npos);
  }
}

// Issue 21: a table `id` that is a map escaped yaml-cpp's conversion as a raw exception (exit 1);
// it is an error at the table's id.
TEST(MeasurementReader, AYamlTableIdThatIsAMapIsAnError) {
  const std::string yaml =
      "tables:\n  - id: {a: 1}\n    ranks: 8\n    nodes: 1\n    rows:\n      - [1048576, 262144, 27.4, 38.3, "
      "67.0, "
      "27.3, 38.4, 67.2]\n";
  try {
    MeasurementReader::parse(yaml, "t.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].key, "tables[0].id");
    EXPECT_EQ(e.diagnostics()[0].line, 2);
  }
}

// Issue 21: 'N/A' as a count was cast from NaN to an integer, a size of 1e300 from a double
// beyond int64: each is an error at its line and column.
TEST(MeasurementReader, CsvCountsAndSizesAreWholeNumbersNeverCast) {
  for (const auto& [row, column] : std::vector<std::pair<std::string, std::string>>{
           {"1048576,N/A,27.37", "count"}, {"1e300,1,27.37", "size_bytes"}, {"1048576,2.5,27.37", "count"}}) {
    SCOPED_TRACE(row);
    const std::string csv = "# fabricsim: op=all_reduce ranks=8\nsize_bytes,count,oop_time_us\n" + row + "\n";
    try {
      MeasurementReader::parse(csv, "t.csv");
      ADD_FAILURE() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.diagnostics()[0].line, 3);
      EXPECT_EQ(e.diagnostics()[0].key, column);
    }
  }
}

}  // namespace
}  // namespace fabricsim
