// `routing.algorithm: ib-sm` and `routing.ib_sm`: defaults per link technology, and the file:line
// diagnostics for an LMC above 7, an unknown engine, ib-sm on RoCE, Ethernet routing (five-tuple
// algorithms, BGP) on InfiniBand, and adaptive routing with a strict receiver.
#include "sim/config/IbSmSectionReader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const std::string kTopo = "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2}\n";
const std::string kIb = kTopo + "links: {technology: infiniband}\n";
const std::string kRoce = kTopo + "links: {technology: roce}\n";

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml) {
  try {
    parseTopologyYaml(yaml, "t.yaml");
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError for:\n" << yaml;
  return {};
}

bool hasDiag(const std::vector<Diagnostic>& ds, const std::string& key, int line, const std::string& text) {
  for (const auto& d : ds)
    if (d.key == key && d.line == line && d.message.find(text) != std::string::npos) return true;
  return false;
}

TEST(IbSmSectionReader, IbSmIsTheDefaultOnInfinibandOnly) {
  const TopologySpec ib = parseTopologyYaml(kIb, "t.yaml");
  EXPECT_EQ(ib.routing.algorithm, "ib-sm");
  EXPECT_EQ(ib.routing.ibSm.engine, "auto");
  EXPECT_EQ(ib.routing.ibSm.lmc, 0);
  EXPECT_FALSE(ib.routing.ibSm.adaptive);
  EXPECT_EQ(ib.routing.ibSm.rerouteDelay, Time::ms(10'000));  // the lower end of Mellanox's 10-20 s
  EXPECT_EQ(parseTopologyYaml(kRoce, "t.yaml").routing.algorithm, "ecmp");
}

TEST(IbSmSectionReader, ReadsTheKeys) {
  const TopologySpec s = parseTopologyYaml(
      kIb +
          "routing: {algorithm: ib-sm, ib_sm: {engine: dmodk, lmc: 3, adaptive: true, reroute_delay: 2ms}}\n",
      "t.yaml");
  EXPECT_EQ(s.routing.ibSm.engine, "dmodk");
  EXPECT_EQ(s.routing.ibSm.lmc, 3);
  EXPECT_TRUE(s.routing.ibSm.adaptive);
  EXPECT_EQ(s.routing.ibSm.rerouteDelay, Time::ms(2));
}

TEST(IbSmSectionReader, LmcAboveSevenIsRefusedWithItsLine) {
  const auto d = diagnosticsOf(kIb + "routing:\n  ib_sm: {lmc: 8}\n");
  EXPECT_TRUE(hasDiag(d, "routing.ib_sm.lmc", 4, "8"));
}

TEST(IbSmSectionReader, UnknownEngineIsRefused) {
  const auto d = diagnosticsOf(kIb + "routing: {ib_sm: {engine: minhop}}\n");
  EXPECT_TRUE(hasDiag(d, "routing.ib_sm.engine", 3, "minhop"));
}

TEST(IbSmSectionReader, IbSmOnRoceIsRefused) {
  const auto d = diagnosticsOf(kRoce + "routing: {algorithm: ib-sm}\n");
  EXPECT_TRUE(hasDiag(d, "routing.algorithm", 3, "links.technology: infiniband"));
}

TEST(IbSmSectionReader, EthernetRoutingOnInfinibandIsRefused) {
  for (const char* algo : {"ecmp", "flowlet", "spray", "adaptive"}) {
    const auto d = diagnosticsOf(kIb + "routing: {algorithm: " + algo + "}\n");
    EXPECT_TRUE(hasDiag(d, "routing.algorithm", 3, "destination LID")) << algo;
  }
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(kIb + "routing: {algorithm: bgp}\n"), "routing.algorithm", 3, "destination LID"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kIb + "routing: {control_plane: bgp}\n"), "routing.control_plane", 3,
                      "destination LID"));
}

TEST(IbSmSectionReader, AdaptiveNeedsATolerantReceiver) {
  const auto d = diagnosticsOf(kIb + "routing: {ib_sm: {adaptive: true}}\nnic: {reorder: strict}\n");
  EXPECT_TRUE(hasDiag(d, "nic.reorder", 4, "tolerant"));
}

}  // namespace
}  // namespace fabricsim
