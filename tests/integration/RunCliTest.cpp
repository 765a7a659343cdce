// `fabricsim run` end to end: reproducibility of the results JSON, the keys of DESIGN.md
// section 7, byte conservation, and exit status 2 with a precise message on bad input.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using fabricsim::testsupport::CliResult;

CliResult runCli(const std::string& args) {
  return fabricsim::testsupport::runFabricsim(args, "2>&1");
}

const std::string kData = std::string(FABRICSIM_SOURCE_DIR) + "/tests/data/run";
const std::string kTopo = kData + "/leafspine-4x2.yaml";
const std::string kWorkload = kData + "/permutation-256k.yaml";

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

using fabricsim::testsupport::TempDir;

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

/// Runs the small scenario with `seed`, returns the parsed results.
nlohmann::json runScenario(const TempDir& dir, const std::string& name, uint64_t seed) {
  const std::string out = dir.file(name);
  const CliResult r = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --seed " +
                             std::to_string(seed) + " --out " + quoted(out) + " --quiet");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(out)) << r.out;
  if (r.status != 0 || !std::filesystem::exists(out)) return {};
  return readJson(out);
}

/// The document without the fields that depend on the host's clock and memory.
nlohmann::json withoutWallClock(nlohmann::json j) {
  auto& s = j["summary"];
  for (const char* k : {"wall_time_s", "setup_time_s", "peak_rss_bytes"}) {
    EXPECT_TRUE(s.contains(k)) << k;
    s.erase(k);
  }
  // The memory limit the run was held to is the machine's (or --max-memory).
  EXPECT_TRUE(s["memory_estimate"].contains("limit_bytes"));
  s["memory_estimate"].erase("limit_bytes");
  return j;
}

}  // namespace

TEST(RunCli, SameSeedGivesIdenticalResults) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const auto a = runScenario(dir, "a.json", 5);
  const auto b = runScenario(dir, "b.json", 5);
  const auto c = runScenario(dir, "c.json", 6);
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  ASSERT_FALSE(c.is_null());
  EXPECT_EQ(withoutWallClock(a).dump(), withoutWallClock(b).dump());
  // A different seed draws another permutation and other hash seeds: something changes
  // beyond the recorded seed itself.
  auto a2 = withoutWallClock(a), c2 = withoutWallClock(c);
  EXPECT_EQ(a2["seed"], 5);
  EXPECT_EQ(c2["seed"], 6);
  a2.erase("seed");
  c2.erase("seed");
  EXPECT_NE(a2.dump(), c2.dump());
  EXPECT_NE(a["flows"].dump() + a["network"].dump() + a["summary"]["events"].dump(),
            c["flows"].dump() + c["network"].dump() + c["summary"]["events"].dump());
}

