#include "sim/calibrate/NcclTestsParser.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

// nccl-tests 2.x output as printed by `mpirun -np 16 all_reduce_perf -b 1M -e 4M -f 2 -g 1` on
// two 8-GPU hosts (layout verbatim; NCCL INFO and mpirun lines interleaved as in real logs).
const char* kTwoHostLog = R"(node-a:12345:12345 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  12345 on     node-a device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  12346 on     node-a device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  12347 on     node-a device  2 [0x3a] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  12348 on     node-a device  3 [0x5d] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid  12349 on     node-a device  4 [0x9a] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid  12350 on     node-a device  5 [0xab] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid  12351 on     node-a device  6 [0xba] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid  12352 on     node-a device  7 [0xdb] NVIDIA H100 80GB HBM3
#  Rank  8 Group  0 Pid  23456 on     node-b device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  9 Group  0 Pid  23457 on     node-b device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank 10 Group  0 Pid  23458 on     node-b device  2 [0x3a] NVIDIA H100 80GB HBM3
#  Rank 11 Group  0 Pid  23459 on     node-b device  3 [0x5d] NVIDIA H100 80GB HBM3
#  Rank 12 Group  0 Pid  23460 on     node-b device  4 [0x9a] NVIDIA H100 80GB HBM3
#  Rank 13 Group  0 Pid  23461 on     node-b device  5 [0xab] NVIDIA H100 80GB HBM3
#  Rank 14 Group  0 Pid  23462 on     node-b device  6 [0xba] NVIDIA H100 80GB HBM3
#  Rank 15 Group  0 Pid  23463 on     node-b device  7 [0xdb] NVIDIA H100 80GB HBM3
node-a:12345:12345 [0] NCCL INFO NCCL_ALGO set by environment to Ring
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
     1048576        262144     float     sum      -1    156.9    6.68   12.53      0    154.1    6.81   12.76      0
     2097152        524288     float     sum      -1    156.6   13.39   25.10      0    154.9   13.54   25.39    N/A
     4194304       1048576     float     sum      -1    178.1   23.55   44.15      2      N/A     N/A     N/A    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 27.2633 
#
)";

TEST(NcclTestsParser, ReadsAVerbatimTwoHostAllReduceLog) {
  const Measurement m = NcclTestsParser::parse(kTwoHostLog, "logs/all_reduce_perf_2n.log");
  EXPECT_EQ(m.op, CollectiveOp::AllReduce);
  EXPECT_EQ(m.ranks, 16u);
  EXPECT_EQ(m.hosts, 2u);
  EXPECT_EQ(m.gpusPerHost, 8u);
  ASSERT_EQ(m.hostNames.size(), 2u);
  EXPECT_EQ(m.hostNames[0], "node-a");
  EXPECT_EQ(m.hostNames[1], "node-b");
  EXPECT_EQ(m.gpuModel, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m.algorithm, "ring");
  EXPECT_EQ(m.dataType, "float");
  EXPECT_DOUBLE_EQ(m.avgBusbwGBps, 27.2633);
  ASSERT_EQ(m.points.size(), 3u);
  EXPECT_EQ(m.points[0].sizeBytes, 1048576);
  EXPECT_EQ(m.points[0].count, 262144u);
  EXPECT_DOUBLE_EQ(m.points[0].oopTimeUs, 156.9);
  EXPECT_DOUBLE_EQ(m.points[0].oopAlgbwGBps, 6.68);
  EXPECT_DOUBLE_EQ(m.points[0].oopBusbwGBps, 12.53);
  EXPECT_DOUBLE_EQ(m.points[0].ipTimeUs, 154.1);
  EXPECT_DOUBLE_EQ(m.points[0].ipBusbwGBps, 12.76);
  EXPECT_EQ(m.points[1].ipWrong, -1);  // N/A
  EXPECT_EQ(m.points[2].oopWrong, 2);
  EXPECT_TRUE(std::isnan(m.points[2].ipTimeUs));
  EXPECT_EQ(m.points[2].line, 28);
  // The fit's time and the comparison's busbw come from the out-of-place columns.
  EXPECT_DOUBLE_EQ(m.points[2].timeUs(m.op, m.ranks), 178.1);
  EXPECT_DOUBLE_EQ(m.points[2].busbwGBps(m.op, m.ranks), 44.15);
}

// all_gather_perf of an older nccl-tests without redop/root columns, one host, 4 GPUs in one
// process (-g 4), op from the file name only.
TEST(NcclTestsParser, ChannelBoundsFromTheEnvironmentLines) {
  // NCCL prints the variables it read ("NCCL_MIN_CTAS set by environment to 24."); the run's
  // channel bounds are the larger minimum and the smaller maximum; a bound that is not a whole
  // number from 1 to 64 is an error at its line (22: right after the log's NCCL_ALGO line, its 21st).
  std::string log = kTwoHostLog;
  const std::string algo = "node-a:12345:12345 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n";
  log.replace(log.find(algo), algo.size(),
              algo + "node-a:12345:12345 [0] NCCL INFO NCCL_MIN_CTAS set by environment to 24.\n"
                     "node-a:12345:12345 [0] NCCL INFO NCCL_MIN_NCHANNELS set by environment to 16.\n"
                     "node-a:12345:12345 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 32.\n");
  const Measurement m = NcclTestsParser::parse(log, "all_reduce_perf.log");
  EXPECT_EQ(m.minChannels, 24);
  EXPECT_EQ(m.maxChannels, 32);
  EXPECT_EQ(m.protocol, "");  // NCCL chose the protocol
  // NCCL_PROTO as NCCL echoes it, LL128's digits included: the run's protocols.
  std::string proto = kTwoHostLog;
  proto.replace(proto.find(algo), algo.size(),
                algo + "node-a:12345:12345 [0] NCCL INFO NCCL_PROTO set by environment to LL128,Simple\n");
  EXPECT_EQ(NcclTestsParser::parse(proto, "all_reduce_perf.log").protocol, "LL128,Simple");
  std::string bad = kTwoHostLog;
  bad.replace(bad.find(algo), algo.size(), algo + "node-a:1:1 [0] NCCL INFO NCCL_MIN_CTAS set by environment to 99.\n");
  try {
    NcclTestsParser::parse(bad, "all_reduce_perf.log");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("all_reduce_perf.log:22"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("NCCL_MIN_CTAS"), std::string::npos) << e.what();
  }
}

