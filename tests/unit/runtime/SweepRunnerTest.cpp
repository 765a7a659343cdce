// SweepRunner without running anything: point expansion order (first axis slowest), the `run`
// argv each point maps to, MPI rank detection from the environment, and the summary columns
// taken from a results document.
#include "sim/runtime/SweepRunner.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/config/SweepLoader.h"
#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

/// The summary row of results `r`, by column name.
std::map<std::string, std::string> metricsByColumn(const nlohmann::json& r) {
  const auto cols = SweepRunner::metricColumns();
  const auto vals = SweepRunner::metricValues(r);
  EXPECT_EQ(cols.size(), vals.size());
  std::map<std::string, std::string> m;
  for (size_t i = 0; i < cols.size() && i < vals.size(); ++i) m[cols[i]] = vals[i];
  return m;
}

using testsupport::TempDir;

const std::string kSrc = FABRICSIM_SOURCE_DIR;
const std::string kTopo = kSrc + "/topologies/leafspine-16.yaml";
const std::string kTopo64 = kSrc + "/topologies/leafspine-64.yaml";
const std::string kWork = kSrc + "/workloads/nccl-allreduce.yaml";

SweepSpec load(const TempDir& dir, const std::string& text) {
  return parseSweepYaml(text, dir.file("sweep.yaml"));
}

TEST(SweepRunnerTest, ExpandsTheCartesianProductFirstAxisSlowest) {
  TempDir dir;
  const auto spec = load(dir, "topology: " + kTopo +
                                  "\naxes:\n  - {name: cc, values: [none, dcqcn]}\n"
                                  "  - {name: routing, values: [ecmp, adaptive, spray]}\n");
  const auto points = SweepRunner::expand(spec);
  ASSERT_EQ(points.size(), 6u);
  const char* cc[] = {"none", "none", "none", "dcqcn", "dcqcn", "dcqcn"};
  const char* routing[] = {"ecmp", "adaptive", "spray", "ecmp", "adaptive", "spray"};
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].index, i);
    EXPECT_EQ(points[i].labels[0], std::make_pair(std::string("cc"), std::string(cc[i])));
    EXPECT_EQ(points[i].labels[1].second, routing[i]);
    EXPECT_EQ(*points[i].cc, cc[i]);
    EXPECT_EQ(*points[i].routing, routing[i]);
  }
  EXPECT_EQ(points[3].id, "p0003");
  EXPECT_EQ(SweepRunner::pointId(12345), "p12345");
}

TEST(SweepRunnerTest, NoAxesIsOnePoint) {
  TempDir dir;
  const auto points = SweepRunner::expand(load(dir, "topology: " + kTopo + "\n"));
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(SweepRunner::runArguments(points[0], "r.json"),
            (std::vector<std::string>{"run", kTopo, "--out", "r.json", "--quiet"}));
}

TEST(SweepRunnerTest, MapsAxesToRunArguments) {
  TempDir dir;
  const auto spec =
      load(dir, "topology: " + kTopo + "\nworkloads: [" + kWork +
                    "]\nbackend: packet\nseed: 4\nset: [a.b=1]\nworkload_set: [c=2]\n"
                    "axes:\n"
                    "  - {name: links.technology, values: [infiniband]}\n"
                    "  - {name: workload.parallelism.dp, values: [8]}\n"
                    "  - {name: seed, values: [9]}\n"
                    "  - name: gpus\n"
                    "    values:\n"
                    "      - {value: 64, topology: " +
                    kTopo64 +
                    ", set: [x=1], workload_set: [dp=8], cc: dcqcn, routing: adaptive, backend: flow}\n");
  const auto points = SweepRunner::expand(spec);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(SweepRunner::runArguments(points[0], "/o/r.json"),
            (std::vector<std::string>{"run",
                                      kTopo64,
                                      "--workload",
                                      kWork,
                                      "--backend",
                                      "flow",
                                      "--routing",
                                      "adaptive",
                                      "--cc",
                                      "dcqcn",
                                      "--seed",
                                      "9",
                                      "--set",
                                      "a.b=1",
                                      "--set",
                                      "links.technology=infiniband",
                                      "--set",
                                      "x=1",
                                      "--workload-set",
                                      "c=2",
                                      "--workload-set",
                                      "parallelism.dp=8",
                                      "--workload-set",
                                      "dp=8",
                                      "--out",
                                      "/o/r.json",
                                      "--quiet"}));
}

TEST(SweepRunnerTest, ReadsTheMpiRankFromTheEnvironment) {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK"})
    unsetenv(v);
  EXPECT_EQ(SweepRunner::mpiRankFromEnvironment(), std::make_pair(0, 1));
  setenv("PMI_RANK", "2", 1);
  setenv("PMI_SIZE", "4", 1);
  EXPECT_EQ(SweepRunner::mpiRankFromEnvironment(), std::make_pair(2, 4));
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  EXPECT_EQ(SweepRunner::mpiRankFromEnvironment(), std::make_pair(1, 3));
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("PMI_RANK");
  unsetenv("PMI_SIZE");
  setenv("PMIX_RANK", "2", 1);
  EXPECT_EQ(SweepRunner::mpiRankFromEnvironment(), std::make_pair(2, 3));
  setenv("PMIX_RANK", "7", 1);
  EXPECT_EQ(SweepRunner::mpiRankFromEnvironment(), std::make_pair(0, 1)) << "rank beyond size: not MPI";
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK"}) unsetenv(v);
}

