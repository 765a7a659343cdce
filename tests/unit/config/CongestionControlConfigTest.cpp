// congestion_control and the switch's ECN / PFC / credit keys: presets, overrides, ranges,
// technology cross-checks, and their JSON.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/DcqcnPresets.h"
#include "sim/config/SpecJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const std::string kTopo =
    "topology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"  // line 1
    "links: {technology: roce, host_speed: 100Gbps}\n";                        // line 2
const std::string kIbTopo =
    "topology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
    "links: {technology: infiniband, host_speed: 200Gbps}\n";

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    parseTopologyYaml(yaml, "cc.yaml", sets);
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError for:\n" << yaml;
  return {};
}

/// True if some diagnostic has `key`, `line` (< 0: any) and a message containing `text`.
bool hasDiag(const std::vector<Diagnostic>& ds, const std::string& key, int line,
             const std::string& text = "") {
  for (const auto& d : ds)
    if (d.key == key && (line < 0 || d.line == line) && d.message.find(text) != std::string::npos)
      return true;
  std::string all;
  for (const auto& d : ds) all += "\n  " + d.format();
  ADD_FAILURE() << "no diagnostic for " << key << " at line " << line << " containing '" << text
                << "'; got:" << all;
  return false;
}

DcqcnSpec preset(const std::string& name) {
  DcqcnSpec s;
  EXPECT_TRUE(applyDcqcnPreset(name, s));
  return s;
}

void expectSameDcqcn(const DcqcnSpec& a, const DcqcnSpec& b) {
  EXPECT_EQ(a.preset, b.preset);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_DOUBLE_EQ(a.g, b.g);
  EXPECT_DOUBLE_EQ(a.initialAlpha, b.initialAlpha);
  EXPECT_EQ(a.alphaTimer, b.alphaTimer);
  EXPECT_EQ(a.rateIncreaseTimer, b.rateIncreaseTimer);
  EXPECT_EQ(a.byteCounter, b.byteCounter);
  EXPECT_EQ(a.fastRecoveryStages, b.fastRecoveryStages);
  EXPECT_EQ(a.additiveIncrease, b.additiveIncrease);
  EXPECT_EQ(a.hyperIncrease, b.hyperIncrease);
  EXPECT_EQ(a.minRate, b.minRate);
  EXPECT_EQ(a.rateReduceInterval, b.rateReduceInterval);
  EXPECT_DOUBLE_EQ(a.maxDecreaseFraction, b.maxDecreaseFraction);
  EXPECT_EQ(a.clampTargetRate, b.clampTargetRate);
  EXPECT_EQ(a.clampTargetRateAfterTimeIncrease, b.clampTargetRateAfterTimeIncrease);
  EXPECT_EQ(a.rateOnFirstCnp, b.rateOnFirstCnp);
  EXPECT_EQ(a.cnpInterval, b.cnpInterval);
}

TEST(CongestionControlConfigTest, PresetValues) {
  const DcqcnSpec cx = preset("connectx");
  EXPECT_EQ(cx.variant, "mlx");
  EXPECT_DOUBLE_EQ(cx.g, 5.0 / 1024);
  EXPECT_DOUBLE_EQ(cx.initialAlpha, 1023.0 / 1024);
  EXPECT_EQ(cx.alphaTimer, Time::us(1));
  EXPECT_EQ(cx.rateIncreaseTimer, Time::us(300));
  EXPECT_EQ(cx.byteCounter, 0);  // off, as HPCC's ns-3 Mellanox model (DcqcnPresets.cpp says why)
  EXPECT_EQ(cx.fastRecoveryStages, 1);
  EXPECT_EQ(cx.additiveIncrease, BitRate::bps(5'000'000));
  EXPECT_EQ(cx.hyperIncrease, BitRate::bps(50'000'000));
  EXPECT_EQ(cx.minRate, BitRate::bps(1'000'000));
  EXPECT_EQ(cx.rateReduceInterval, Time::us(4));
  EXPECT_DOUBLE_EQ(cx.maxDecreaseFraction, 0.5);
  EXPECT_FALSE(cx.clampTargetRate);
  EXPECT_TRUE(cx.clampTargetRateAfterTimeIncrease);
  EXPECT_EQ(cx.rateOnFirstCnp, BitRate::bps(0));
  EXPECT_EQ(cx.cnpInterval, Time::us(4));  // MIN_TIME_BETWEEN_CNPS firmware default

  const DcqcnSpec p = preset("dcqcn-paper");
  EXPECT_EQ(p.variant, "paper");
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 256);
  EXPECT_DOUBLE_EQ(p.initialAlpha, 1.0);
  EXPECT_EQ(p.alphaTimer, Time::us(55));
  EXPECT_EQ(p.rateIncreaseTimer, Time::us(55));
  EXPECT_EQ(p.byteCounter, 10'000'000);
  EXPECT_EQ(p.fastRecoveryStages, 5);
  EXPECT_EQ(p.additiveIncrease, BitRate::bps(40'000'000));
  EXPECT_EQ(p.hyperIncrease, BitRate::bps(400'000'000));
  EXPECT_EQ(p.minRate, BitRate::bps(10'000'000));
  EXPECT_EQ(p.rateReduceInterval, Time::zero());
  EXPECT_DOUBLE_EQ(p.maxDecreaseFraction, 1.0);
  EXPECT_TRUE(p.clampTargetRate);
  EXPECT_EQ(p.cnpInterval, Time::us(50));

  DcqcnSpec untouched = cx;
  EXPECT_FALSE(applyDcqcnPreset("hpcc", untouched));
  expectSameDcqcn(untouched, cx);
}

