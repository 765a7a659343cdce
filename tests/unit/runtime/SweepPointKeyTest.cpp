// SweepPointKey: the same inputs give the same key; any change to what a run loads (a --set, the
// topology file's contents, the seed, the backend) gives another.
#include "sim/runtime/SweepPointKey.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

const std::string kSrc = FABRICSIM_SOURCE_DIR;

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SweepPointKey, Fnv1aMatchesThePublishedTestVectors) {
  // FNV-1a 64 of "" and "a" (the FNV reference's test vectors).
  EXPECT_EQ(SweepPointKey::fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(SweepPointKey::fnv1a("a"), 0xaf63dc4c8601ec8cull);
}

TEST(SweepPointKey, ChangesWithWhatTheRunLoadsAndOnlyWithThat) {
  testsupport::TempDir dir;
  const std::string topo = dir.write("t.yaml", readText(kSrc + "/topologies/leafspine-16.yaml"));
  SweepPoint p;
  p.topology = topo;
  p.workloads = {kSrc + "/workloads/nccl-allreduce.yaml"};
  p.sets = {"switch.ecn={kmin: 100KiB, kmax: 400KiB, pmax: 0.2}"};
  const std::string base = SweepPointKey::of(p);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(SweepPointKey::of(p), base);

  SweepPoint q = p;
  q.id = "p0042";  // where it sits in the sweep is not what it computes
  q.labels = {{"axis", "label"}};
  EXPECT_EQ(SweepPointKey::of(q), base);

  q = p;
  q.sets = {"switch.ecn={kmin: 50KiB, kmax: 400KiB, pmax: 0.2}"};
  EXPECT_NE(SweepPointKey::of(q), base);
  q = p;
  q.seed = 2;
  EXPECT_NE(SweepPointKey::of(q), base);
  q = p;
  q.backend = "flow";
  EXPECT_NE(SweepPointKey::of(q), base);
  q = p;
  q.workloadSets = {"iterations=3"};
  EXPECT_NE(SweepPointKey::of(q), base);

  // An edit of the topology file that changes the fabric changes the key; a comment does not.
  std::ofstream(topo, std::ios::app) << "\n# a comment\n";
  EXPECT_EQ(SweepPointKey::of(p), base);
  std::string text = readText(topo);
  const size_t at = text.find("buffer: 32MiB");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, "buffer: 16MiB");
  std::ofstream(topo) << text;
  const std::string smaller = SweepPointKey::of(p);
  EXPECT_NE(smaller, base);
  // ... and the edited file loads (the key is not the unloadable one).
  text.replace(at, 13, "buffer: 8MiB ");
  std::ofstream(topo) << text;
  EXPECT_NE(SweepPointKey::of(p), smaller);
}

// A Chakra job is its per-rank files and its process groups: an edit of any of them (the key
// reads their bytes, not their protobuf) changes the key.
TEST(SweepPointKey, FollowsTheContentsOfAChakraJobsRankFiles) {
  testsupport::TempDir dir;
  for (int r = 0; r < 4; ++r) dir.write("job." + std::to_string(r) + ".et", "rank " + std::to_string(r));
  dir.write("groups.json", R"({"tp": [0, 1]})");
  SweepPoint p;
  p.topology = kSrc + "/topologies/leafspine-16.yaml";
  p.workloads = {dir.write("w.yaml", "kind: chakra\nchakra: job\ncomm_groups: groups.json\n")};
  const std::string base = SweepPointKey::of(p);
  EXPECT_EQ(SweepPointKey::of(p), base);
  dir.write("job.3.et", "rank 3, edited");
  const std::string edited = SweepPointKey::of(p);
  EXPECT_NE(edited, base);
  dir.write("job.4.et", "a fifth rank");  // taken by a job of every consecutive file
  const std::string five = SweepPointKey::of(p);
  EXPECT_NE(five, edited);
  dir.write("groups.json", R"({"tp": [0, 1, 2, 3]})");
  EXPECT_NE(SweepPointKey::of(p), five);
}

TEST(SweepPointKey, AnUnloadablePointStillHasAKeyThatFollowsItsInputs) {
  testsupport::TempDir dir;
  SweepPoint p;
  p.topology = dir.file("missing.yaml");
  const std::string k = SweepPointKey::of(p);
  EXPECT_EQ(k.size(), 16u);
  p.sets = {"links.latency=2us"};
  EXPECT_NE(SweepPointKey::of(p), k);
}

}  // namespace
}  // namespace fabricsim