TEST(SweepRunnerTest, SummaryColumnsComeFromTheResults) {
  const nlohmann::json r = nlohmann::json::parse(R"({
    "backend": "packet", "congestion_control": "dcqcn", "routing": {"algorithm": "ecmp"},
    "summary": {"gpus": 16, "sim_time_s": 0.5, "wall_time_s": 2.25, "peak_rss_bytes": 1000, "events": 42},
    "jobs": [{"jct_s": 0.25, "iterations": [], "compute_s": 0.0, "exposed_comm_s": 0.25,
              "nccl_tests": {"avg_busbw_GBps": 11.5}},
             {"jct_s": 0.5, "iterations": [{"time_s": 0.2}, {"time_s": 0.3}], "compute_s": 0.1,
              "exposed_comm_s": 0.05}],
    "network": {"bytes_dropped": 0, "ecn_marks": 7, "pfc_pause_frames": 3, "max_queue_bytes": 4096}})");
  const auto m = metricsByColumn(r);
  EXPECT_EQ(m.at("backend"), "packet");
  EXPECT_EQ(m.at("congestion_control"), "dcqcn");
  EXPECT_EQ(m.at("routing"), "ecmp");
  EXPECT_EQ(m.at("gpus"), "16");
  EXPECT_EQ(m.at("jct_s"), "0.5");
  EXPECT_EQ(m.at("iteration_s"), "0.3");
  EXPECT_EQ(m.at("compute_s"), "0.1");
  EXPECT_EQ(m.at("exposed_comm_s"), "0.05");
  EXPECT_EQ(m.at("busbw_GBps"), "11.5");
  EXPECT_EQ(m.at("wall_time_s"), "2.25");
  EXPECT_EQ(m.at("events"), "42");
  EXPECT_EQ(m.at("ecn_marks"), "7");
  EXPECT_EQ(m.at("pfc_pause_frames"), "3");
  EXPECT_EQ(m.at("max_queue_bytes"), "4096");
  const auto empty = SweepRunner::metricValues(nlohmann::json::object());
  for (const auto& v : empty) EXPECT_EQ(v, "");
}

TEST(SweepRunnerTest, UnmodelledCountersAreEmptyCellsNeverZero) {
  // A flow-backend point: the counters it does not model are null in its results (listed under
  // `unmodelled`); the summary leaves their cells empty, and the counters it does model stay.
  const nlohmann::json r = nlohmann::json::parse(R"({
    "backend": "flow", "summary": {"events": 5},
    "network": {"bytes_dropped": 0, "ecn_marks": null, "pfc_pause_frames": null, "max_queue_bytes": null},
    "unmodelled": ["network.ecn_marks", "network.pfc_pause_frames", "network.max_queue_bytes"]})");
  const auto m = metricsByColumn(r);
  EXPECT_EQ(m.at("backend"), "flow");
  EXPECT_EQ(m.at("bytes_dropped"), "0");
  for (const char* k : {"ecn_marks", "pfc_pause_frames", "max_queue_bytes"}) EXPECT_EQ(m.at(k), "") << k;
}

TEST(SweepRunnerTest, SummaryMarksMissingAndFailedPointsAndQuotesLabels) {
  TempDir dir;
  const auto spec =
      load(dir, "topology: " + kTopo + "\naxes:\n  - {name: routing, values: [ecmp, 'a,b', c, d]}\n");
  const auto points = SweepRunner::expand(spec);
  namespace fs = std::filesystem;
  fs::create_directories(dir.file("out/points/p0000"));
  fs::create_directories(dir.file("out/points/p0001"));
  std::ofstream(dir.file("out/points/p0000/results.json")) << R"({"routing": {"algorithm": "ecmp"}})";
  std::ofstream(dir.file("out/points/p0001/failed.json")) << "{}";
  // A run whose workload failed (a connection ran out of retries) writes results that say so.
  fs::create_directories(dir.file("out/points/p0003"));
  std::ofstream(dir.file("out/points/p0003/results.json")) << R"({"status": "failed", "backend": "packet"})";
  SweepRunner::writeSummary(spec, points, dir.file("out"));
  std::ifstream in(dir.file("out/summary.csv"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string csv = ss.str();
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,status,routing,backend,congestion_control,routing_result,gpus,jct_s,iteration_s,compute_s,"
            "exposed_comm_s,busbw_GBps,sim_time_s,wall_time_s,peak_rss_bytes,events,bytes_dropped,ecn_marks,"
            "pfc_pause_frames,max_queue_bytes");
  EXPECT_NE(csv.find("\np0000,ok,ecmp,,,ecmp,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\np0001,failed,\"a,b\","), std::string::npos) << csv;
  EXPECT_NE(csv.find("\np0002,missing,c,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\np0003,failed,d,packet,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace fabricsim