TEST(CongestionControlConfigTest, DefaultIsNoneWithPaperParameters) {
  const TopologySpec s = parseTopologyYaml(kTopo, "cc.yaml");
  EXPECT_EQ(s.congestionControl.algorithm, "none");
  expectSameDcqcn(s.congestionControl.dcqcn, preset("dcqcn-paper"));
}

TEST(CongestionControlConfigTest, PresetsLoad) {
  const TopologySpec cx =
      parseTopologyYaml(kTopo + "congestion_control: {algorithm: dcqcn, preset: connectx}\n", "cc.yaml");
  EXPECT_EQ(cx.congestionControl.algorithm, "dcqcn");
  expectSameDcqcn(cx.congestionControl.dcqcn, preset("connectx"));
  const TopologySpec p =
      parseTopologyYaml(kTopo + "congestion_control: {algorithm: dcqcn, preset: dcqcn-paper}\n", "cc.yaml");
  expectSameDcqcn(p.congestionControl.dcqcn, preset("dcqcn-paper"));
}

TEST(CongestionControlConfigTest, OverridesApplyOnTopOfThePreset) {
  const std::string yaml =
      kTopo +
      "congestion_control:\n"
      "  dcqcn: {variant: mlx, g: 0.0625, initial_alpha: 0.5, alpha_timer: 10us, rate_increase_timer: "
      "100us,\n"
      "          byte_counter: 64KiB, fast_recovery_stages: 3, additive_increase: 20Mbps,\n"
      "          hyper_increase: 1Gbps, min_rate: 100Mbps, rate_reduce_interval: 8us,\n"
      "          max_decrease_fraction: 0.25, clamp_target_rate: true,\n"
      "          clamp_target_rate_after_time_increase: false, rate_on_first_cnp: 40Gbps,\n"
      "          cnp_interval: 4us}\n"
      "  algorithm: dcqcn\n"  // after the map: overrides still win over the preset
      "  preset: dcqcn-paper\n";
  const DcqcnSpec d = parseTopologyYaml(yaml, "cc.yaml").congestionControl.dcqcn;
  EXPECT_EQ(d.preset, "dcqcn-paper");
  EXPECT_EQ(d.variant, "mlx");
  EXPECT_DOUBLE_EQ(d.g, 0.0625);
  EXPECT_DOUBLE_EQ(d.initialAlpha, 0.5);
  EXPECT_EQ(d.alphaTimer, Time::us(10));
  EXPECT_EQ(d.rateIncreaseTimer, Time::us(100));
  EXPECT_EQ(d.byteCounter, 64 * 1024);
  EXPECT_EQ(d.fastRecoveryStages, 3);
  EXPECT_EQ(d.additiveIncrease, BitRate::bps(20'000'000));
  EXPECT_EQ(d.hyperIncrease, BitRate::gbps(1));
  EXPECT_EQ(d.minRate, BitRate::bps(100'000'000));
  EXPECT_EQ(d.rateReduceInterval, Time::us(8));
  EXPECT_DOUBLE_EQ(d.maxDecreaseFraction, 0.25);
  EXPECT_TRUE(d.clampTargetRate);
  EXPECT_FALSE(d.clampTargetRateAfterTimeIncrease);
  EXPECT_EQ(d.rateOnFirstCnp, BitRate::gbps(40));
  EXPECT_EQ(d.cnpInterval, Time::us(4));

  // A partial override keeps the rest of the preset.
  const DcqcnSpec partial =
      parseTopologyYaml(
          kTopo + "congestion_control: {algorithm: dcqcn, dcqcn: {min_rate: 1Gbps, rate_on_first_cnp: 0}}\n",
          "cc.yaml")
          .congestionControl.dcqcn;
  DcqcnSpec expected = preset("dcqcn-paper");
  expected.minRate = BitRate::gbps(1);
  expectSameDcqcn(partial, expected);
}

