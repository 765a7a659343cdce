// `fabricsim sweep` end to end: a 2x2 sweep run with --jobs 2 (point directories, results,
// summary.csv columns), --resume, a failing point, bad input, mpirun -np 2, and
// scripts/plot_sweep.py on the result.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/CliRunner.h"
#include "tests/support/ProcessState.h"
#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

namespace fs = std::filesystem;
using testsupport::alive;
using testsupport::childrenOf;
using testsupport::TempDir;

const std::string kSrc = FABRICSIM_SOURCE_DIR;

std::string q(const std::string& s) {
  return "'" + s + "'";
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json readJson(const std::string& path) {
  return nlohmann::json::parse(readText(path));
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

/// A 2x2 sweep (routing x cc) of a tiny all_reduce on leafspine-16; `extraAxis` is appended.
std::string writeSweep(const TempDir& dir, const std::string& extraAxis = "") {
  return dir.write(
      "sweep.yaml",
      "name: tiny\n"
      "topology: " +
          kSrc +
          "/topologies/leafspine-16.yaml\n"
          "workloads: [" +
          kSrc +
          "/workloads/nccl-allreduce.yaml]\n"
          "set: ['switch.ecn={kmin: 100KiB, kmax: 400KiB, pmax: 0.2}', nic.reorder=tolerant]\n"
          "workload_set: ['sizes={min: 64KiB, max: 128KiB, factor: 2}', iterations=1, warmup=0]\n"
          "axes:\n"
          "  - name: routing\n"
          "    values: [ecmp, adaptive]\n" +
          extraAxis);
}

const std::string kCcAxis = "  - name: cc\n    values: [none, dcqcn]\n";

testsupport::CliResult sweep(const std::string& args) {
  return testsupport::runFabricsim("sweep " + args, "2>&1");
}

TEST(SweepCliTest, RunsATwoByTwoSweepWithTwoJobs) {
  TempDir dir;
  const std::string file = writeSweep(dir, kCcAxis);
  const std::string out = dir.file("out");
  const auto r = sweep(q(file) + " --out " + q(out) + " --jobs 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("[4/4] p000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": done in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(JCT "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ETA "), std::string::npos) << r.out;
  for (int i = 0; i < 4; ++i) {
    const std::string p = out + "/points/p000" + std::to_string(i);
    ASSERT_TRUE(fs::exists(p + "/results.json")) << p;
    EXPECT_TRUE(fs::exists(p + "/log.txt")) << p;
    EXPECT_FALSE(fs::exists(p + "/failed.json")) << p;
    const auto pj = readJson(p + "/point.json");
    EXPECT_EQ(pj["id"], "p000" + std::to_string(i));
    EXPECT_EQ(pj["mpi_rank"], 0);
    EXPECT_EQ(pj["argv"][1], "run");
  }
  const auto p2 = readJson(out + "/points/p0002/point.json");
  EXPECT_EQ(p2["axes"]["routing"], "adaptive");
  EXPECT_EQ(p2["axes"]["cc"], "none");
  const auto res2 = readJson(out + "/points/p0002/results.json");
  EXPECT_EQ(res2["routing"]["algorithm"], "adaptive");
  EXPECT_EQ(res2["congestion_control"], "none");
  EXPECT_EQ(readJson(out + "/sweep.json")["points"].size(), 4u);

  const auto rows = lines(readText(out + "/summary.csv"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(
      rows[0],
      "point,status,routing,cc,backend,congestion_control,routing_result,gpus,jct_s,iteration_s,compute_s,"
      "exposed_comm_s,busbw_GBps,sim_time_s,wall_time_s,peak_rss_bytes,events,bytes_dropped,ecn_marks,"
      "pfc_pause_frames,max_queue_bytes");
  EXPECT_EQ(rows[1].rfind("p0000,ok,ecmp,none,packet,none,ecmp,16,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2].rfind("p0001,ok,ecmp,dcqcn,packet,dcqcn,ecmp,16,", 0), 0u) << rows[2];
  EXPECT_EQ(rows[4].rfind("p0003,ok,adaptive,dcqcn,packet,dcqcn,adaptive,16,", 0), 0u) << rows[4];
  // busbw is filled from the nccl_tests table; iteration_s is empty (no training job).
  EXPECT_NE(rows[1].find(",,"), std::string::npos) << rows[1];
}

TEST(SweepCliTest, ResumeKeepsFinishedPointsAndRerunsMissingOnes) {
  TempDir dir;
  const std::string file = writeSweep(dir);
  const std::string out = dir.file("out");
  ASSERT_EQ(sweep(q(file) + " --out " + q(out) + " --quiet").status, 0);
  // Mark p0000's results and delete p0001's.
  auto doc = readJson(out + "/points/p0000/results.json");
  doc["marker"] = true;
  std::ofstream(out + "/points/p0000/results.json") << doc.dump();
  fs::remove(out + "/points/p0001/results.json");

  const auto again = sweep(q(file) + " --out " + q(out));
  EXPECT_EQ(again.status, 2) << again.out;
  EXPECT_NE(again.out.find("already holds 1 finished points (p0000); pass --resume"), std::string::npos)
      << again.out;

  const auto r = sweep(q(file) + " --out " + q(out) + " --resume");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("running 1 (1 already done)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1/1] p0001 routing=adaptive: done"), std::string::npos) << r.out;
  EXPECT_TRUE(readJson(out + "/points/p0000/results.json").value("marker", false))
      << "p0000 must not be re-run";
  EXPECT_TRUE(fs::exists(out + "/points/p0001/results.json"));
  EXPECT_EQ(lines(readText(out + "/summary.csv")).size(), 3u);
}

TEST(SweepCliTest, ResumeRerunsExactlyThePointsWhoseConfigurationChanged) {
  TempDir dir;
  const std::string file = writeSweep(dir);
  const std::string out = dir.file("out");
  ASSERT_EQ(sweep(q(file) + " --out " + q(out) + " --quiet").status, 0);
  for (const char* p : {"p0000", "p0001"}) {
    auto doc = readJson(out + "/points/" + p + "/results.json");
    doc["marker"] = true;
    std::ofstream(out + "/points/" + p + "/results.json") << doc.dump();
  }
  // The same file again: nothing to run.
  const auto same = sweep(q(file) + " --out " + q(out) + " --resume");
  ASSERT_EQ(same.status, 0) << same.out;
  EXPECT_NE(same.out.find("running 0 (2 already done)"), std::string::npos) << same.out;
  // Only the adaptive point gets another ECN setting.
  std::string text = readText(file);
  const std::string from = "values: [ecmp, adaptive]";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(
      text.find(from), from.size(),
      "values: [ecmp, {value: adaptive, set: ['switch.ecn={kmin: 50KiB, kmax: 400KiB, pmax: 0.2}']}]");
  std::ofstream(file) << text;
  const auto r = sweep(q(file) + " --out " + q(out) + " --resume");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("running 1 (1 already done); 1 changed since it ran"), std::string::npos) << r.out;
  EXPECT_TRUE(readJson(out + "/points/p0000/results.json").value("marker", false)) << "p0000 did not change";
  EXPECT_FALSE(readJson(out + "/points/p0001/results.json").value("marker", false)) << "p0001 changed: rerun";
  EXPECT_EQ(lines(readText(out + "/summary.csv")).size(), 3u);
}

TEST(SweepCliTest, ASweepKilledWithSigkillLeavesNoOrphanAndResumesEveryPointOnce) {
  // Two packet-level points of 0.2 s of CPU each (Release) on a 1,024-host fat-tree: the sweep is
  // killed milliseconds after its first run starts, and a run that outlived it would finish and
  // write its results.
  TempDir dir;
  const std::string file =
      dir.write("sweep.yaml", "name: killed\ntopology: " + kSrc +
                                  "/topologies/fat-tree-k16-100g.yaml\nworkloads: [" + kSrc +
                                  "/workloads/permutation-2mb.yaml]\n"
                                  "workload_set: [message_size=128KB]\n"
                                  "axes:\n  - name: seed\n    values: [1, 2]\n");
  const std::string out = dir.file("out");
  const pid_t sweeper = fork();
  ASSERT_GE(sweeper, 0);
  if (sweeper == 0) {
    execl(FABRICSIM_BINARY, FABRICSIM_BINARY, "sweep", file.c_str(), "--out", out.c_str(), "--quiet",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for its first point's run to start, then kill the sweep as the OOM killer would.
  std::vector<int> kids;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((kids = childrenOf(sweeper)).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(kids.size(), 1u) << "the sweep started no run";
  const int run = kids[0];
  ASSERT_TRUE(alive(run));
  ASSERT_EQ(kill(sweeper, SIGKILL), 0);
  ASSERT_EQ(waitpid(sweeper, nullptr, 0), sweeper);
  // The kernel kills the orphaned run (at once: allow 10 s for a loaded machine).
  const auto gone = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (alive(run) && std::chrono::steady_clock::now() < gone)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(alive(run)) << "run " << run << " outlived its sweep";
  EXPECT_FALSE(fs::exists(out + "/points/p0000/results.json")) << "the run went on after its sweep died";
  // Resumed: every point once.
  const auto r = sweep(q(file) + " --out " + q(out) + " --resume");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("running 2"), std::string::npos) << r.out;
  const auto rows = lines(readText(out + "/summary.csv"));
  ASSERT_EQ(rows.size(), 3u) << readText(out + "/summary.csv");
  EXPECT_EQ(rows[1].rfind("p0000,ok,1,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2].rfind("p0001,ok,2,", 0), 0u) << rows[2];
}

// Two runners started at once on the same folder (two job-array tasks given the same sweep, a
// user starting a second `--resume`): the claims give every point to exactly one of them.
TEST(SweepCliTest, TwoRunnersOnOneFolderRunEveryPointOnce) {
  TempDir dir;
  const std::string file = writeSweep(dir, kCcAxis + "  - name: seed\n    values: [1, 2]\n");
  const std::string out = dir.file("out");
  const std::string one = q(FABRICSIM_BINARY) + " sweep " + q(file) + " --out " + q(out) + " --resume";
  const int status = std::system(("(" + one + " > " + q(dir.file("a.txt")) + " 2>&1 & " + one + " > " +
                                  q(dir.file("b.txt")) + " 2>&1 & wait)")
                                     .c_str());
  ASSERT_EQ(status, 0);
  std::map<std::string, int> runs;
  for (const char* log : {"a.txt", "b.txt"})
    for (const auto& l : lines(readText(dir.file(log)))) {
      // "<time> [k/n] pNNNN axes: done in ..." for a point this runner ran.
      const size_t at = l.find("] p0");
      if (at != std::string::npos && l.find(": done in") != std::string::npos) ++runs[l.substr(at + 2, 5)];
    }
  ASSERT_EQ(runs.size(), 8u) << readText(dir.file("a.txt")) << readText(dir.file("b.txt"));
  for (const auto& [id, n] : runs) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_TRUE(fs::exists(out + "/points/" + id + "/results.json")) << id;
  }
}

TEST(SweepCliTest, AFailingPointWritesFailedJsonAndExitsOne) {
  TempDir dir;
  const std::string file = writeSweep(dir, "  - name: links.technology\n    values: [roce, ethernet]\n");
  const std::string out = dir.file("out");
  const auto r = sweep(q(file) + " --out " + q(out) + " --jobs 2");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("p0001 routing=ecmp links.technology=ethernet: FAILED (exit 2)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| 2 failed"), std::string::npos) << r.out;
  for (const char* p : {"p0001", "p0003"}) {
    const std::string d = out + "/points/" + p;
    ASSERT_TRUE(fs::exists(d + "/failed.json")) << p;
    EXPECT_FALSE(fs::exists(d + "/results.json")) << p;
    const auto f = readJson(d + "/failed.json");
    EXPECT_EQ(f["exit_code"], 2);
    EXPECT_TRUE(f["signal"].is_null());
    EXPECT_NE(f["log_tail"].get<std::string>().find("links.technology"), std::string::npos) << f.dump();
  }
  EXPECT_TRUE(fs::exists(out + "/points/p0000/results.json"));
  const auto rows = lines(readText(out + "/summary.csv"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[2].rfind("p0001,failed,ecmp,ethernet,,", 0), 0u) << rows[2];
  EXPECT_EQ(rows[3].rfind("p0002,ok,adaptive,roce,", 0), 0u) << rows[3];
}

TEST(SweepCliTest, BadInputExitsTwo) {
  TempDir dir;
  const std::string file =
      dir.write("bad.yaml", "topology: nowhere.yaml\naxes:\n  - {name: cc, values: []}\n");
  const auto r = sweep(q(file) + " --out " + q(dir.file("out")));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bad.yaml:1:11: 'topology': expected an existing topology file"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bad.yaml:3:24: 'axes[0].values': expected at least one value"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir.file("out")));
  EXPECT_EQ(sweep(q(writeSweep(dir))).status, 2) << "--out is required";
  EXPECT_EQ(sweep(q(writeSweep(dir)) + " --out x --jobs 0").status, 2);
}

TEST(SweepCliTest, DryRunPrintsTheCommands) {
  TempDir dir;
  const auto r = testsupport::runFabricsim("sweep " + q(writeSweep(dir, kCcAxis)) + " --dry-run", "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("sweep tiny: 4 points"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p0003 routing=adaptive cc=dcqcn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" run "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--routing adaptive --cc dcqcn"), std::string::npos) << r.out;
}

// Every point is held to --max-memory; points run at once share the machine by default.
TEST(SweepCliTest, PointsAreHeldToTheMemoryLimit) {
  TempDir dir;
  const std::string file = q(writeSweep(dir, kCcAxis));
  auto r = testsupport::runFabricsim("sweep " + file + " --dry-run --max-memory 3GiB", "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--max-memory 3GiB"), std::string::npos) << r.out;
  r = testsupport::runFabricsim("sweep " + file + " --dry-run --jobs 2", "2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--max-memory "), std::string::npos) << r.out;
  r = testsupport::runFabricsim("sweep " + file + " --dry-run", "2>&1");
  EXPECT_EQ(r.out.find("--max-memory"), std::string::npos) << "one point at a time: the machine's memory\n"
                                                           << r.out;
  r = testsupport::runFabricsim("sweep " + file + " --dry-run --max-memory lots", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--max-memory: expected"), std::string::npos) << r.out;
}

/// `mpirun -np 2 fabricsim sweep ARGS` (as root in a container, more ranks than cores allowed):
/// its exit status (-1 when it did not exit) and output.
testsupport::CliResult mpirunSweep(const std::string& args) {
  return testsupport::runFabricsim(
      "sweep " + args, "2>&1",
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
      "mpirun -np 2 --oversubscribe ");
}

TEST(SweepCliTest, MpirunRanksShareThePoints) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun is not installed";
  TempDir dir;
  const std::string file = writeSweep(dir, kCcAxis);
  const std::string out = dir.file("out");
  const auto [status, output] = mpirunSweep(q(file) + " --out " + q(out) + " --quiet");
  ASSERT_EQ(status, 0) << output;
  for (int i = 0; i < 4; ++i) {
    const std::string d = out + "/points/p000" + std::to_string(i);
    ASSERT_TRUE(fs::exists(d + "/results.json")) << d << "\n" << output;
    const auto pj = readJson(d + "/point.json");
    EXPECT_TRUE(pj["mpi_rank"] == 0 || pj["mpi_rank"] == 1) << d;
    EXPECT_EQ(pj["mpi_size"], 2) << d;
  }
  const auto rows = lines(readText(out + "/summary.csv"));
  ASSERT_EQ(rows.size(), 5u) << output;
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_NE(rows[i].find(",ok,"), std::string::npos) << rows[i];
}

TEST(SweepCliTest, MpirunRanksGoOnPastASlowAndAFailingPoint) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun is not installed";
  // p0000 runs about ten times longer than the others (a 1,024-host packet run against a 16-host
  // one), p0001 fails at once: rank 1 must run the rest while rank 0 is on p0000.
  TempDir dir;
  const std::string file =
      dir.write("sweep.yaml", "name: uneven\ntopology: " + kSrc +
                                  "/topologies/leafspine-16.yaml\naxes:\n  - name: case\n"
                                  "    values:\n"
                                  "      - {value: slow, topology: " +
                                  kSrc + "/topologies/fat-tree-k16-100g.yaml, workload: " + kSrc +
                                  "/workloads/permutation-2mb.yaml, workload_set: [message_size=256KB]}\n"
                                  "      - {value: failing, set: [links.technology=ethernet]}\n"
                                  "      - {value: fast1, seed: 1}\n"
                                  "      - {value: fast2, seed: 2}\n");
  const std::string out = dir.file("out");
  const auto [status, output] = mpirunSweep(q(file) + " --out " + q(out));
  EXPECT_EQ(status, 1) << "a point failed\n" << output;
  const auto rank = [&](const char* id) {
    return readJson(out + "/points/" + id + "/point.json")["mpi_rank"];
  };
  EXPECT_TRUE(fs::exists(out + "/points/p0000/results.json")) << output;
  EXPECT_TRUE(fs::exists(out + "/points/p0001/failed.json")) << output;
  EXPECT_TRUE(fs::exists(out + "/points/p0002/results.json")) << output;
  EXPECT_TRUE(fs::exists(out + "/points/p0003/results.json")) << output;
  EXPECT_EQ(rank("p0000"), 0) << output;
  EXPECT_EQ(rank("p0002"), 1) << "rank 1 takes the next point while rank 0 is busy\n" << output;
  EXPECT_EQ(rank("p0003"), 1) << output;
  const auto rows = lines(readText(out + "/summary.csv"));
  ASSERT_EQ(rows.size(), 5u) << output;
  EXPECT_EQ(rows[2].rfind("p0001,failed,", 0), 0u) << rows[2];
}

TEST(SweepCliTest, ShardsOfAJobArraySplitThePointsAndTheLastLeavesAFullSummary) {
  TempDir dir;
  const std::string file = writeSweep(dir, kCcAxis);
  const std::string out = dir.file("out");
  const auto first = sweep(q(file) + " --out " + q(out) + " --shard 1/2");
  ASSERT_EQ(first.status, 0) << first.out;
  EXPECT_NE(first.out.find("shard 1/2: sweep tiny: 4 points, running 2"), std::string::npos) << first.out;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(fs::exists(out + "/points/p000" + std::to_string(i) + "/results.json"), i % 2 == 1) << i;
  auto rows = lines(readText(out + "/summary.csv"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1].rfind("p0000,missing,", 0), 0u) << rows[1];
  // The other task of the array, later (or at once: they share nothing but the folder).
  const auto second = sweep(q(file) + " --out " + q(out) + " --shard 0/2");
  ASSERT_EQ(second.status, 0) << second.out;
  rows = lines(readText(out + "/summary.csv"));
  ASSERT_EQ(rows.size(), 5u);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_NE(rows[i].find(",ok,"), std::string::npos) << rows[i];
  // Resumed, a shard reruns nothing of its own that is current.
  const auto again = sweep(q(file) + " --out " + q(out) + " --shard 0/2 --resume");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("running 0 (2 already done)"), std::string::npos) << again.out;
  for (const char* bad : {"2/2", "-1/2", "1/0", "1", "1/2x"}) {
    const auto r = sweep(q(file) + " --out " + q(dir.file("bad")) + " --shard " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.out.find("--shard: expected I/N"), std::string::npos) << r.out;
  }
}

TEST(SweepCliTest, PlotSweepWritesPngs) {
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  if (std::system((python + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "python3-matplotlib is not installed";
  TempDir dir;
  const std::string out = dir.file("out");
  ASSERT_EQ(sweep(q(writeSweep(dir, kCcAxis)) + " --out " + q(out) + " --jobs 2 --quiet").status, 0);
  const std::string plots = dir.file("plots");
  const std::string cmd =
      python + " " + q(kSrc + "/scripts/plot_sweep.py") + " " + q(out) + " --out " + q(plots) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << output;
  for (const char* f : {"jct_vs_routing.png", "exposed_comm_vs_routing.png", "busbw_vs_size.png"}) {
    const std::string path = plots + "/" + f;
    ASSERT_TRUE(fs::exists(path)) << path << "\n" << output;
    EXPECT_NE(output.find(path), std::string::npos) << output;
    const std::string head = readText(path).substr(0, 8);
    EXPECT_EQ(head, std::string("\x89PNG\r\n\x1a\n", 8)) << path;
  }
  // A clear error for a directory without a summary.
  fs::create_directories(dir.file("points-only"));
  const std::string bad =
      python + " " + q(kSrc + "/scripts/plot_sweep.py") + " " + q(dir.file("points-only")) + " 2>&1";
  p = popen(bad.c_str(), "r");
  output.clear();
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  EXPECT_NE(pclose(p), 0);
  EXPECT_NE(output.find("summary.csv"), std::string::npos) << output;
}

}  // namespace
}  // namespace fabricsim
