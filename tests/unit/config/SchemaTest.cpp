// Schema: lookup, children under conditions, and the keys the topology loader accepts in each
// map: the schema's, under the conditions the document meets (its topology.kind), no more.
#include "sim/config/Schema.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

TEST(Schema, FindsKeysAndListElements) {
  const Schema& s = topologySchema();
  ASSERT_NE(s.find("switch.ecn.kmin"), nullptr);
  EXPECT_EQ(s.find("switch.ecn.kmin")->type, KeyType::Bytes);
  ASSERT_NE(s.find("failures[3].at"), nullptr);
  EXPECT_TRUE(s.find("failures[3].at")->required);
  EXPECT_EQ(s.find("switch.nonsense"), nullptr);
  EXPECT_EQ(Schema::normalise("a[12].b[0].c"), "a[].b[].c");
}

TEST(Schema, ChildrenFollowTheKind) {
  const Schema& s = topologySchema();
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(s.children("topology", {"topology.kind: fat-tree"})),
            sorted({"kind", "radix", "pods", "hosts_per_edge"}));
  EXPECT_EQ(sorted(s.children("topology", {"topology.kind: rail-optimized"})),
            sorted({"kind", "rails", "rail", "shared_spines"}));
}

// Every key of the schema's maps is one the loader accepts: a topology file holding it is not
// refused with "unknown key" (checked map by map by adding an unknown key beside it and reading
// the loader's list of what it expected).
TEST(Schema, EveryMapsKeysAreTheLoadersKeys) {
  const Schema& s = topologySchema();
  struct Case {
    std::string path, yaml, condition;
  };
  const std::string base = "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2}\n";
  const std::vector<Case> cases{
      {"", "bogus_key: 1\n" + base, ""},
      {"hosts", base + "hosts: {bogus_key: 1}\n", ""},
      {"links", base + "links: {bogus_key: 1}\n", ""},
      {"switch", base + "switch: {bogus_key: 1}\n", ""},
      {"switch.ecn", base + "switch: {ecn: {bogus_key: 1}}\n", ""},
      {"switch.pfc", base + "switch: {pfc: {bogus_key: 1}}\n", ""},
      {"routing", base + "routing: {bogus_key: 1}\n", ""},
      {"routing.bgp", base + "routing: {bgp: {bogus_key: 1}}\n", ""},
      {"nic", base + "nic: {bogus_key: 1}\n", ""},
      {"watchdog", base + "watchdog: {bogus_key: 1}\n", ""},
      {"episodes", base + "episodes: {bogus_key: 1}\n", ""},
      {"congestion_control", base + "congestion_control: {bogus_key: 1}\n", ""},
      {"congestion_control.dcqcn", base + "congestion_control: {dcqcn: {bogus_key: 1}}\n", ""},
      {"topology", "topology: {kind: fat-tree, radix: 4, bogus_key: 1}\n", "topology.kind: fat-tree"},
      {"topology", "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2, bogus_key: 1}\n",
       "topology.kind: leaf-spine"},
  };
  for (const auto& c : cases) {
    std::string expected;
    try {
      parseTopologyYaml(c.yaml, "t.yaml");
    } catch (const InputError& e) {
      for (const auto& d : e.diagnostics())
        if (d.message.find("unknown key 'bogus_key'") != std::string::npos) expected = d.message;
    }
    ASSERT_FALSE(expected.empty()) << c.path;
    const std::string list = expected.substr(expected.find("expected one of: ") + 17);
    std::vector<std::string> loader;
    for (size_t at = 0; at < list.size();) {
      const size_t bar = list.find(" | ", at);
      loader.push_back(list.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
      at = bar == std::string::npos ? list.size() : bar + 3;
    }
    std::vector<std::string> schema = s.children(c.path, {c.condition});
    std::sort(loader.begin(), loader.end());
    std::sort(schema.begin(), schema.end());
    EXPECT_EQ(schema, loader) << "'" << c.path << "'";
  }
}

}  // namespace
}  // namespace fabricsim