TEST(CongestionControlConfigTest, OverridesFromSet) {
  const TopologySpec s =
      parseTopologyYaml(kTopo, "cc.yaml",
                        {"congestion_control.algorithm=dcqcn", "congestion_control.preset=dcqcn-paper",
                         "congestion_control.dcqcn.byte_counter=1MB"});
  EXPECT_EQ(s.congestionControl.dcqcn.preset, "dcqcn-paper");
  EXPECT_EQ(s.congestionControl.dcqcn.byteCounter, 1'000'000);
  EXPECT_EQ(s.congestionControl.dcqcn.fastRecoveryStages, 5);
}

TEST(CongestionControlConfigTest, BadDcqcnValuesNameKeyAndLine) {
  const std::string head =
      kTopo + "congestion_control:\n  algorithm: dcqcn\n  dcqcn:\n";  // dcqcn keys from line 6
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    g: 0\n"), "congestion_control.dcqcn.g", 6,
                      "a positive number at most 1"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    g: 1.5\n"), "congestion_control.dcqcn.g", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    initial_alpha: -0.1\n"),
                      "congestion_control.dcqcn.initial_alpha", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    alpha_timer: 55\n"), "congestion_control.dcqcn.alpha_timer", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    rate_increase_timer: 0us\n"),
                      "congestion_control.dcqcn.rate_increase_timer", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    byte_counter: 10\n"), "congestion_control.dcqcn.byte_counter", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    byte_counter: on\n"), "congestion_control.dcqcn.byte_counter", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    fast_recovery_stages: -1\n"),
                      "congestion_control.dcqcn.fast_recovery_stages", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    additive_increase: 40\n"),
                      "congestion_control.dcqcn.additive_increase", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    hyper_increase: 0Mbps\n"),
                      "congestion_control.dcqcn.hyper_increase", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    alpha_timer: 0us\n"), "congestion_control.dcqcn.alpha_timer", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    min_rate: 0Gbps\n"), "congestion_control.dcqcn.min_rate", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    min_rate: 200Gbps\n"), "congestion_control.dcqcn.min_rate", 6,
                      "links.host_speed"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    max_decrease_fraction: 0\n"),
                      "congestion_control.dcqcn.max_decrease_fraction", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    clamp_target_rate: maybe\n"),
                      "congestion_control.dcqcn.clamp_target_rate", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    rate_on_first_cnp: 101Gbps\n"),
                      "congestion_control.dcqcn.rate_on_first_cnp", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    cnp_interval: -1us\n"), "congestion_control.dcqcn.cnp_interval", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    rai: 5Mbps\n"), "congestion_control.dcqcn.rai", 6, "unknown key"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kTopo + "congestion_control: {algorithm: dcqcn, preset: cx6}\n"),
                      "congestion_control.preset", 3, "connectx | dcqcn-paper"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kTopo + "congestion_control: {algorithm: hpcc}\n"),
                      "congestion_control.algorithm", 3));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kTopo + "congestion_control: {algorithm: dcqcn, dcqcn: 5}\n"),
                      "congestion_control.dcqcn", 3, "map"));
  // Every error in the file is reported.
  const auto many = diagnosticsOf(head + "    g: 0\n    byte_counter: 10\n    cnp_interval: 1\n");
  EXPECT_EQ(many.size(), 3u);
}