TEST(RunCli, ResultsHaveTheContractKeys) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const auto j = runScenario(dir, "r.json", 1);
  ASSERT_TRUE(j.is_object());
  for (const char* k : {"version", "git", "seed", "spec", "backend", "summary", "jobs", "flows", "network"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["backend"], "packet");
  EXPECT_EQ(j["seed"], 1);
  EXPECT_TRUE(j["version"].is_string());
  EXPECT_TRUE(j["git"].is_string());
  EXPECT_TRUE(j["spec"].is_object());

  const auto& s = j["summary"];
  for (const char* k : {"sim_time_s", "wall_time_s", "events", "packets", "peak_rss_bytes"}) {
    ASSERT_TRUE(s.contains(k)) << "summary." << k;
    EXPECT_TRUE(s[k].is_number()) << "summary." << k;
  }
  EXPECT_GT(s["sim_time_s"].get<double>(), 0);
  EXPECT_GT(s["events"].get<double>(), 0);
  EXPECT_GT(s["packets"].get<double>(), 0);

  ASSERT_TRUE(j["jobs"].is_array());
  ASSERT_EQ(j["jobs"].size(), 1u);
  const auto& job = j["jobs"][0];
  for (const char* k : {"name", "jct_s", "iterations", "compute_s", "exposed_comm_s", "collectives"})
    EXPECT_TRUE(job.contains(k)) << "jobs[0]." << k;
  EXPECT_TRUE(job["iterations"].is_array());
  EXPECT_TRUE(job["collectives"].is_array());
  EXPECT_EQ(job["name"], "permutation-256k");
  EXPECT_GT(job["jct_s"].get<double>(), 0);
  // A pattern job does no compute: all of its time is exposed communication.
  EXPECT_EQ(job["compute_s"].get<double>(), 0.0);
  EXPECT_EQ(job["exposed_comm_s"].get<double>(), job["jct_s"].get<double>());

  const auto& f = j["flows"];
  ASSERT_TRUE(f.contains("count"));
  EXPECT_EQ(f["count"], 16);  // 16 GPUs, one message each
  for (const char* k : {"p50", "p90", "p99", "max"}) {
    ASSERT_TRUE(f["fct_us"].contains(k)) << "flows.fct_us." << k;
    EXPECT_GT(f["fct_us"][k].get<double>(), 0) << k;
  }
  EXPECT_LE(f["fct_us"]["p50"].get<double>(), f["fct_us"]["p90"].get<double>());
  EXPECT_LE(f["fct_us"]["p90"].get<double>(), f["fct_us"]["p99"].get<double>());
  EXPECT_LE(f["fct_us"]["p99"].get<double>(), f["fct_us"]["max"].get<double>());
  for (const char* k : {"p50", "p99"}) {
    ASSERT_TRUE(f["slowdown"].contains(k)) << "flows.slowdown." << k;
    EXPECT_GE(f["slowdown"][k].get<double>(), 1.0) << k;
  }

  const auto& n = j["network"];
  for (const char* k :
       {"bytes_sent", "bytes_delivered", "bytes_dropped", "packets_dropped", "retransmitted_bytes",
        "ecn_marks", "cnps", "pfc_pause_frames", "pfc_paused_us", "max_queue_bytes", "link_util", "per_tier"})
    EXPECT_TRUE(n.contains(k)) << "network." << k;
  ASSERT_TRUE(n["link_util"].contains("mean"));
  ASSERT_TRUE(n["link_util"].contains("max"));
  EXPECT_TRUE(n["per_tier"].is_object());
  EXPECT_FALSE(n["per_tier"].empty());
  for (const auto& [tier, t] : n["per_tier"].items())
    for (const char* k : {"links", "util_mean", "util_max", "max_queue_bytes", "packets_dropped",
                          "pfc_paused_us", "ecn_marks", "wire_bytes"})
      EXPECT_TRUE(t.contains(k)) << "network.per_tier." << tier << "." << k;
  EXPECT_GE(n["bytes_sent"].get<int64_t>(), 16 * 256 * 1024);  // payload, retransmissions included
  EXPECT_EQ(n["bytes_sent"].get<int64_t>(),
            n["bytes_delivered"].get<int64_t>() + n["bytes_dropped"].get<int64_t>());
  // The packet backend models these (it lists nothing under `unmodelled`): with no congestion
  // control nothing is marked or notified, and 256 KiB flows never fill a queue to PFC's XOFF.
  EXPECT_TRUE(j["unmodelled"].is_array() && j["unmodelled"].empty()) << j["unmodelled"].dump();
  EXPECT_EQ(n["ecn_marks"], 0);
  EXPECT_EQ(n["cnps"], 0);
  EXPECT_EQ(n["pfc_pause_frames"], 0);
  const double umean = n["link_util"]["mean"].get<double>(), umax = n["link_util"]["max"].get<double>();
  EXPECT_GE(umean, 0.0);
  EXPECT_LE(umean, umax);
  EXPECT_LE(umax, 1.0 + 1e-9);
}

TEST(RunCli, UnknownBackendExitsTwo) {
  const CliResult r =
      runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --backend fluid --quiet");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--backend"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fluid"), std::string::npos) << r.out;
}

