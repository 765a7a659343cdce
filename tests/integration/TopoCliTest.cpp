// `fabricsim topo` end to end: exit status and diagnostics on bad input, JSON on good input.
#include <gtest/gtest.h>

#include "tests/support/CliRunner.h"
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace {

using fabricsim::testsupport::CliResult;

/// Runs `fabricsim <args>`; captures stdout, or stderr when `stderrOnly`.
CliResult runCli(const std::string& args, bool stderrOnly) {
  return fabricsim::testsupport::runFabricsim(args, stderrOnly ? "2>&1 >/dev/null" : "2>/dev/null");
}


const std::string kSrc = FABRICSIM_SOURCE_DIR;

TEST(TopoCliTest, BadFileExitsTwoNamingFileLineAndKey) {
  const std::string file = kSrc + "/tests/data/bad/odd-radix.yaml";
  const CliResult r = runCli("topo '" + file + "'", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(file + ":5:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("topology.radix"), std::string::npos) << r.out;
}

TEST(TopoCliTest, SeveralErrorsAreAllPrinted) {
  const std::string file = kSrc + "/tests/data/bad/several-errors.yaml";
  const CliResult r = runCli("topo '" + file + "'", true);
  EXPECT_EQ(r.status, 2);
  for (const char* key : {"topology.radix", "links.latency", "links.technology", "switch.ecn.kmin", "switch.bogus"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
}

TEST(TopoCliTest, BadNicTimersExitTwoNamingFileLineAndKey) {
  // Every timer problem of each file, at its own line: a negative RTO, a retry limit out of
  // range, an exponent past 31, a retry count past IBTA's 3 bits, and keys of the other technology.
  const std::string roce = kSrc + "/tests/data/bad/nic-timers-roce.yaml";
  const CliResult r = runCli("topo '" + roce + "'", true);
  EXPECT_EQ(r.status, 2);
  for (const char* at : {":6:", ":7:", ":8:"})
    EXPECT_NE(r.out.find(roce + at), std::string::npos) << at << r.out;
  for (const char* key : {"nic.retransmit_timeout", "nic.retry_limit", "nic.local_ack_timeout"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
  const std::string ib = kSrc + "/tests/data/bad/nic-timers-ib.yaml";
  const CliResult i = runCli("topo '" + ib + "'", true);
  EXPECT_EQ(i.status, 2);
  for (const char* at : {":7:", ":8:", ":9:"})
    EXPECT_NE(i.out.find(ib + at), std::string::npos) << at << i.out;
  for (const char* text : {"<= 31", "<= 7", "InfiniBand NICs time out after the local ACK timeout"})
    EXPECT_NE(i.out.find(text), std::string::npos) << text << "\n" << i.out;
}

/// The output line that starts at `file:line:` names `key` (as 'key':).
bool lineNamesKey(const std::string& out, const std::string& file, int line, const std::string& key) {
  const size_t at = out.find(file + ":" + std::to_string(line) + ":");
  if (at == std::string::npos) return false;
  const std::string rest = out.substr(at, out.find('\n', at) - at);
  return rest.find("'" + key + "':") != std::string::npos;
}

TEST(TopoCliTest, BadLosslessSettingsExitTwoNamingEachLineAndKey) {
  // Issue 16: alpha <= 0 (negative and zero), XON above XOFF, a negative headroom, quanta 0 and an
  // unknown DCQCN variant, each at its own line of one file; all are reported.
  const std::string file = kSrc + "/tests/data/bad/lossless-settings.yaml";
  const CliResult r = runCli("topo '" + file + "'", true);
  EXPECT_EQ(r.status, 2);
  const std::pair<int, const char*> expected[] = {
      {8, "switch.dt_alpha"},    {11, "switch.pfc.dynamic_alpha"},
      {13, "switch.pfc.xon"},    {14, "switch.pfc.headroom"},
      {15, "switch.pfc.quanta"}, {20, "congestion_control.dcqcn.variant"}};
  for (const auto& [line, key] : expected)
    EXPECT_TRUE(lineNamesKey(r.out, file, line, key)) << line << " " << key << "\n" << r.out;
}

TEST(TopoCliTest, UnknownOptionAndMissingFileExitTwo) {
  EXPECT_EQ(runCli("topo --frobnicate " + kSrc + "/topologies/leafspine-16.yaml", true).status, 2);
  EXPECT_EQ(runCli("topo /nonexistent.yaml", true).status, 2);
  EXPECT_EQ(runCli("topo " + kSrc + "/topologies/leafspine-16.yaml --set novalue", true).status, 2);
}

TEST(TopoCliTest, JsonSummaryOfAFatTree) {
  const CliResult r = runCli("topo " + kSrc + "/topologies/fat-tree-k8-100g.yaml --json", false);
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hosts"], 128);
  EXPECT_EQ(j["switches"]["total"], 80);
  EXPECT_EQ(j["links"]["total"], 384);
  EXPECT_EQ(j["diameter_links"], 6);
  EXPECT_EQ(j["kind"], "fat-tree");
}

TEST(TopoCliTest, SetOverrideAndTextSummary) {
  const CliResult r = runCli("topo " + kSrc + "/topologies/leafspine-64.yaml --set topology.leaves=4", false);
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("32 (32 GPUs"), std::string::npos) << r.out;
  const CliResult bad = runCli("topo " + kSrc + "/topologies/leafspine-64.yaml --set links.host_speed=100", true);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--set"), std::string::npos) << bad.out;
  EXPECT_EQ(runCli("topo --help", false).status, 0);
}

}  // namespace
