// TopologyLoader: schema, defaults, cross-key rules, --set overrides, diagnostics.
#include "sim/config/TopologyLoader.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/SetOverride.h"
#include "sim/config/SpecJson.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const std::string kLeafSpine =
    "topology:\n"
    "  kind: leaf-spine\n"
    "  leaves: 4\n"
    "  spines: 2\n"
    "  hosts_per_leaf: 4\n";

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    parseTopologyYaml(yaml, "dir/t.yaml", sets);
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

std::vector<Diagnostic> fileDiagnostics(const std::string& name) {
  const std::string path = std::string(FABRICSIM_SOURCE_DIR) + "/tests/data/bad/" + name;
  try {
    loadTopologyFile(path);
  } catch (const InputError& e) {
    for (const auto& d : e.diagnostics()) EXPECT_EQ(d.file, path);
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError from " << name;
  return {};
}

bool hasDiag(const std::vector<Diagnostic>& ds, const std::string& key, int line,
             const std::string& text = "") {
  for (const auto& d : ds)
    if (d.key == key && (line < 0 || d.line == line) && d.message.find(text) != std::string::npos)
      return true;
  return false;
}

TEST(TopologyLoaderTest, DefaultsAndName) {
  const TopologySpec s = parseTopologyYaml(kLeafSpine, "dir/my-fabric.yaml");
  EXPECT_EQ(s.name, "my-fabric");
  EXPECT_EQ(s.kind, TopologyKind::LeafSpine);
  EXPECT_EQ(s.leafSpine.leaves, 4);
  EXPECT_EQ(s.leafSpine.linksPerSpine, 1);
  EXPECT_EQ(s.hosts.gpusPerHost, 1);
  EXPECT_EQ(s.hosts.nicsPerHost, 1);
  EXPECT_EQ(s.links.technology, "roce");
  EXPECT_EQ(s.nic.reorder, "strict");
  EXPECT_FALSE(s.sw.ecn.enabled);
  EXPECT_FALSE(s.sw.pfc.enabled);
}

TEST(TopologyLoaderTest, ReadsEveryKey) {
  const std::string yaml =
      kLeafSpine +
      "name: full\n"
      "hosts: {gpus_per_host: 8, nics_per_host: 4, nvlink: {bandwidth: 900GBps, latency: 2us}}\n"
      "links: {technology: infiniband, host_speed: 400Gbps, fabric_speed: 800Gbps,\n"
      "        tier_speeds: [200Gbps], latency: 500ns, mtu: 4096}\n"
      "switch: {buffer: 64MiB, latency: 300ns, dt_alpha: 2,\n"
      "         ecn: {kmin: 100KB, kmax: 400KB, pmax: 0.1}, pfc: {xoff: 60KB, xon: 48KB}}\n"
      "routing: {algorithm: ib-sm, hash_seed: 7, ib_sm: {engine: updn, lmc: 2}}\n"
      "nic: {local_ack_timeout: 14, retry_count: 5, ack_every: 4, window: 1MiB}\n"
      "congestion_control: {algorithm: ibcc}\n"
      "workload: ../w/perm.yaml\n"
      "failures:\n"
      "  - {at: 100us, action: down, link: [leaf-0, spine-0]}\n"
      "  - {at: 1ms, action: up, switch: spine-1}\n";
  const TopologySpec s = parseTopologyYaml(yaml, "dir/t.yaml");
  EXPECT_EQ(s.name, "full");
  EXPECT_EQ(s.hosts.gpusPerHost, 8);
  EXPECT_EQ(s.hosts.nicsPerHost, 4);
  EXPECT_EQ(s.hosts.nvlinkBandwidth.bitsPerSecond(), 7'200'000'000'000);
  EXPECT_EQ(s.links.technology, "infiniband");
  EXPECT_EQ(s.nic.reorder, "tolerant");  // default for infiniband
  EXPECT_EQ(s.tierSpeed(0), BitRate::gbps(400));
  EXPECT_EQ(s.tierSpeed(1), BitRate::gbps(200));
  EXPECT_EQ(s.tierSpeed(2), BitRate::gbps(800));
  EXPECT_EQ(s.links.latency, Time::ns(500));
  EXPECT_EQ(s.sw.buffer, 64LL << 20);
  EXPECT_DOUBLE_EQ(s.sw.dtAlpha, 2.0);
  EXPECT_TRUE(s.sw.ecn.enabled);
  EXPECT_EQ(s.sw.ecn.kmax, 400'000);
  EXPECT_TRUE(s.sw.pfc.enabled);
  EXPECT_EQ(s.sw.pfc.xon, 48'000);
  EXPECT_EQ(s.routing.algorithm, "ib-sm");
  EXPECT_EQ(s.routing.ibSm.engine, "updn");
  EXPECT_EQ(s.routing.ibSm.lmc, 2);
  EXPECT_EQ(s.routing.hashSeed, 7u);
  EXPECT_EQ(s.nic.localAckTimeout, 14);
  EXPECT_EQ(s.nic.retryCount, 5);
  EXPECT_EQ(s.nic.ackEvery, 4);
  EXPECT_EQ(s.nic.window, 1LL << 20);
  EXPECT_EQ(s.congestionControl.algorithm, "ibcc");
  EXPECT_EQ(s.workload, "w/perm.yaml");
  ASSERT_EQ(s.failures.size(), 2u);
  EXPECT_EQ(s.failures[0].link, (std::vector<std::string>{"leaf-0", "spine-0"}));
  EXPECT_EQ(s.failures[0].line, 17);
  EXPECT_EQ(s.failures[1].node, "spine-1");
  EXPECT_EQ(s.failures[1].at, Time::ms(1));
  const auto j = toJson(s);
  EXPECT_EQ(j["links"]["host_speed_bps"], 400'000'000'000);
  EXPECT_EQ(j["topology"]["kind"], "leaf-spine");
  EXPECT_EQ(j["failures"].size(), 2u);
}

TEST(TopologyLoaderTest, RailOptimizedDefaultsAndRules) {
  const std::string rail =
      "topology: {kind: rail-optimized, rails: 4, rail: {kind: fat-tree, radix: 8, pods: 2}, shared_spines: "
      "true}\n";
  const TopologySpec s = parseTopologyYaml(rail, "r.yaml");
  EXPECT_EQ(s.rail.rails, 4);
  EXPECT_EQ(s.rail.railKind, TopologyKind::FatTree);
  EXPECT_EQ(s.rail.fatTree.pods, 2);
  EXPECT_EQ(s.rail.fatTree.hostsPerEdge, 4);
  EXPECT_TRUE(s.rail.sharedSpines);
  EXPECT_EQ(s.hosts.gpusPerHost, 4);
  EXPECT_EQ(s.hosts.nicsPerHost, 4);
  const auto d = diagnosticsOf(rail + "hosts: {gpus_per_host: 8, nics_per_host: 8}\n");
  EXPECT_TRUE(hasDiag(d, "hosts.nics_per_host", 2, "rails"));
}

TEST(TopologyLoaderTest, NicsMustDivideGpus) {
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "hosts: {gpus_per_host: 8, nics_per_host: 3}\n"),
                      "hosts.nics_per_host", 6, "divide"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "hosts: {gpus_per_host: 2, nics_per_host: 4}\n"),
                      "hosts.nics_per_host", 6));
}