TEST(RunCli, WorkloadWithUnknownKeyExitsTwoNamingFileLineAndKey) {
  const std::string bad = kData + "/unknown-key.yaml";
  const CliResult r = runCli("run " + quoted(kTopo) + " --workload " + quoted(bad) + " --quiet");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(bad + ":5:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mesage_count"), std::string::npos) << r.out;
}

// A training job larger than the fabric names its parallel sizes, their product and the fabric's
// GPUs, at the line of its `parallelism` key (before anything is simulated).
TEST(RunCli, TrainingJobLargerThanTheFabricNamesItsSizes) {
  TempDir dir;
  const std::string w = dir.path() + "/big.yaml";
  std::ofstream(w) << "kind: training\nmodel: {layers: 4, hidden: 256, heads: 4, seq_len: 128}\n"
                      "parallelism: {tp: 2, cp: 2, dp: 8, pp: 2}\n";
  const CliResult r = runCli("run " + quoted(kTopo) + " --workload " + quoted(w) + " --quiet");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(w + ":3:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tp 2 x cp 2 x ep 1 x dp 8 x pp 2 = 64 GPUs, the fabric has"), std::string::npos) << r.out;
}

// Two settings are valid for the loader but cannot be honoured once the packet fabric is built:
// `run` exits 2 pointing at the key, in the file or in the --set that gave it. (`topo` builds no
// fabric, so it does not see them.)
TEST(RunCli, SettingsTheFabricCannotHonourExitTwoPointingAtTheKey) {
  const std::string bad = std::string(FABRICSIM_SOURCE_DIR) + "/tests/data/bad/";
  auto run = [&](const std::string& topo, const std::string& sets) {
    return runCli("run " + quoted(topo) + " --workload " + quoted(kWorkload) + sets + " --quiet");
  };
  // A pause too short for its refresh: at least 2 x (4,178 + 84) B / 64 B = 134 quanta (rounded up).
  const std::string quanta = bad + "pfc-quanta-too-small.yaml";
  const CliResult q = run(quanta, "");
  EXPECT_EQ(q.status, 2) << q.out;
  EXPECT_NE(q.out.find(quanta + ":14:13: 'switch.pfc.quanta':"), std::string::npos) << q.out;
  EXPECT_NE(q.out.find("at least 134 quanta"), std::string::npos) << q.out;
  // Seven lossless classes: 10 ports x (4,178 + 7 x 38,122) B = 2.58 MiB carved out of 1 MiB.
  const std::string buffer = bad + "pfc-buffer-too-small.yaml";
  const CliResult b = run(buffer, "");
  EXPECT_EQ(b.status, 2) << b.out;
  EXPECT_NE(b.out.find(buffer + ":10:11: 'switch.buffer':"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("2.58 MiB"), std::string::npos) << b.out;
  // The same keys given by --set: the error names the --set.
  const CliResult qs = run(kTopo, " --set 'switch.pfc={enabled: true, xoff: 60KB, xon: 48KB, quanta: 50}'");
  EXPECT_EQ(qs.status, 2) << qs.out;
  EXPECT_NE(qs.out.find("'switch.pfc.quanta':"), std::string::npos) << qs.out;
  EXPECT_NE(qs.out.find("--set 'switch.pfc={enabled: true"), std::string::npos) << qs.out;
  const CliResult bs = run(buffer, " --set switch.buffer=2MiB");  // still below 2.58 MiB
  EXPECT_EQ(bs.status, 2) << bs.out;
  EXPECT_NE(bs.out.find("'switch.buffer':"), std::string::npos) << bs.out;
  EXPECT_NE(bs.out.find("--set 'switch.buffer=2MiB'"), std::string::npos) << bs.out;
}

TEST(RunCli, UnknownFailureNodesAndUnknownSchemesExitTwo) {
  // An unknown node name in a failure is refused, with BGP on.
  const CliResult r3 = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) +
                              " --set routing.control_plane=bgp --set 'failures=[{at: 10us, action: down, "
                              "switch: spine-99}]' --quiet");
  EXPECT_EQ(r3.status, 2) << r3.out;
  EXPECT_NE(r3.out.find("spine-99"), std::string::npos) << r3.out;
  // An unknown path-selection scheme through --routing is refused with the choices.
  const CliResult r2 =
      runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --routing magic --quiet");
  EXPECT_EQ(r2.status, 2) << r2.out;
  EXPECT_NE(r2.out.find("routing.algorithm"), std::string::npos) << r2.out;
  // Adaptive routing and spraying with RoCE's default in-order NIC are refused, naming nic.reorder.
  const CliResult r4 =
      runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --routing spray --quiet");
  EXPECT_EQ(r4.status, 2) << r4.out;
  EXPECT_NE(r4.out.find("'nic.reorder'"), std::string::npos) << r4.out;
  EXPECT_NE(r4.out.find("set nic.reorder: tolerant"), std::string::npos) << r4.out;
  // The flow backend cannot keep an adaptive flow on its hashed member (adaptive_bias).
  const CliResult r5 =
      runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) +
             " --routing adaptive --set nic.reorder=tolerant --set routing.adaptive_bias=10KB"
             " --backend flow --quiet");
  EXPECT_EQ(r5.status, 2) << r5.out;
  EXPECT_NE(r5.out.find("'routing.adaptive_bias'"), std::string::npos) << r5.out;
  EXPECT_NE(r5.out.find("flow and hybrid backends"), std::string::npos) << r5.out;
  // Supported schemes run.
  for (const char* scheme : {"flowlet", "adaptive", "spray"}) {
    const CliResult ok = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --routing " +
                                scheme + " --set nic.reorder=tolerant --quiet");
    EXPECT_EQ(ok.status, 0) << scheme << ": " << ok.out;
  }
}

