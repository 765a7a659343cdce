// Unit-string parsing and exact serialization time (sim/core/Units.h).
#include "sim/core/Units.h"

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

TEST(UnitsTest, ParsesTimes) {
  EXPECT_EQ(parseTime("1.5us").value->picos(), 1'500'000);
  EXPECT_EQ(parseTime("100ns").value->picos(), 100'000);
  EXPECT_EQ(parseTime("2ms").value->picos(), 2'000'000'000);
  EXPECT_EQ(parseTime("1s").value->picos(), 1'000'000'000'000);
  EXPECT_EQ(parseTime("250ps").value->picos(), 250);
  EXPECT_EQ(parseTime(" 0ns ").value->picos(), 0);
}

TEST(UnitsTest, RefusesBadTimes) {
  EXPECT_FALSE(parseTime("5").value);
  EXPECT_FALSE(parseTime("us").value);
  EXPECT_FALSE(parseTime("1.5 lightyears").value);
  EXPECT_FALSE(parseTime("-1us").value);
  EXPECT_NE(parseTime("5").error.find("unit"), std::string::npos);
}

TEST(UnitsTest, ParsesBytes) {
  EXPECT_EQ(*parseBytes("32MiB").value, 32LL * 1024 * 1024);
  EXPECT_EQ(*parseBytes("60KB").value, 60'000);
  EXPECT_EQ(*parseBytes("2MB").value, 2'000'000);
  EXPECT_EQ(*parseBytes("4096B").value, 4096);
  EXPECT_EQ(*parseBytes("1GiB").value, 1LL << 30);
  EXPECT_EQ(*parseBytes("4096", true).value, 4096);
  EXPECT_FALSE(parseBytes("4096").value);
  EXPECT_FALSE(parseBytes("-1KB").value);
  EXPECT_FALSE(parseBytes("1.5B").value);
}

TEST(UnitsTest, ParsesRates) {
  EXPECT_EQ(parseBitRate("400Gbps").value->bitsPerSecond(), 400'000'000'000);
  EXPECT_EQ(parseBitRate("100Mbps").value->bitsPerSecond(), 100'000'000);
  EXPECT_EQ(parseBitRate("50GBps").value->bitsPerSecond(), 400'000'000'000);
  EXPECT_EQ(parseBitRate("1Tbps").value->bitsPerSecond(), 1'000'000'000'000);
  EXPECT_FALSE(parseBitRate("100").value);
  EXPECT_FALSE(parseBitRate("0Gbps").value);
  EXPECT_FALSE(parseBitRate("-100Gbps").value);
}

TEST(UnitsTest, SerializationTimeIsExactAndRoundsUp) {
  // 1500 B at 100 Gb/s = 120 ns exactly.
  EXPECT_EQ(serializationTime(1500, BitRate::gbps(100)).picos(), 120'000);
  // 1 B at 3 bit/s = 8/3 s, rounded up to the next ps.
  EXPECT_EQ(serializationTime(1, BitRate::bps(3)).picos(), 2'666'666'666'667);
  EXPECT_EQ(bytesInTime(Time::ns(120), BitRate::gbps(100)), 1500);
}

}  // namespace
}  // namespace fabricsim