TEST(TopologyLoaderTest, ValueErrorsNameKeyAndLine) {
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "links: {mtu: 10}\n"), "links.mtu", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "switch: {buffer: 4096}\n"), "switch.buffer", 6, "unit"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(kLeafSpine + "switch: {pfc: {xoff: 10KB, xon: 20KB}}\n"), "switch.pfc.xon", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "switch: {ecn: {kmin: 1KB, kmax: 2KB, pmax: 1.5}}\n"),
                      "switch.ecn.pmax", 6));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(kLeafSpine + "routing: {algorithm: magic}\n"), "routing.algorithm", 6, "ecmp"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf("topology: {kind: leaf-spine, leaves: 0, spines: 1, hosts_per_leaf: 1}\n"),
              "topology.leaves", 1, ">= 1"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf("topology: {kind: leaf-spine, leaves: 2}\n"), "topology.spines", 1, "missing"));
  EXPECT_TRUE(hasDiag(diagnosticsOf("topology: {kind: fat-tree, radix: 8, pods: 9}\n"), "topology.pods", 1));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf("topology: {kind: explicit}\n"), "topology.kind", 1, "not supported yet"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "links: {tier_speeds: [100Gbps, 100Gbps]}\n"),
                      "links.tier_speeds", 6, "at most 1"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "failures: [{at: 1us, action: down}]\n"), "failures[0]", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "failures: [{at: 1us, action: sideways, switch: s}]\n"),
                      "failures[0].action", 6));
  EXPECT_TRUE(hasDiag(diagnosticsOf("name: x\n"), "topology", -1, "missing"));
  EXPECT_TRUE(hasDiag(diagnosticsOf("- 1\n- 2\n"), "", 1, "expected a map"));
  EXPECT_TRUE(hasDiag(diagnosticsOf("topology: {kind: fat-tree, radix: 1024, hosts_per_edge: 100000}\n"),
                      "topology", 1, "too large"));
}