TEST(RunCli, AConnectionThatExhaustsItsRetriesFailsTheRunWithCompleteResults) {
  // Static tables keep hashing connections into a spine link that is down from the start: their
  // data or their ACKs die there, no ACK ever arrives, and each such connection times out after
  // 10, 20 and 40 us (backoff 2) and fails on the third timeout, 70 us after its first packet
  // left at time 0. The first failure ends the run: exit status 3, a message naming the
  // connection, and a complete results file that says the run failed.
  TempDir dir;
  const std::string out = dir.file("failed.json");
  const CliResult r =
      runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) +
             " --set 'failures=[{at: 0us, action: down, link: [leaf-0, spine-0]}]'"
             " --set 'nic={retransmit_timeout: 10us, rto_backoff: 2, retry_limit: 2}' --out " +
             quoted(out) + " --quiet");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("error: connection host-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("retry counter exceeded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 retries"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(out), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(out));
  size_t files = 0;  // the results alone: no temporary file left
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
  const nlohmann::json j = readJson(out);  // parses: the file is whole
  for (const char* k : {"version", "git", "seed", "spec", "backend", "summary", "jobs", "flows", "network",
                        "status", "failures"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["status"], "failed");
  ASSERT_EQ(j["failures"].size(), 1u);
  const auto& f = j["failures"][0];
  EXPECT_EQ(f["kind"], "retry_exceeded");
  EXPECT_EQ(f["retries"], 2);
  // 70 us; 0.5 ps of slack covers the conversion of integer picoseconds to seconds in JSON.
  EXPECT_NEAR(f["at_s"].get<double>(), 70e-6, 0.5e-12);
  EXPECT_EQ(f["source"].get<std::string>().rfind("host-", 0), 0u);
  EXPECT_EQ(f["destination"].get<std::string>().rfind("host-", 0), 0u);
  EXPECT_NE(r.out.find(f["source"].get<std::string>() + " -> " + f["destination"].get<std::string>()),
            std::string::npos)
      << r.out;
  EXPECT_EQ(j["flows"]["failed_transfers"], f["transfers_failed"]);
  EXPECT_GE(j["flows"]["undelivered_transfers"].get<int>(), j["flows"]["failed_transfers"].get<int>());
  ASSERT_EQ(j["jobs"].size(), 1u);
  EXPECT_EQ(j["jobs"][0]["finished"], false);
  EXPECT_TRUE(j["jobs"][0]["jct_s"].is_null());
  EXPECT_NEAR(j["summary"]["sim_clock_end_s"].get<double>(), 70e-6, 0.5e-12);  // the run ended there
  // A link carries at most its rate: utilisation is a fraction, also when retransmissions that
  // never arrive follow the last delivery (measured over the last delivery alone, it was 187%
  // mean with every spine down). Activity ends no later than the run.
  EXPECT_LE(j["network"]["link_util"]["max"].get<double>(), 1.0);
  EXPECT_LE(j["summary"]["sim_time_s"].get<double>(), j["summary"]["sim_clock_end_s"].get<double>());
  // Without the failure the same run completes and says so.
  const std::string ok = dir.file("ok.json");
  const CliResult good = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --out " +
                                quoted(ok) + " --quiet");
  EXPECT_EQ(good.status, 0) << good.out;
  const nlohmann::json g = readJson(ok);
  EXPECT_EQ(g["status"], "completed");
  EXPECT_TRUE(g["failures"].empty());
  EXPECT_EQ(g["flows"]["failed_transfers"], 0);
  EXPECT_EQ(g["jobs"][0]["finished"], true);
}

