// GpuTelemetry without a GPU: the harness must still run (and say why no clocks were recorded)
// where NVML is missing, and decode NVML's clock-event reason bits as NVML's API reference
// defines them (GpuIdle 0x1, ApplicationsClocksSetting 0x2, SwPowerCap 0x4, HwSlowdown 0x8,
// SyncBoost 0x10, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40, HwPowerBrakeSlowdown 0x80,
// DisplayClockSetting 0x100).
#include <gtest/gtest.h>

#include "gpu/common/GpuTelemetry.h"

using fabricsim::gpu::GpuTelemetry;

TEST(GpuTelemetry, MissingLibraryIsReportedNotThrown) {
  const GpuTelemetry t("0000:00:00.0", "libfabricsim-no-such-nvml.so.1");
  EXPECT_FALSE(t.available());
  EXPECT_NE(t.note().find("libfabricsim-no-such-nvml.so.1"), std::string::npos) << t.note();
  EXPECT_FALSE(t.sample().has_value());
  EXPECT_TRUE(t.sampleJson().is_null());
  const auto d = t.describe();
  EXPECT_EQ(d["available"], false);
  EXPECT_EQ(d["note"], t.note());
}

TEST(GpuTelemetry, LibraryWithoutNvmlSymbolsIsUnavailable) {
  // The C math library loads everywhere and has none of NVML's entry points.
  const GpuTelemetry t("0000:00:00.0", "libm.so.6");
  EXPECT_FALSE(t.available());
  EXPECT_NE(t.note().find("nvmlInit_v2"), std::string::npos) << t.note();
}

TEST(GpuTelemetry, ReasonBitsDecodeToNvmlNames) {
  EXPECT_TRUE(GpuTelemetry::reasonNames(0).empty());
  EXPECT_EQ(GpuTelemetry::reasonNames(0x4 | 0x20),
            (std::vector<std::string>{"sw_power_cap", "sw_thermal_slowdown"}));
  EXPECT_EQ(GpuTelemetry::reasonNames(0x1 | 0x8 | 0x100),
            (std::vector<std::string>{"gpu_idle", "hw_slowdown", "display_clock_setting"}));
  EXPECT_EQ(GpuTelemetry::reasonNames(std::uint64_t{1} << 40), (std::vector<std::string>{"bit_40"}));
}

TEST(GpuTelemetry, SampleJsonCarriesUnitsAsNamed) {
  GpuTelemetry::Sample s;
  s.smMHz = 1980;
  s.memMHz = 2619;
  s.powerW = 612.5;
  s.temperatureC = 61;
  s.reasons = 0x4;
  const auto j = GpuTelemetry::toJson(s);
  EXPECT_EQ(j["sm_mhz"], 1980);
  EXPECT_EQ(j["mem_mhz"], 2619);
  EXPECT_DOUBLE_EQ(j["power_w"].get<double>(), 612.5);
  EXPECT_EQ(j["temperature_c"], 61);
  EXPECT_EQ(j["reasons"], nlohmann::json::array({"sw_power_cap"}));
}