TEST(CongestionControlConfigTest, VariantFollowsThePresetUnlessGiven) {
  const auto dcqcnOf = [](const std::string& cc) {
    return parseTopologyYaml(kTopo + cc, "cc.yaml").congestionControl.dcqcn;
  };
  EXPECT_EQ(dcqcnOf("congestion_control: {algorithm: dcqcn}\n").variant, "paper");
  EXPECT_EQ(dcqcnOf("congestion_control: {algorithm: dcqcn, preset: connectx}\n").variant, "mlx");
  // An explicit variant overrides the preset's. The paper machine has no decrease grid, so the
  // connectx preset's 4 us is dropped with it; mlx needs one, so the paper preset must be given one.
  const DcqcnSpec cxPaper =
      dcqcnOf("congestion_control: {algorithm: dcqcn, preset: connectx, dcqcn: {variant: paper}}\n");
  EXPECT_EQ(cxPaper.variant, "paper");
  EXPECT_EQ(cxPaper.rateReduceInterval, Time::zero());
  EXPECT_DOUBLE_EQ(cxPaper.g, 5.0 / 1024);
  const DcqcnSpec paperMlx =
      dcqcnOf("congestion_control: {algorithm: dcqcn, dcqcn: {variant: mlx, rate_reduce_interval: 50us}}\n");
  EXPECT_EQ(paperMlx.variant, "mlx");
  EXPECT_EQ(paperMlx.rateReduceInterval, Time::us(50));
  EXPECT_EQ(paperMlx.rateIncreaseTimer, Time::us(55));
  // The byte counter turns off with 0, 0B or off.
  for (const char* off : {"0", "0B", "off"})
    EXPECT_EQ(dcqcnOf(std::string("congestion_control: {dcqcn: {byte_counter: ") + off + "}}\n").byteCounter,
              0)
        << off;
  EXPECT_EQ(dcqcnOf("congestion_control: {dcqcn: {byte_counter: 32767B}}\n").byteCounter, 32767);
  const TopologySpec set = parseTopologyYaml(
      kTopo, "cc.yaml", {"congestion_control.preset=connectx", "congestion_control.dcqcn.variant=paper"});
  EXPECT_EQ(set.congestionControl.dcqcn.variant, "paper");
}

TEST(CongestionControlConfigTest, BadVariantsNameKeyAndLine) {
  const std::string head = kTopo + "congestion_control:\n  algorithm: dcqcn\n  dcqcn:\n";  // keys from line 6
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    variant: cx7\n"), "congestion_control.dcqcn.variant", 6,
                      "paper | mlx"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    variant: paper\n    rate_reduce_interval: 4us\n"),
                      "congestion_control.dcqcn.rate_reduce_interval", 7, "variant paper"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    variant: mlx\n    rate_reduce_interval: 0us\n"),
                      "congestion_control.dcqcn.rate_reduce_interval", 7, "positive"));
  // mlx over the paper preset (no interval): reported at the variant key, in the file or --set.
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    variant: mlx\n"), "congestion_control.dcqcn.variant", 6,
                      "rate_reduce_interval"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kTopo, {"congestion_control.dcqcn.variant=mlx"}),
                      "congestion_control.dcqcn.variant", 0, "--set"));
  const std::string cx = kTopo + "congestion_control:\n  preset: connectx\n  dcqcn:\n";
  EXPECT_TRUE(hasDiag(diagnosticsOf(cx + "    rate_reduce_interval: 0us\n"),
                      "congestion_control.dcqcn.rate_reduce_interval", 6, "variant mlx"));
  // By --set: the diagnostic names it.
  EXPECT_TRUE(hasDiag(diagnosticsOf(kTopo, {"congestion_control.dcqcn.variant=hpcc"}),
                      "congestion_control.dcqcn.variant", 0, "--set"));
}