TEST(RunCli, MissingTopologyFileExitsTwo) {
  TempDir dir;
  const std::string missing = dir.file("no-such-topology.yaml");
  const CliResult r = runCli("run " + quoted(missing) + " --workload " + quoted(kWorkload) + " --quiet");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(missing), std::string::npos) << r.out;
}

TEST(RunCli, SetWithoutEqualsExitsTwo) {
  const CliResult r = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) +
                             " --set routing.algorithm --quiet");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(kTopo), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--set"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("routing.algorithm"), std::string::npos) << r.out;
}

TEST(RunCli, MissingWorkloadFileAndBadOptionsExitTwo) {
  TempDir dir;
  const std::string missing = dir.file("no-such-workload.yaml");
  const CliResult r = runCli("run " + quoted(kTopo) + " --workload " + quoted(missing) + " --quiet");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(missing), std::string::npos) << r.out;
  // No workload at all: the topology names no default.
  const CliResult r2 = runCli("run " + quoted(kTopo) + " --quiet");
  EXPECT_EQ(r2.status, 2) << r2.out;
  EXPECT_NE(r2.out.find("workload"), std::string::npos) << r2.out;
  EXPECT_EQ(runCli("run " + quoted(kTopo) + " --frobnicate").status, 2);
  EXPECT_EQ(runCli("run").status, 2);
}

// Outputs that cannot be written are found before the simulation, not after it: --out in a
// missing folder or naming a folder, --timeline in a missing folder. Exit 2, the path and the
// option named, nothing simulated (no summary) and nothing left behind.
TEST(RunCli, AnOutputThatCannotBeWrittenExitsTwoBeforeTheRun) {
  TempDir dir;
  const std::string base = "run " + quoted(kTopo) + " --workload " + quoted(kWorkload);
  for (const auto& [option, path] :
       std::vector<std::pair<std::string, std::string>>{{"--out", dir.file("missing/r.json")},
                                                        {"--out", dir.path()},
                                                        {"--timeline", dir.file("missing/t.json")}}) {
    SCOPED_TRACE(option + " " + path);
    const CliResult r = runCli(base + " " + option + " " + quoted(path));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find(path), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(option), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("simulated"), std::string::npos) << "the run went ahead:\n" << r.out;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// Limits before allocation (issue 21): a run whose estimated memory exceeds --max-memory is refused
// before anything is built, naming the estimate, the limit and what it counted; no output is left.
TEST(RunCli, ARunAboveTheMemoryLimitIsRefusedBeforeItIsBuilt) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string out = dir.file("r.json");
  // The 4x2 leaf-spine with 16 GPUs: its estimate is the process's base, over 10 MiB (the binary
  // and its libraries alone take that), so a 1 MiB limit refuses it.
  CliResult r = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) +
                       " --max-memory 1MiB --out " + quoted(out) + " --quiet");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("'--max-memory'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the run needs about"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("more than the limit of 1.00 MiB set by --max-memory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16 ranks in 1 job"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));

  for (const char* bad : {"0B", "lots", "-5GiB"}) {
    r = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --max-memory " + quoted(bad) +
               " --quiet");
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("--max-memory"), std::string::npos) << r.out;
  }

  // Under the limit it runs, and the results carry the estimate and the limit.
  r = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --max-memory 64GiB --out " +
             quoted(out) + " --quiet");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto m = readJson(out)["summary"]["memory_estimate"];
  EXPECT_EQ(m["limit_bytes"].get<uint64_t>(), uint64_t{64} << 30);
  EXPECT_EQ(m["ranks"].get<int64_t>(), 16);
  EXPECT_EQ(m["links"].get<int64_t>(), 16 + 4 * 2);  // a NIC cable per host, leaves x spines
  EXPECT_GT(m["bytes"].get<double>(), 0);
}

