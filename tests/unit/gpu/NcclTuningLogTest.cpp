// NcclTuningLog: NCCL's own tuning lines, written here by hand in the layout of NCCL 2.30.7's
// src/enqueue.cc ("%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}") and the
// "NCCL version" init line, are read back as the choices and version they state.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gpu/common/NcclTuningLog.h"

using namespace fabricsim::gpu;

namespace {

const char* kLog =
    "node1:4242:4242 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>\n"
    "node1:4242:4242 [0] NCCL INFO NCCL version 2.30.7+cuda12.9\n"
    "node1:4242:4250 [0] NCCL INFO Channel 00/32 : 0 1 2 3 4 5 6 7\n"
    "node1:4242:4242 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 "
    "channel{Lo..Hi}={0..15}\n"
    "node1:4242:4242 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 "
    "channel{Lo..Hi}={0..15}\n"
    "node1:4242:4242 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo TREE proto LL128 channel{Lo..Hi}={0..7}\n"
    "node1:4242:4242 [0] NCCL INFO AllReduce: 268435456 Bytes -> Algo NVLSTree proto SIMPLE "
    "channel{Lo..Hi}={0..23}\n"
    "node1:4242:4242 [0] NCCL INFO AllGather: 65536 Bytes -> Algo RING proto LL channel{Lo..Hi}={2..3}\n"
    "node1:4242:4242 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={7..3}\n"  // Hi < Lo
    "node1:4242:4242 [0] NCCL INFO AllReduce: -5 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n";

}  // namespace

TEST(NcclTuningLog, ReadsEveryTuningLineAndSkipsTheRest) {
  const auto c = NcclTuningLog::parse(kLog);
  ASSERT_EQ(c.size(), 5u);  // the two malformed lines are skipped
  EXPECT_EQ(c[0].function, "AllReduce");
  EXPECT_EQ(c[0].bytes, 1048576u);
  EXPECT_EQ(c[0].algorithm, "ring");
  EXPECT_EQ(c[0].protocol, "ll128");
  EXPECT_EQ(c[0].channels, 16);
  EXPECT_EQ(c[3].algorithm, "nvls_tree");
  EXPECT_EQ(c[3].protocol, "simple");
  EXPECT_EQ(c[3].channels, 24);
  EXPECT_EQ(c[4].function, "AllGather");
  EXPECT_EQ(c[4].channels, 2);
  EXPECT_EQ(NcclTuningLog::version(kLog), "2.30.7+cuda12.9");
  EXPECT_FALSE(NcclTuningLog::version("no version here\n").has_value());
}

TEST(NcclTuningLog, ASizeRanWithItsMostFrequentChoice) {
  const auto c = NcclTuningLog::parse(kLog);
  const auto mib = NcclTuningLog::choiceFor(c, "AllReduce", 1048576);
  ASSERT_TRUE(mib.has_value());
  EXPECT_EQ(mib->algorithm, "ring");  // two ring lines against one tree line
  EXPECT_EQ(mib->channels, 16);
  EXPECT_FALSE(NcclTuningLog::choiceFor(c, "AllGather", 1048576).has_value());
  EXPECT_FALSE(NcclTuningLog::choiceFor(c, "ReduceScatter", 65536).has_value());
  EXPECT_EQ(NcclTuningLog::functionName("all_reduce"), "AllReduce");
  EXPECT_EQ(NcclTuningLog::functionName("reduce_scatter"), "ReduceScatter");
  EXPECT_EQ(NcclTuningLog::functionName("alltoall"), "");
}

TEST(NcclTuningLog, CapturesOnlyWhenTheUserLeftNcclDebugAlone) {
  std::map<std::string, std::string> env;
  auto get = [&](const char* k) { return env.count(k) ? env.at(k).c_str() : nullptr; };
  auto set = [&](const char* k, const char* v) { env[k] = v; };
  const auto path = NcclTuningLog::captureTo("/tmp", 4242, get, set);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, "/tmp/fabricsim-nccl-4242.log");
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(env["NCCL_DEBUG_FILE"], *path);
  EXPECT_NE(env["NCCL_DEBUG_SUBSYS"].find("TUNING"), std::string::npos);
  std::map<std::string, std::string> mine{{"NCCL_DEBUG", "WARN"}};
  auto getMine = [&](const char* k) { return mine.count(k) ? mine.at(k).c_str() : nullptr; };
  auto setMine = [&](const char* k, const char* v) { mine[k] = v; };
  EXPECT_FALSE(NcclTuningLog::captureTo("/tmp", 1, getMine, setMine).has_value());
  EXPECT_EQ(mine.size(), 1u);
  // all_gather and reduce_scatter hand NCCL each rank's share.
  EXPECT_EQ(NcclTuningLog::ncclBytes("all_gather", 16u << 20, 16), 1u << 20);
  EXPECT_EQ(NcclTuningLog::ncclBytes("all_reduce", 16u << 20, 16), 16u << 20);
}