TEST(CongestionControlConfigTest, AlgorithmMustSuitTheLinkTechnology) {
  EXPECT_TRUE(hasDiag(diagnosticsOf(kIbTopo + "congestion_control: {algorithm: dcqcn}\n"),
                      "congestion_control.algorithm", 3, "links.technology: roce"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kTopo + "congestion_control:\n  algorithm: ibcc\n"),
                      "congestion_control.algorithm", 4, "links.technology: infiniband"));
  // Given by --set (as `run --cc` does): no line, the --set is named.
  const auto d = diagnosticsOf(kIbTopo, {"congestion_control.algorithm=dcqcn"});
  EXPECT_TRUE(hasDiag(d, "congestion_control.algorithm", 0, "--set"));
  // Parameter maps for the other technology's algorithm are accepted (shared sweep files).
  const TopologySpec s = parseTopologyYaml(
      kIbTopo + "congestion_control: {algorithm: ibcc, preset: dcqcn-paper, dcqcn: {g: 0.5}}\n", "cc.yaml");
  EXPECT_EQ(s.congestionControl.algorithm, "ibcc");
  EXPECT_DOUBLE_EQ(s.congestionControl.dcqcn.g, 0.5);
}

TEST(CongestionControlConfigTest, IbccParameters) {
  const TopologySpec s = parseTopologyYaml(
      kIbTopo +
          "congestion_control:\n  algorithm: ibcc\n"
          "  ibcc: {ccti_increase: 2, ccti_limit: 64, ccti_timer: 20us, cct_scale: 4, becn_interval: 5us}\n",
      "cc.yaml");
  const IbCcSpec& ib = s.congestionControl.ibcc;
  EXPECT_EQ(ib.cctiIncrease, 2);
  EXPECT_EQ(ib.cctiLimit, 64);
  EXPECT_EQ(ib.cctiTimer, Time::us(20));
  EXPECT_DOUBLE_EQ(ib.cctScale, 4.0);
  EXPECT_EQ(ib.becnInterval, Time::us(5));

  const std::string head = kIbTopo + "congestion_control:\n  algorithm: ibcc\n  ibcc:\n";  // keys from line 6
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    ccti_limit: 0\n"), "congestion_control.ibcc.ccti_limit", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    ccti_increase: 20000\n"),
                      "congestion_control.ibcc.ccti_increase", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    ccti_timer: 0ns\n"), "congestion_control.ibcc.ccti_timer", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "    cct_scale: 0\n"), "congestion_control.ibcc.cct_scale", 6,
                      "positive"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    becn_interval: 5\n"), "congestion_control.ibcc.becn_interval", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "    cctl: 5\n"), "congestion_control.ibcc.cctl", 6, "unknown key"));
}

TEST(CongestionControlConfigTest, SwitchEcnPfcAndCreditKeys) {
  const std::string yaml = kTopo +
                           "switch:\n"
                           "  buffer: 32MiB\n"
                           "  ecn: {kmin: 100KB, kmax: 400KB, pmax: 0.2, mark_on: dequeue, classes: [0, 3]}\n"
                           "  pfc: {dynamic_alpha: 0.125, xon_delta: 8KiB, headroom: 96KiB, quanta: 1000,\n"
                           "        classes: [3]}\n"
                           "  credit_buffer: 256KiB\n";
  const TopologySpec s = parseTopologyYaml(yaml, "cc.yaml");
  EXPECT_TRUE(s.sw.ecn.markOnDequeue);
  EXPECT_EQ(s.sw.ecn.classMask, 0b1001);
  EXPECT_TRUE(s.sw.pfc.enabled);
  EXPECT_DOUBLE_EQ(s.sw.pfc.dynamicAlpha, 0.125);
  EXPECT_EQ(s.sw.pfc.xoff, 0);
  EXPECT_EQ(s.sw.pfc.xonDelta, 8 * 1024);
  EXPECT_EQ(s.sw.pfc.headroom, 96 * 1024);
  EXPECT_EQ(s.sw.pfc.quanta, 1000);
  EXPECT_EQ(s.sw.pfc.classMask, 0b1000);
  EXPECT_EQ(s.sw.creditBuffer, 256 * 1024);

  const TopologySpec d =
      parseTopologyYaml(kTopo + "switch: {ecn: {kmin: 1KB, kmax: 2KB, pmax: 0.1}}\n", "cc.yaml");
  EXPECT_FALSE(d.sw.ecn.markOnDequeue);
  EXPECT_EQ(d.sw.ecn.classMask, 0x7F);
  EXPECT_EQ(d.sw.pfc.quanta, 65535);
  EXPECT_EQ(d.sw.creditBuffer, 0);

  const std::string head = kTopo + "switch:\n";  // switch keys from line 4
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  ecn: {kmin: 1KB, kmax: 2KB, pmax: 0.1, mark_on: both}\n"),
                      "switch.ecn.mark_on", 4, "enqueue | dequeue"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  ecn: {kmin: 1KB, kmax: 2KB, pmax: 0.1, classes: [1, 7]}\n"),
                      "switch.ecn.classes[1]", 4));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  ecn: {kmin: 1KB, kmax: 2KB, pmax: 0.1, classes: []}\n"),
                      "switch.ecn.classes", 4, "at least one"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  pfc: {xon: 10KB}\n"), "switch.pfc.xoff", 4, "missing"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  pfc: {dynamic_alpha: 0}\n"), "switch.pfc.dynamic_alpha", 4));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "  pfc: {dynamic_alpha: 1, quanta: 0}\n"), "switch.pfc.quanta", 4));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "  pfc: {dynamic_alpha: 1, quanta: 70000}\n"), "switch.pfc.quanta", 4));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  pfc: {dynamic_alpha: 1, headroom: 64MiB}\n"),
                      "switch.pfc.headroom", 4, "within the switch buffer"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  pfc: {dynamic_alpha: 1, classes: 3}\n"), "switch.pfc.classes",
                      4, "list"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(head + "  pfc: {xoff: 10KB, xon: 20KB}\n"), "switch.pfc.xon", 4, "xon <= xoff"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  credit_buffer: 1KiB\n"), "switch.credit_buffer", 4, "one MTU"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(head + "  credit_buffer: 64\n"), "switch.credit_buffer", 4));
}