// --check reads and builds everything, then stops: no simulation, no output written.
TEST(RunCli, CheckBuildsTheRunAndStopsBeforeSimulating) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string out = dir.file("r.json");
  CliResult r =
      runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --check --out " + quoted(out));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("ok: run-leafspine-4x2 (16 GPUs, 6 switches, 24 links), 1 job on the packet backend; "
                       "estimated peak memory "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("JCT"), std::string::npos) << "no simulation: " << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  // What the run itself would refuse, --check refuses too.
  r = runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --check --max-memory 1MiB");
  EXPECT_EQ(r.status, 2) << r.out;
}

TEST(RunCli, HelpExitsZero) {
  const CliResult r = runCli("run --help");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--workload"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--seed"), std::string::npos) << r.out;
}

// Issue 17's bad routing input: each exits 2 with file:line:column, the key and what was
// expected. The base file has 14 lines; the routing section is line 15, failures from line 16.
TEST(RunCli, BadRoutingAndFailureInputExitsTwoWithFileLineAndKey) {
  const std::string base =
      "name: bad-routing\n"                                                      // 1
      "topology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"  // 2
      "hosts: {gpus_per_host: 1}\n"                                              // 3
      "links:\n"                                                                 // 4
      "  technology: TECH\n"                                                     // 5
      "  host_speed: 100Gbps\n"                                                  // 6
      "  fabric_speed: 100Gbps\n"                                                // 7
      "  latency: 1us\n"                                                         // 8
      "  mtu: 4096\n"                                                            // 9
      "switch:\n"                                                                // 10
      "  buffer: 32MiB\n"                                                        // 11
      "congestion_control: {algorithm: none}\n"                                  // 12
      "nic: {reorder: tolerant}\n"                                               // 13
      "# the case\n";                                                            // 14
  struct Case {
    const char* tech;
    const char* lines;  // from line 15
    const char* where;  // ":line:" expected in the message
    const char* key;
    const char* expected;
  };
  const Case cases[] = {
      {"roce", "routing: {hash_fields: [src_ip, vlan]}\n", ":15:", "'routing.hash_fields[1]'",
       "unknown header field 'vlan'"},
      {"roce", "routing: {seeds: random}\n", ":15:", "'routing.seeds'", "per_switch"},
      {"infiniband", "routing: {algorithm: ib-sm, ib_sm: {lmc: 8}}\n", ":15:", "'routing.ib_sm.lmc'", "7"},
      {"infiniband", "routing: {algorithm: ib-sm, failover_delay: 5us}\n", ":15:", "'routing.failover_delay'",
       "InfiniBand"},
      {"roce", "routing: {failover_delay: -1us}\n", ":15:", "'routing.failover_delay'", "non-negative"},
      {"roce",
       "routing: {algorithm: ecmp}\nfailures:\n  - {at: 10us, action: down, link: [leaf-0, spine-9]}\n",
       ":17:", "'failures[0]'", "no node named 'spine-9'"},
      {"roce",
       "routing: {algorithm: ecmp}\nfailures:\n  - {at: 10us, action: down, link: [leaf-0, leaf-1]}\n",
       ":17:", "'failures[0]'", "share no link"},
      {"roce", "routing: {algorithm: ecmp}\nfailures:\n  - {at: -5us, action: down, switch: spine-0}\n",
       ":17:", "'failures[0].at'", "non-negative"},
  };
  const TempDir dir;
  for (const Case& c : cases) {
    std::string text = base;
    text.replace(text.find("TECH"), 4, c.tech);
    const std::string path = dir.write("bad.yaml", text + c.lines);
    const CliResult r = runCli("run " + quoted(path) + " --workload " + quoted(kWorkload) + " --quiet");
    EXPECT_EQ(r.status, 2) << c.lines << r.out;
    EXPECT_NE(r.out.find(path + c.where), std::string::npos) << c.lines << r.out;
    EXPECT_NE(r.out.find(c.key), std::string::npos) << c.lines << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << c.lines << r.out;
  }
}

