// `fabricsim trace --format chakra` and `kind: chakra`: a training job exported as Chakra ET and
// run from it takes the time the job itself takes; a Chakra workload whose files are missing is
// an input error naming the workload file.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

namespace {

using fabricsim::testsupport::runFabricsim;
using fabricsim::testsupport::TempDir;

const std::string kSrc = FABRICSIM_SOURCE_DIR;

nlohmann::json readJson(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

TEST(ChakraCli, AnExportedJobRunsAsTheJobItself) {
  TempDir dir;
  const std::string topo = kSrc + "/topologies/default.yaml";
  const std::string work = kSrc + "/workloads/default-training.yaml";
  auto r = runFabricsim("trace " + topo + " --workload " + work + " --format chakra --out " + dir.file("gpt"),
                        "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("64 ranks"), std::string::npos) << r.out;
  dir.write("chakra.yaml",
            "kind: chakra\nname: from-chakra\nchakra: gpt\ncomm_groups: gpt.comm_groups.json\n");
  r = runFabricsim("run " + topo + " --workload " + dir.file("chakra.yaml") +
                       " --backend flow --quiet --out " + dir.file("chakra.json"),
                   "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  r = runFabricsim(
      "run " + topo + " --workload " + work + " --backend flow --quiet --out " + dir.file("job.json"),
      "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto a = readJson(dir.file("chakra.json"))["jobs"][0];
  const auto b = readJson(dir.file("job.json"))["jobs"][0];
  EXPECT_EQ(a["name"], "from-chakra");
  EXPECT_EQ(a["jct_s"].get<double>(), b["jct_s"].get<double>());
  EXPECT_EQ(a["compute_s"].get<double>(), b["compute_s"].get<double>());
}

TEST(ChakraCli, MissingFilesAndBadFormatsExitTwo) {
  TempDir dir;
  const std::string topo = kSrc + "/topologies/default.yaml";
  dir.write("chakra.yaml", "kind: chakra\nchakra: nothing-here\n");
  auto r = runFabricsim("run " + topo + " --workload " + dir.file("chakra.yaml") + " --quiet", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("chakra.yaml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing-here.0.et"), std::string::npos) << r.out;
  dir.write("bad.yaml", "kind: chakra\nchakra: x\nranks: 0\n");
  r = runFabricsim("run " + topo + " --workload " + dir.file("bad.yaml") + " --quiet", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bad.yaml:3"), std::string::npos) << r.out;
  r = runFabricsim("trace " + topo + " --workload " + kSrc +
                       "/workloads/default-training.yaml --format xml --out " + dir.file("t"),
                   "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--format"), std::string::npos) << r.out;
}

}  // namespace