TEST(CongestionControlConfigTest, SpecJsonCarriesTheNewFields) {
  const std::string yaml =
      kTopo +
      "switch: {ecn: {kmin: 1KB, kmax: 2KB, pmax: 0.1, mark_on: dequeue, classes: [2]},\n"
      "         pfc: {dynamic_alpha: 0.5, headroom: 50KB, classes: [2, 3]}, credit_buffer: 64KiB}\n"
      "congestion_control: {algorithm: dcqcn, preset: dcqcn-paper, dcqcn: {min_rate: 2Gbps}}\n";
  const auto j = toJson(parseTopologyYaml(yaml, "cc.yaml"));
  EXPECT_EQ(j["switch"]["credit_buffer_bytes"], 65536);
  EXPECT_EQ(j["switch"]["ecn"]["mark_on"], "dequeue");
  EXPECT_EQ(j["switch"]["ecn"]["classes"], nlohmann::json::array({2}));
  EXPECT_EQ(j["switch"]["pfc"]["dynamic_alpha"], 0.5);
  EXPECT_EQ(j["switch"]["pfc"]["headroom_bytes"], 50'000);
  EXPECT_EQ(j["switch"]["pfc"]["xon_delta_bytes"], 0);
  EXPECT_EQ(j["switch"]["pfc"]["quanta"], 65535);
  EXPECT_EQ(j["switch"]["pfc"]["classes"], nlohmann::json::array({2, 3}));
  const auto& cc = j["congestion_control"];
  EXPECT_EQ(cc["algorithm"], "dcqcn");
  EXPECT_EQ(cc["preset"], "dcqcn-paper");
  EXPECT_EQ(cc["dcqcn"]["min_rate_bps"], 2'000'000'000);
  EXPECT_EQ(cc["dcqcn"]["alpha_timer_ps"], 55'000'000);
  EXPECT_EQ(cc["dcqcn"]["byte_counter_bytes"], 10'000'000);
  EXPECT_EQ(cc["dcqcn"]["fast_recovery_stages"], 5);
  EXPECT_EQ(cc["dcqcn"]["clamp_target_rate"], true);
  EXPECT_EQ(cc["dcqcn"]["rate_on_first_cnp_bps"], 0);
  EXPECT_EQ(cc["ibcc"]["ccti_limit"], 127);
  EXPECT_EQ(cc["ibcc"]["ccti_timer_ps"], 10'000'000);
  EXPECT_EQ(cc["dcqcn"]["variant"], "paper");
  EXPECT_EQ(cc["dcqcn"].size(), 16u);
  EXPECT_EQ(cc["ibcc"].size(), 5u);
}

}  // namespace
}  // namespace fabricsim