// FCT statistics apart for network and NVLink transfers (issue 18): an all-to-all of 1 MiB on 2
// hosts x 2 GPUs sends 4 transfers over NVLink (one per GPU, inside its host) and 8 over the
// network. Each GPU's NVLink port carries one transfer out and one in, so every NVLink transfer
// takes 1 MiB / 100 GB/s + 1 us = 11.49 us (closed form); the network ones share 100 Gb/s NICs
// and take far longer. The NVLink figures must be exactly that, uncontaminated by the network's.
TEST(RunCli, FctStatisticsAreSplitBetweenNetworkAndNvlink) {
  const TempDir dir;
  const std::string topo =
      dir.write("t.yaml",
                "name: split\n"
                "topology: {kind: leaf-spine, leaves: 1, spines: 1, hosts_per_leaf: 2}\n"
                "hosts: {gpus_per_host: 2, nics_per_host: 1, nvlink: {bandwidth: 100GBps, "
                "latency: 1us}}\n"
                "links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps}\n"
                "switch: {buffer: 32MiB}\n"
                "congestion_control: {algorithm: none}\n");
  const std::string work = dir.write("w.yaml", "kind: pattern\npattern: all-to-all\nmessage_size: 1MiB\n");
  for (const char* backend : {"packet", "flow"}) {
    const std::string out = dir.file(std::string("r-") + backend + ".json");
    const CliResult r = runCli("run " + quoted(topo) + " --workload " + quoted(work) + " --backend " +
                               backend + " --quiet --out " + quoted(out));
    ASSERT_EQ(r.status, 0) << r.out;
    const nlohmann::json j = readJson(out);
    const auto& f = j["flows"];
    EXPECT_EQ(f["nvlink"]["count"].get<int>(), 4) << backend;
    EXPECT_EQ(f["network"]["count"].get<int>(), 8) << backend;
    EXPECT_EQ(f["intra_host"].get<int>(), 4) << backend;
    const double nv = 1048576.0 / 100e9 * 1e6 + 1.0;
    EXPECT_NEAR(f["nvlink"]["fct_us"]["p50"].get<double>(), nv, 0.01 * nv) << backend;
    EXPECT_NEAR(f["nvlink"]["fct_us"]["max"].get<double>(), nv, 0.01 * nv) << backend;
    // One NIC of 100 Gb/s carries 1 MiB at no less than 83.9 us.
    EXPECT_GT(f["network"]["fct_us"]["p50"].get<double>(), 83.0) << backend;
  }
  // A workload without NVLink transfers has no NVLink figures: null, not 0.
  const std::string out = dir.file("r-net.json");
  const CliResult r =
      runCli("run " + quoted(kTopo) + " --workload " + quoted(kWorkload) + " --quiet --out " + quoted(out));
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = readJson(out);
  EXPECT_EQ(j["flows"]["nvlink"]["count"].get<int>(), 0);
  EXPECT_TRUE(j["flows"]["nvlink"]["fct_us"].is_null());
}
