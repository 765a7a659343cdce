#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/common/Collective.h"
#include "gpu/common/DataType.h"
#include "gpu/common/SizeSweep.h"

using namespace fabricsim::gpu;

TEST(GpuDataType, NamesSizesAndAliases) {
  EXPECT_EQ(dataTypeName(DataType::kBfloat16), "bfloat16");
  EXPECT_EQ(parseDataType("bf16"), DataType::kBfloat16);
  EXPECT_EQ(parseDataType("float"), DataType::kFloat);
  EXPECT_EQ(parseDataType("fp16"), DataType::kHalf);
  EXPECT_FALSE(parseDataType("fp4"));
  EXPECT_EQ(dataTypeSize(DataType::kHalf), 2u);
  EXPECT_EQ(dataTypeSize(DataType::kUint64), 8u);
  EXPECT_EQ(allDataTypes().size(), 10u);
}

TEST(GpuDataType, HalfAndBfloat16RoundToNearestEven) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(70000.0f), 0x7c00);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie to even (down)
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even (up)
  for (float v : {0.0f, 1.5f, -3.25f, 1024.0f, 0.000061035156f, std::ldexp(3.0f, -24)})
    EXPECT_EQ(halfBitsToFloat(floatToHalfBits(v)), v) << v;
  EXPECT_EQ(floatToBfloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16BitsToFloat(floatToBfloat16Bits(256.0f)), 256.0f);
  EXPECT_EQ(bfloat16BitsToFloat(floatToBfloat16Bits(257.0f)), 256.0f);  // tie to even
  EXPECT_EQ(bfloat16BitsToFloat(floatToBfloat16Bits(259.0f)), 260.0f);
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBfloat16Bits(NAN))));
}

TEST(GpuDataType, IntegersWrapLikeTheGpu) {
  EXPECT_EQ(roundTo(DataType::kInt8, 130), -126);
  EXPECT_EQ(roundTo(DataType::kUint8, -1), 255);
  EXPECT_EQ(roundTo(DataType::kInt32, -7), -7);
  EXPECT_EQ(roundTo(DataType::kUint32, 4294967297.0), 1);
  EXPECT_EQ(roundTo(DataType::kDouble, 0.1), 0.1);
}

TEST(GpuSizeSweep, ParsesNcclTestsSizes) {
  EXPECT_EQ(parseSize("8"), 8u);
  EXPECT_EQ(parseSize("128K"), 131072u);
  EXPECT_EQ(parseSize("64M"), 64u << 20);
  EXPECT_EQ(parseSize("1G"), size_t{1} << 30);
  EXPECT_EQ(parseSize("32MiB"), 32u << 20);
  EXPECT_EQ(parseSize("1.5k"), 1536u);
  EXPECT_FALSE(parseSize("ten"));
  EXPECT_FALSE(parseSize("-8"));
  EXPECT_FALSE(parseSize("8X"));
}

TEST(GpuSizeSweep, FactorAndStepLikeNcclTests) {
  EXPECT_EQ(sweepSizes(8, 128, 2, 0), (std::vector<size_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(sweepSizes(8, 100, 4, 0), (std::vector<size_t>{8, 32}));
  EXPECT_EQ(sweepSizes(1, 10, 1, 4), (std::vector<size_t>{1, 5, 9}));
  EXPECT_EQ(sweepSizes(32 << 20, 32 << 20, 1, 1 << 20), (std::vector<size_t>{32 << 20}));
  EXPECT_EQ(sweepSizes(0, 8, 2, 0), (std::vector<size_t>{0}));
  EXPECT_TRUE(sweepSizes(16, 8, 2, 0).empty());
  EXPECT_TRUE(sweepSizes(8, 16, 1, 0).empty());
  EXPECT_EQ(sweepSizes(size_t{1} << 62, ~size_t{0}, 4, 0).size(), 1u);  // no overflow
}

TEST(GpuCollective, NamesParseBothStyles) {
  EXPECT_EQ(parseCollective("all_reduce"), Collective::kAllReduce);
  EXPECT_EQ(parseCollective("all_reduce_perf"), Collective::kAllReduce);
  EXPECT_EQ(parseCollective("AllGather"), Collective::kAllGather);
  EXPECT_EQ(parseCollective("alltoall_perf"), Collective::kAllToAll);
  EXPECT_EQ(parseCollective("sendrecv"), Collective::kSendRecv);
  EXPECT_FALSE(parseCollective("gather"));
  for (Collective c : allCollectives()) EXPECT_EQ(parseCollective(collectiveName(c)), c);
  EXPECT_EQ(parseReduceOp("avg"), ReduceOp::kAvg);
  EXPECT_FALSE(parseReduceOp("mulsum"));
}

TEST(GpuCollective, CountsFollowNcclTests) {
  // 1000 floats on 8 ranks: all_gather / reduce_scatter / alltoall round down to 125 per rank.
  auto ar = collectiveCounts(Collective::kAllReduce, 4000, 4, 8);
  EXPECT_EQ(ar.sendCount, 1000u);
  EXPECT_EQ(ar.recvCount, 1000u);
  EXPECT_EQ(printedCount(ar), 1000u);
  auto ag = collectiveCounts(Collective::kAllGather, 4004, 4, 8);  // 1001 elements
  EXPECT_EQ(ag.sendCount, 125u);
  EXPECT_EQ(ag.recvCount, 1000u);
  EXPECT_EQ(ag.sendInPlaceOffset, 125u);
  EXPECT_EQ(printedBytes(ag, 4), 4000u);
  EXPECT_EQ(printedCount(ag), 125u);
  auto rs = collectiveCounts(Collective::kReduceScatter, 4000, 4, 8);
  EXPECT_EQ(rs.sendCount, 1000u);
  EXPECT_EQ(rs.recvCount, 125u);
  EXPECT_EQ(rs.recvInPlaceOffset, 125u);
  auto a2a = collectiveCounts(Collective::kAllToAll, 4000, 4, 8);
  EXPECT_EQ(a2a.sendCount, 1000u);
  EXPECT_EQ(a2a.paramCount, 125u);
}

TEST(GpuCollective, BusBandwidthDefinitions) {
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllToAll, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kSendRecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllReduce, 1), 0.0);
  // 1 GB all-reduce on 8 ranks in 10 ms: algbw 100 GB/s, busbw 175 GB/s.
  const auto ar = collectiveCounts(Collective::kAllReduce, 1'000'000'000, 4, 8);
  const auto bw = collectiveBandwidth(Collective::kAllReduce, ar, 4, 8, 0.01);
  EXPECT_NEAR(bw.algBwGBps, 100.0, 1e-9);
  EXPECT_NEAR(bw.busBwGBps, 175.0, 1e-9);
  // all_gather of 800 MB total on 8 ranks in 10 ms: algbw counts the whole gathered tensor.
  const auto ag = collectiveCounts(Collective::kAllGather, 800'000'000, 4, 8);
  const auto bw2 = collectiveBandwidth(Collective::kAllGather, ag, 4, 8, 0.01);
  EXPECT_NEAR(bw2.algBwGBps, 80.0, 1e-9);
  EXPECT_NEAR(bw2.busBwGBps, 70.0, 1e-9);
  EXPECT_EQ(collectiveBandwidth(Collective::kAllReduce, ar, 4, 8, 0).algBwGBps, 0.0);
}