TEST(NcclTestsParser, OldLayoutWithoutRedopAndOpFromFileName) {
  const char* text =
      "# nThread 1 nGpus 4 minBytes 33554432 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#   Rank  0 Pid   4242 on      dgx01 device  0 [0x07] NVIDIA H100 80GB HBM3\n"
      "#   Rank  1 Pid   4242 on      dgx01 device  1 [0x0f] NVIDIA H100 80GB HBM3\n"
      "#   Rank  2 Pid   4242 on      dgx01 device  2 [0x47] NVIDIA H100 80GB HBM3\n"
      "#   Rank  3 Pid   4242 on      dgx01 device  3 [0x4e] NVIDIA H100 80GB HBM3\n"
      "#\n"
      "#                                             out-of-place                       in-place\n"
      "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "    33554432       2097152   float    125.3  267.79  200.84  0e+00    124.9  268.65  201.49  0e+00\n"
      "    67108864       4194304   float    240.1  279.50  209.63  0e+00    239.8  279.86  209.90  0e+00\n"
      "# Avg bus bandwidth    : 205.465\n";
  // 'error' columns of old versions are floats (0e+00): not a #wrong count.
  EXPECT_THROW(NcclTestsParser::parse(text, "run/all_gather_perf.txt"), InputError);
  std::string fixed = text;
  for (size_t p; (p = fixed.find("0e+00")) != std::string::npos;) fixed.replace(p, 5, "0");
  const Measurement m = NcclTestsParser::parse(fixed, "run/all_gather_perf.txt");
  EXPECT_EQ(m.op, CollectiveOp::AllGather);
  EXPECT_EQ(m.ranks, 4u);
  EXPECT_EQ(m.hosts, 1u);
  ASSERT_EQ(m.points.size(), 2u);
  EXPECT_DOUBLE_EQ(m.points[1].oopBusbwGBps, 209.63);
  EXPECT_DOUBLE_EQ(m.avgBusbwGBps, 205.465);
}

TEST(NcclTestsParser, BadRowNamesFileLineAndColumn) {
  std::string text = kTwoHostLog;
  const size_t p = text.find("   23.55   44.15");
  text.replace(p, 8, "   23,55");
  try {
    NcclTestsParser::parse(text, "bad.log", CollectiveOp::AllReduce);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].file, "bad.log");
    EXPECT_EQ(e.diagnostics()[0].line, 28);
    EXPECT_NE(e.diagnostics()[0].message.find("out-of-place algbw"), std::string::npos) << e.what();
    EXPECT_NE(e.diagnostics()[0].message.find("23,55"), std::string::npos) << e.what();
  }
}

TEST(NcclTestsParser, MissingRanksOpAndRowsAreReportedTogether) {
  try {
    NcclTestsParser::parse("# nothing here\nhello world\n", "mystery.log");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().size(), 3u) << e.what();  // op, rows, rank lines
  }
}

TEST(NcclTestsParser, UnsimulatedOpAndSecondRunAreErrors) {
  std::string text = kTwoHostLog;
  EXPECT_THROW(NcclTestsParser::parse(text, "reduce_perf.log"), InputError);
  text +=
      "     1048576        262144     float     sum      -1    156.9    6.68   12.53      0    154.1    6.81 "
      "  12.76      0\n";
  try {
    NcclTestsParser::parse(text, "all_reduce_perf.log");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].line, 32);
    EXPECT_NE(e.diagnostics()[0].message.find("increasing"), std::string::npos);
  }
}

}  // namespace
// Issue 21: a 50,000-character '# Rank' line overflowed std::regex's stack, and a rank number of
// 29 digits escaped std::stoul as a raw exception. The long line is not read as a rank line (the
// missing rank lines are reported), the long number is an error at its line.
TEST(NcclTestsParser, OverlongLinesAndRankNumbersAreErrorsNotCrashes) {
  const std::string longLine = "# Using devices\n#  Rank  0 Group  0 Pid 1 on " + std::string(50'000, 'h') +
                               " device  0 [0x1b] NVIDIA H100\n";
  EXPECT_THROW(NcclTestsParser::parse(longLine, "log.txt", CollectiveOp::AllReduce), InputError);
  const std::string longRank =
      "# Using devices\n#  Rank  00000000000000000000000000001 Group  0 Pid 1 on h device  0 "
      "[0x1b] NVIDIA H100\n";
  try {
    NcclTestsParser::parse(longRank, "log.txt", CollectiveOp::AllReduce);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    bool named = false;
    for (const auto& d : e.diagnostics())
      named |= d.line == 2 && d.message.find("rank number") != std::string::npos;
    EXPECT_TRUE(named);
  }
}

}  // namespace fabricsim