// Issue 21: fabrics past 2.6 times the 100K-GPU ones fabricsim is built for took minutes and
// gigabytes before failing; they are refused at the topology key. The largest shipped kinds
// (a k=64 fat-tree, 65,536 hosts) pass; k=128 (524,288 hosts) and a leaf-spine of 45M links
// (3,000 x 3,000 x 5) do not.
TEST(TopologyLoaderTest, FabricsBeyondTheBuiltForSizesAreRefused) {
  EXPECT_NO_THROW(parseTopologyYaml("topology: {kind: fat-tree, radix: 64}\n", "t.yaml"));
  EXPECT_TRUE(hasDiag(diagnosticsOf("topology: {kind: fat-tree, radix: 128}\n"), "topology", 1, "too large"));
  EXPECT_TRUE(hasDiag(diagnosticsOf("topology: {kind: leaf-spine, leaves: 3000, spines: 3000, "
                                    "hosts_per_leaf: 4, links_per_spine: 5}\n"),
                      "topology", 1, "too large"));
}

TEST(TopologyLoaderTest, DuplicateKeysAreErrors) {
  EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + "name: a\nname: b\n"), "name", 7, "duplicate"));
}

TEST(TopologyLoaderTest, ReorderingModesNeedAReorderTolerantNic) {
  // adaptive and spray reorder a flow's packets; RoCE's default NIC is strict (go-back-N).
  // kLeafSpine is 5 lines, so the routing line is 6 and a nic line after it 7.
  for (const char* algo : {"adaptive", "spray"}) {
    SCOPED_TRACE(algo);
    const std::string routing = std::string("routing: {algorithm: ") + algo + "}\n";
    // The default strict NIC: reported at routing.algorithm's line, naming nic.reorder.
    const auto d = diagnosticsOf(kLeafSpine + routing);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_TRUE(hasDiag(d, "nic.reorder", 6, "set nic.reorder: tolerant")) << d[0].message;
    EXPECT_EQ(d[0].file, "dir/t.yaml");
    // An explicit strict NIC: reported at its own line.
    EXPECT_TRUE(hasDiag(diagnosticsOf(kLeafSpine + routing + "nic: {reorder: strict}\n"), "nic.reorder", 7));
    // Through --set, as --routing does it.
    EXPECT_TRUE(
        hasDiag(diagnosticsOf(kLeafSpine, {std::string("routing.algorithm=") + algo}), "nic.reorder", -1));
    // A tolerant NIC is accepted (InfiniBand, whose NICs are tolerant, routes with ib-sm instead).
    EXPECT_EQ(
        parseTopologyYaml(kLeafSpine + routing + "nic: {reorder: tolerant}\n", "t.yaml").routing.algorithm,
        algo);
  }
  // ecmp and flowlet never move a flow inside a flowlet: a strict NIC is fine.
  for (const char* algo : {"ecmp", "flowlet"})
    EXPECT_EQ(parseTopologyYaml(kLeafSpine + "routing: {algorithm: " + algo + "}\nnic: {reorder: strict}\n",
                                "t.yaml")
                  .nic.reorder,
              "strict");
}

