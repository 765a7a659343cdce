// The routing keys of ECMP as switches do it (hash_fields, seeds, resilient_hashing, wcmp):
// values, defaults, errors with file, line and key, and the results echo.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/SpecJson.h"
#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const std::string kLeafSpine =
    "topology:\n"
    "  kind: leaf-spine\n"
    "  leaves: 4\n"
    "  spines: 2\n"
    "  hosts_per_leaf: 4\n";

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml) {
  try {
    parseTopologyYaml(yaml, "dir/t.yaml");
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError for\n" << yaml;
  return {};
}

bool hasDiag(const std::vector<Diagnostic>& ds, const std::string& key, int line, const std::string& text) {
  for (const auto& d : ds)
    if (d.key == key && d.line == line && d.file == "dir/t.yaml" && d.message.find(text) != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST(RoutingHashKeys, DefaultsAreFiveTuplePerSwitchPlain) {
  const TopologySpec s = parseTopologyYaml(kLeafSpine, "t.yaml");
  EXPECT_EQ(s.routing.hashFields,
            (std::vector<std::string>{"src_ip", "dst_ip", "protocol", "src_port", "dst_port"}));
  EXPECT_EQ(s.routing.seeds, "per_switch");
  EXPECT_EQ(s.routing.resilientBuckets, 0);
  EXPECT_FALSE(s.routing.wcmp);
}

TEST(RoutingHashKeys, ValuesAreReadAndEchoed) {
  const TopologySpec s = parseTopologyYaml(kLeafSpine +
                                               "routing:\n"
                                               "  hash_fields: [src_ip, dst_ip]\n"
                                               "  seeds: equal\n"
                                               "  resilient_hashing: {buckets: 1024}\n"
                                               "  wcmp: true\n",
                                           "t.yaml");
  EXPECT_EQ(s.routing.hashFields, (std::vector<std::string>{"src_ip", "dst_ip"}));
  EXPECT_EQ(s.routing.seeds, "equal");
  EXPECT_EQ(s.routing.resilientBuckets, 1024);
  EXPECT_TRUE(s.routing.wcmp);
  const auto j = toJson(s)["routing"];
  EXPECT_EQ(j["hash_fields"], (nlohmann::json{"src_ip", "dst_ip"}));
  EXPECT_EQ(j["seeds"], "equal");
  EXPECT_EQ(j["resilient_buckets"], 1024);
  EXPECT_EQ(j["wcmp"], true);
  // true: the default table of 256 buckets; false: off.
  EXPECT_EQ(parseTopologyYaml(kLeafSpine + "routing: {resilient_hashing: true}\n", "t.yaml")
                .routing.resilientBuckets,
            256);
  EXPECT_EQ(parseTopologyYaml(kLeafSpine + "routing: {resilient_hashing: false}\n", "t.yaml")
                .routing.resilientBuckets,
            0);
}

TEST(RoutingHashKeys, BadValuesNameTheKeyAndLine) {
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  hash_fields: [src_ip, vlan]\n"),
                      "routing.hash_fields[1]", 7, "unknown header field 'vlan'"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  hash_fields: []\n"), "routing.hash_fields", 7,
                      "at least one"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  hash_fields: src_ip\n"), "routing.hash_fields",
                      7, "expected a list"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  hash_fields: [src_ip, src_ip]\n"),
                      "routing.hash_fields[1]", 7, "twice"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  seeds: random\n"), "routing.seeds", 7, "per_switch"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  resilient_hashing: {buckets: 8}\n"),
                      "routing.resilient_hashing.buckets", 7, "64"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  resilient_hashing: {size: 8}\n"),
                      "routing.resilient_hashing.size", 7, "buckets"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  resilient_hashing: maybe\n"),
                      "routing.resilient_hashing", 7, "true, false or {buckets: N}"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(kLeafSpine + "routing:\n  wcmp: 3\n"), "routing.wcmp", 7, "true or false"));
}

}  // namespace fabricsim
