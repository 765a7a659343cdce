// `fabricsim explain`: a two-rank Chakra job worked by hand. Each rank computes 100 us, then
// all-reduces 64 MiB on process group "a" and computes 10 us more; meanwhile, from the start, it
// all-reduces 1 MiB on group "b", which nothing waits for. The ranks share a host (NVLink, 450
// GB/s a GPU and direction on topologies/default.yaml). Group a's all-reduce is on the critical
// path: making it free saves its whole time, at least what its bytes need on the wire (a
// two-rank ring moves S through each GPU's NVLink: 64 MiB / 450 GB/s = 149 us) and at most 1.5
// times that plus 50 us (protocol efficiency >= 0.8 and latencies of a few us). Group b's is
// hidden behind the 100 us of compute (1 MiB on NVLink takes a few us): free, it saves nothing.
// Compute is 110 us, with no bubble. (A Chakra process group is communicator "pg:<name>".)
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/ChakraEt.h"
#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

namespace {

namespace pb = ::fabricsim::chakra;
using fabricsim::testsupport::runFabricsim;
using fabricsim::testsupport::TempDir;
using fabricsim::testsupport::writeChakraEt;

pb::Node comp(uint64_t id, uint64_t micros, std::vector<uint64_t> deps) {
  pb::Node n;
  n.set_id(id);
  n.set_type(pb::COMP_NODE);
  n.set_duration_micros(micros);
  for (uint64_t d : deps) n.add_data_deps(d);
  return n;
}

pb::Node allReduce(uint64_t id, int64_t bytes, const std::string& pg, std::vector<uint64_t> deps) {
  pb::Node n;
  n.set_id(id);
  n.set_type(pb::COMM_COLL_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  auto* t = n.add_attr();
  t->set_name("comm_type");
  t->set_int64_val(pb::ALL_REDUCE);
  auto* s = n.add_attr();
  s->set_name("comm_size");
  s->set_int64_val(bytes);
  auto* g = n.add_attr();
  g->set_name("pg_name");
  g->set_string_val(pg);
  return n;
}

TEST(ExplainCli, AttributesExposedTimeToTheGroupOnTheCriticalPath) {
  TempDir dir;
  const int64_t S = 64 << 20;
  for (int r = 0; r < 2; ++r)
    writeChakraEt(
        dir.file("et." + std::to_string(r) + ".et"),
        {comp(1, 100, {}), allReduce(2, S, "a", {1}), comp(3, 10, {2}), allReduce(4, 1 << 20, "b", {})});
  dir.write("groups.json", R"({"a": [0, 1], "b": [0, 1]})");
  dir.write("job.yaml", "kind: chakra\nname: two\nchakra: et\ncomm_groups: groups.json\n");
  const std::string topo = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/default.yaml";
  const auto r = runFabricsim(
      "explain " + topo + " --workload " + dir.file("job.yaml") + " --out " + dir.file("x.json"), "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("between groups"), std::string::npos) << r.out;
  std::ifstream f(dir.file("x.json"));
  const auto doc = nlohmann::json::parse(f);
  const auto& p = doc["jobs"][0]["per_iteration_s"];
  EXPECT_NEAR(p["compute"].get<double>(), 110e-6, 1e-12);
  EXPECT_NEAR(p["bubble_and_idle"].get<double>(), 0.0, 1e-12);
  const double wire = static_cast<double>(S) / 450e9;
  const double a = p["exposed_by_group"]["pg:a"].get<double>();
  EXPECT_GE(a, wire);
  EXPECT_LE(a, 1.5 * wire + 50e-6);
  EXPECT_EQ(p["exposed_by_group"]["pg:b"].get<double>(), 0.0);
  EXPECT_NEAR(p["exposed_communication"].get<double>(), a, 1e-9);
  EXPECT_NEAR(p["between_groups"].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(p["iteration"].get<double>(), 110e-6 + a, 1e-9);
}

TEST(ExplainCli, AWorkloadWithoutAJobToExplainExitsTwo) {
  const std::string src = FABRICSIM_SOURCE_DIR;
  const auto r = runFabricsim("explain " + src + "/topologies/default.yaml --workload " + src +
                                  "/workloads/background-permutation.yaml",
                              "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no training, trace or chakra job"), std::string::npos) << r.out;
}

}  // namespace