TEST(TopologyLoaderTest, SetOverridesApplyBeforeValidation) {
  const TopologySpec s =
      parseTopologyYaml(kLeafSpine, "t.yaml",
                        {"links.host_speed=400Gbps", "switch.pfc.enabled=false", "topology.leaves=8",
                         "failures=[{at: 1ms, action: down, switch: spine-0}]"});
  EXPECT_EQ(s.links.hostSpeed, BitRate::gbps(400));
  EXPECT_FALSE(s.sw.pfc.enabled);
  EXPECT_EQ(s.leafSpine.leaves, 8);
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].node, "spine-0");

  const auto d = diagnosticsOf(kLeafSpine, {"links.host_speed=fast"});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "links.host_speed");
  EXPECT_NE(d[0].message.find("--set"), std::string::npos);
  EXPECT_EQ(d[0].line, 0);
}

TEST(TopologyLoaderTest, MalformedSetIsAnInputErrorKeyedSet) {
  for (const std::string bad :
       {"novalue", "=1", "a..b=1", "links.host_speed=", "a=[1, 2", "topology.kind.x=1"}) {
    YAML::Node root = YAML::Load(kLeafSpine);
    try {
      applySetOverride(root, bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.diagnostics().at(0).key, "--set") << bad;
    }
  }
  YAML::Node empty;
  applySetOverride(empty, "a.b.c=3");
  EXPECT_EQ(empty["a"]["b"]["c"].as<int>(), 3);
}

TEST(TopologyLoaderTest, BadFilesReportFileLineAndKey) {
  EXPECT_TRUE(hasDiag(fileDiagnostics("unknown-key.yaml"), "topology.spine", 6, "unknown key"));
  EXPECT_TRUE(hasDiag(fileDiagnostics("odd-radix.yaml"), "topology.radix", 5, "even"));
  EXPECT_TRUE(hasDiag(fileDiagnostics("missing-unit.yaml"), "links.host_speed", 9, "unit"));
  EXPECT_TRUE(hasDiag(fileDiagnostics("negative-speed.yaml"), "links.fabric_speed", 9, "positive"));
  const auto syntax = fileDiagnostics("bad-syntax.yaml");
  ASSERT_EQ(syntax.size(), 1u);
  EXPECT_GE(syntax[0].line, 5);
  EXPECT_NE(syntax[0].message.find("YAML"), std::string::npos);
}

TEST(TopologyLoaderTest, EveryErrorInAFileIsReported) {
  const auto d = fileDiagnostics("several-errors.yaml");
  EXPECT_TRUE(hasDiag(d, "topology.radix", 5));
  EXPECT_TRUE(hasDiag(d, "links.latency", 7));
  EXPECT_TRUE(hasDiag(d, "links.technology", 8, "roce"));
  EXPECT_TRUE(hasDiag(d, "switch.ecn.kmin", 10, "kmin <= kmax"));
  EXPECT_TRUE(hasDiag(d, "switch.bogus", 11, "unknown key"));
  EXPECT_EQ(d.size(), 5u);
}

TEST(TopologyLoaderTest, MissingFileIsAnInputError) {
  EXPECT_THROW(loadTopologyFile("/nonexistent/topology.yaml"), InputError);
}

}  // namespace
}  // namespace fabricsim
