// `fabricsim run --backend hybrid` against `--backend packet` end to end, where congestion
// control decides the outcome: a 16-to-1 incast on leafspine-64-cc under no congestion control
// and DCQCN, each lossless (PFC) and lossy. There the flow backend is off by up to 48% (it has
// no CC dynamics); the hybrid backend must be within 10% of the packet backend. The results must
// describe the model and its episodes. The FCT distribution of a training job's burst of
// pipeline sends under each scheme against the packet backend's seed-to-seed range. (Training
// jobs: HybridAccuracyTest.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/runtime/Experiment.h"
#include "tests/support/BackendRun.h"
#include "tests/support/CliRunner.h"
#include "tests/support/FigureLine.h"
#include "tests/support/TempDir.h"

namespace {

using fabricsim::testsupport::CliResult;
using fabricsim::testsupport::runBackend;
using fabricsim::testsupport::TempDir;

const std::string kRoot = std::string(FABRICSIM_SOURCE_DIR) + "/";

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

double jct(const nlohmann::json& j) {
  return j["jobs"][0]["jct_s"].get<double>();
}

struct Three {
  double packet = 0, hybrid = 0, flow = 0;  ///< packet: mean over seeds
  double packetMin = 0, packetMax = 0;      ///< the packet backend's own spread
};

/// Runs packet (seeds 1..3), hybrid and flow; checks that the hybrid results describe their
/// model consistently: each episode's efficiency is its seeds' fluid time over their mean
/// packet time (the definition, recomputed here from the per-seed figures it reports), inside
/// its interval; the fixed point converged; the job's interval holds its value.
Three runAll(const std::string& args, const std::string& name) {
  TempDir dir;
  Three t;
  std::vector<double> packet;
  for (int seed = 1; seed <= 3; ++seed) {
    const auto p = runBackend(dir, args + " --seed " + std::to_string(seed), "packet");
    if (!p.is_object()) return {};
    packet.push_back(jct(p));
  }
  const auto h = runBackend(dir, args, "hybrid");
  const auto f = runBackend(dir, args, "flow");
  if (!h.is_object() || !f.is_object()) return {};
  EXPECT_EQ(h["backend"], "hybrid");
  EXPECT_EQ(h["backend_model"]["level"], "hybrid");
  EXPECT_FALSE(h["backend_model"]["not_modelled"].empty());
  const auto& m = h["summary"]["hybrid_model"];
  EXPECT_EQ(m["seeds"], 8) << "the default";
  EXPECT_EQ(m["coupling"]["unconverged"], 0) << "one congested port: the fixed point is reached";
  for (const auto& e : m["episodes"]) {
    // Every seed, or the first three (one per replica group) where they came out identical: the
    // outcome does not depend on the seed, and then no replica is rerun.
    const size_t n = e["seeds"].size();
    if (e["seed_independent"] == true) {
      EXPECT_EQ(n, 3u);
      for (const auto& run : e["seeds"]) EXPECT_EQ(run["packet_time_us"], e["seeds"][0]["packet_time_us"]);
    } else {
      EXPECT_EQ(n, 8u);
    }
    if (n == 0) continue;
    double packetUs = 0;
    for (const auto& run : e["seeds"]) packetUs += run["packet_time_us"].get<double>() / static_cast<double>(n);
    const double eff = e["efficiency"].get<double>();
    EXPECT_NEAR(eff, std::min(1.0, e["fluid_time_us"].get<double>() / packetUs), 1e-9);
    EXPECT_LE(e["efficiency_ci95"][0].get<double>(), eff);
    EXPECT_GE(e["efficiency_ci95"][1].get<double>(), eff);
    EXPECT_GE(e["fan_in"].get<int>(), 2);
  }
  const auto& c = h["jobs"][0]["confidence"]["jct_s"];
  EXPECT_EQ(c["replicas"].size(), 3u);
  EXPECT_EQ(m["replicas_rerun"], m["seed_dependent_episodes"] != 0);
  if (m["replicas_rerun"] == false) {
    for (const auto& r : c["replicas"]) EXPECT_EQ(r, jct(h)) << "no episode depends on its seed: each replica is the run";
  }
  EXPECT_LE(c["ci95"][0].get<double>(), jct(h));
  EXPECT_GE(c["ci95"][1].get<double>(), jct(h));
  EXPECT_EQ(h["network"]["bytes_sent"], f["network"]["bytes_sent"]) << "the same transfers";
  EXPECT_EQ(h["network"]["bytes_delivered"], h["network"]["bytes_sent"]) << "nothing lost";
  t.packet = (packet[0] + packet[1] + packet[2]) / 3;
  t.packetMin = *std::min_element(packet.begin(), packet.end());
  t.packetMax = *std::max_element(packet.begin(), packet.end());
  t.hybrid = jct(h);
  t.flow = jct(f);
  std::printf(
      "[ hybrid %s ] JCT packet %.1f us [%.1f, %.1f over 3 seeds], hybrid %.1f us (%+.1f%%), flow %.1f us "
      "(%+.1f%%)\n",
      name.c_str(), t.packet * 1e6, t.packetMin * 1e6, t.packetMax * 1e6, t.hybrid * 1e6,
      (t.hybrid / t.packet - 1) * 100, t.flow * 1e6, (t.flow / t.packet - 1) * 100);
  return t;
}

std::string incast(const std::string& cc, bool pfc) {
  return quoted(kRoot + "topologies/leafspine-64-cc.yaml") + " --cc " + cc +
         " --set switch.pfc.enabled=" + (pfc ? "true" : "false");
}

}  // namespace

// A replica reruns the flow level with one group of each episode's seeds. Where no episode the
// run asked for depends on its seed (an incast without congestion control into a lossy switch:
// it drops the tail once its buffer is full, nothing random cuts a rate), every answer a rerun gets is the run's, so it must repeat the run
// exactly, asking no episode the run did not: the run reports its replicas as its own figures
// without rerunning them. Checked here by rerunning them anyway. With DCQCN the episodes depend
// on their seeds, and the replicas are rerun, each on a thread of its own beside the run itself,
// all sharing the episodes' cache: each must give what it gives run alone.
TEST(HybridBackend, ReplicasAreTheRunWhereNoEpisodeDependsOnItsSeedAndRunAloneOrOnThreadsAlike) {
  for (const std::string cc : {"none", "dcqcn"}) {
    fabricsim::RunOptions o;
    o.topologyPath = kRoot + "topologies/leafspine-64-cc.yaml";
    o.cc = cc;
    o.sets = {"switch.pfc.enabled=false"};
    o.backend = "hybrid";
    o.progress = false;
    fabricsim::Experiment run(o);
    run.run();
    const nlohmann::json r = run.results();
    const auto& m = r["summary"]["hybrid_model"];
    ASSERT_GT(m["episodes_simulated"].get<int>(), 0) << cc;
    if (cc == "dcqcn") {
      EXPECT_GT(m["seed_dependent_episodes"].get<int>(), 0);
      EXPECT_EQ(m["replicas_rerun"], true);
      // The replicas ran on threads, sharing the episodes' cache: each must be what the same
      // replica gives when run alone, after them.
      for (int replica = 1; replica <= 3; ++replica) {
        fabricsim::Experiment alone(o, run.episodeModel(), replica);
        alone.run();
        EXPECT_EQ(r["jobs"][0]["confidence"]["jct_s"]["replicas"][replica - 1], alone.results()["jobs"][0]["jct_s"])
            << "replica " << replica;
      }
      continue;
    }
    EXPECT_EQ(m["seed_dependent_episodes"], 0);
    EXPECT_EQ(m["replicas_rerun"], false);
    const auto simulated = run.episodeModel()->simulated();
    for (int replica = 1; replica <= 3; ++replica) {
      fabricsim::Experiment rerun(o, run.episodeModel(), replica);
      rerun.run();
      EXPECT_EQ(rerun.results()["jobs"][0]["jct_s"], r["jobs"][0]["jct_s"]) << "replica " << replica;
      EXPECT_EQ(r["jobs"][0]["confidence"]["jct_s"]["replicas"][replica - 1], r["jobs"][0]["jct_s"]);
    }
    EXPECT_EQ(run.episodeModel()->simulated(), simulated) << "the reruns asked only what the run asked";
  }
}

// Against the packet backend's mean over three seeds: within 10% plus half the packet
// backend's own seed-to-seed range (a single packet seed is one draw of a bimodal DCQCN outcome;
// the contract is about the mean). With PFC, DCQCN's pauses reach the senders through one more
// level of switches in the real fabric than in the episode's shape, and the result moves by
// several percent with the shape's details: that case is held to 15%. The test prints the figures.
TEST(HybridBackend, IncastUnderEachSchemeWithin10PercentOfPacket) {
  for (const auto& [cc, pfc] :
       {std::pair{"none", true}, {"none", false}, {"dcqcn", true}, {"dcqcn", false}}) {
    const std::string name = std::string("incast16-") + cc + (pfc ? "-pfc" : "-lossy");
    SCOPED_TRACE(name);
    const Three t = runAll(incast(cc, pfc), name);
    ASSERT_GT(t.packet, 0);
    static bool header = false;
    fabricsim::testsupport::figureHeaderOnce(header,
                                             "| 16 x 4 MiB into one 100G port | packet JCT, mean of 3 seeds "
                                             "[range] | hybrid | flow |\n|---|---|---|---|");
    char row[256];
    std::snprintf(row, sizeof row,
                  "| %s, %s | %.0f us [%.0f, %.0f] | %.0f us (%+.1f%%) | %.0f us (%+.1f%%) |",
                  std::string(cc) == "dcqcn" ? "DCQCN" : "no congestion control", pfc ? "PFC" : "lossy",
                  t.packet * 1e6, t.packetMin * 1e6, t.packetMax * 1e6, t.hybrid * 1e6,
                  (t.hybrid / t.packet - 1) * 100, t.flow * 1e6, (t.flow / t.packet - 1) * 100);
    fabricsim::testsupport::figureLine(row);
    const double spread = (t.packetMax - t.packetMin) / 2 / t.packet;
    EXPECT_LE(std::abs(t.hybrid / t.packet - 1), (std::string(cc) == "dcqcn" && pfc ? 0.15 : 0.10) + spread);
    EXPECT_LE(std::abs(t.hybrid - t.packet), std::abs(t.flow - t.packet) + 0.005 * t.packet)
        << "never further from packet than the pure flow backend";
    if (std::string(cc) == "dcqcn") {
      EXPECT_GT(t.hybrid, 1.5 * t.flow) << "DCQCN's paper preset at 100G loses a third of the link or more";
    }
  }
}

TEST(HybridBackend, RefusesWhatItCannotModel) {
  TempDir dir;
  // PAUSE frames exist only at packet level: a PFC storm is refused, with its key.
  const CliResult r = fabricsim::testsupport::runFabricsim(
      "run " + quoted(kRoot + "topologies/leafspine-16.yaml") +
          " --backend hybrid --set 'failures=[{at: 1ms, action: pfc-storm, host: host-0}]' --quiet",
      "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("failures[0]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PFC storm needs the packet backend"), std::string::npos) << r.out;
  const CliResult bad = fabricsim::testsupport::runFabricsim(
      "run " + quoted(kRoot + "topologies/leafspine-16.yaml") + " --backend fluid", "2>&1");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("'packet', 'flow' or 'hybrid'"), std::string::npos) << bad.out;
  // A per-QP window has no fluid form: refused on flow and hybrid, pointing at the key in the
  // file (line 8 of the topology written here), not silently ignored.
  const std::string topo = dir.write("window.yaml",
                                     "name: w\n"
                                     "topology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
                                     "hosts: {gpus_per_host: 1}\n"
                                     "links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps}\n"
                                     "switch: {buffer: 32MiB}\n"
                                     "congestion_control: {algorithm: none}\n"
                                     "nic:\n"
                                     "  window: 64KiB\n");
  for (const char* backend : {"flow", "hybrid"}) {
    const CliResult w = fabricsim::testsupport::runFabricsim(
        "run " + quoted(topo) + " --workload " + quoted(kRoot + "workloads/incast-16.yaml") +
            " --workload-set incast.senders=3 --backend " + backend + " --quiet",
        "2>&1");
    EXPECT_EQ(w.status, 2) << backend << w.out;
    EXPECT_NE(w.out.find(topo + ":8:"), std::string::npos) << backend << w.out;
    EXPECT_NE(w.out.find("'nic.window'"), std::string::npos) << backend << w.out;
  }
  // The episodes' settings: at least one seed, a tolerance in (0, 1); file, line and key.
  for (const auto& [setting, key] : {std::pair{"episodes: {seeds: 0}", "episodes.seeds"},
                                     {"episodes: {tolerance: 0}", "episodes.tolerance"},
                                     {"episodes: {tolerance: -0.5}", "episodes.tolerance"},
                                     {"episodes: {max_rounds: 0}", "episodes.max_rounds"},
                                     {"episodes: {seeds: 2, replicas: 3}", "episodes.replicas"},
                                     {"episodes: {seed: 3}", "episodes"}}) {
    const std::string bad =
        dir.write("episodes.yaml",
                  "name: e\n"
                  "topology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
                  "hosts: {gpus_per_host: 1}\n"
                  "links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps}\n"
                  "congestion_control: {algorithm: none}\n" +
                      std::string(setting) + "\n");
    const CliResult e = fabricsim::testsupport::runFabricsim(
        "run " + quoted(bad) + " --workload " + quoted(kRoot + "workloads/incast-16.yaml") +
            " --workload-set incast.senders=3 --backend hybrid --quiet",
        "2>&1");
    EXPECT_EQ(e.status, 2) << setting << e.out;
    EXPECT_NE(e.out.find(bad + ":6:"), std::string::npos) << setting << e.out;
    EXPECT_NE(e.out.find(key), std::string::npos) << setting << e.out;
  }
  const CliResult ok = fabricsim::testsupport::runFabricsim("run " + quoted(topo) + " --workload " +
                                                                quoted(kRoot + "workloads/incast-16.yaml") +
                                                                " --workload-set incast.senders=3 --quiet",
                                                            "2>&1");
  EXPECT_EQ(ok.status, 0) << ok.out;  // the packet backend honours it
}

TEST(HybridBackend, PipelineBurstFctDistributionWithinThePacketBackendsSpread) {
  // workloads/pp-burst-1k.yaml: the 1K validation job's first burst of pipeline sends (128 GPUs x
  // 4 channels x 4 MiB, colliding under ECMP on leaf uplinks and spine downlinks), under no
  // congestion control and DCQCN's paper and ConnectX presets. The median and p99 FCT of the
  // network transfers: the hybrid backend's mean over seeds 1-3 within the packet backend's own
  // range over seeds 1-5, widened by 10% for the hybrid's own draw (which flows its episodes slow
  // comes from the seed). The packet range is wide where the outcome is: ConnectX's median is 349
  // or 526 us depending on the seed. The maximum is printed, not checked: the hybrid's slowest
  // flow can take 1.75 times the packet backend's (docs/hybrid-backend.md, Limits).
  const std::string args = quoted(kRoot + "topologies/rail-optimized-1k.yaml") + " --workload " +
                           quoted(kRoot + "workloads/pp-burst-1k.yaml");
  const std::vector<std::pair<std::string, std::string>> schemes = {
      {"none", " --cc none"},
      {"dcqcn-paper", " --cc dcqcn"},
      {"dcqcn-connectx", " --cc dcqcn --set congestion_control.preset=connectx"}};
  for (const auto& [name, cc] : schemes) {
    TempDir dir;
    std::vector<double> p50, p99;
    double packetMax = 0, hybridMax = 0, h50 = 0, h99 = 0;
    for (int seed = 1; seed <= 5; ++seed) {
      const auto p = runBackend(dir, args + cc + " --seed " + std::to_string(seed), "packet");
      ASSERT_TRUE(p.is_object()) << name;
      const auto& f = p["flows"]["network"]["fct_us"];
      p50.push_back(f["p50"].get<double>());
      p99.push_back(f["p99"].get<double>());
      packetMax += f["max"].get<double>() / 5;
    }
    for (int seed = 1; seed <= 3; ++seed) {
      const auto h = runBackend(dir, args + cc + " --seed " + std::to_string(seed), "hybrid");
      ASSERT_TRUE(h.is_object()) << name;
      const auto& f = h["flows"]["network"]["fct_us"];
      h50 += f["p50"].get<double>() / 3;
      h99 += f["p99"].get<double>() / 3;
      hybridMax += f["max"].get<double>() / 3;
    }
    const auto [lo50, hi50] = std::minmax_element(p50.begin(), p50.end());
    const auto [lo99, hi99] = std::minmax_element(p99.begin(), p99.end());
    std::printf("[ burst %s ] FCT p50: packet [%.0f, %.0f] us, hybrid %.0f; p99: packet [%.0f, %.0f], hybrid %.0f; "
                "max: packet %.0f, hybrid %.0f (means)\n",
                name.c_str(), *lo50, *hi50, h50, *lo99, *hi99, h99, packetMax, hybridMax);
    EXPECT_GE(h50, 0.9 * *lo50) << name;
    EXPECT_LE(h50, 1.1 * *hi50) << name;
    EXPECT_GE(h99, 0.9 * *lo99) << name;
    EXPECT_LE(h99, 1.1 * *hi99) << name;
  }
}

namespace {

/// GPU 0 sends one 4 MiB message to GPU 8 while GPUs 4, 12 and 1 each run four streams of 32
/// sends of 64 KiB to GPU 8, one send at a time per stream (scripts/ib_cc_chunk_stream.py's
/// default case, written here as a trace).
std::string chunkStreamTrace() {
  using nlohmann::json;
  auto op = [](const char* type, int stream, int offset, int64_t bytes) {
    return json{{"type", type}, {"stream", stream},      {"label", 0},
                {"comm", 0},    {"peer_offset", offset}, {"bytes", bytes}};
  };
  const int senders = 3, chains = 4, chunks = 32, n = senders + 2;
  json progs = json::array();
  progs.push_back({{"streams", {"big"}}, {"labels", {"big"}}, {"ops", {op("send", 0, n - 1, 4 << 20)}}});
  json recv = json::array({op("recv", 0, -(n - 1), 4 << 20)});
  json streams = json::array({"big"});
  for (int i = 1; i <= senders; ++i) {
    json ops = json::array(), names = json::array();
    for (int c = 0; c < chains; ++c) {
      names.push_back("chain" + std::to_string(c));
      streams.push_back("from" + std::to_string(i) + "-" + std::to_string(c));
      for (int k = 0; k < chunks; ++k) {
        ops.push_back(op("send", c, n - 1 - i, 64 << 10));
        recv.push_back(op("recv", static_cast<int>(streams.size()) - 1, -(n - 1 - i), 64 << 10));
      }
    }
    progs.push_back({{"streams", names}, {"labels", {"chunk"}}, {"ops", ops}});
  }
  progs.push_back({{"streams", streams}, {"labels", {"recv"}}, {"ops", recv}});
  json ranks = json::array();
  for (int i = 0; i < n; ++i) ranks.push_back({i, 1});
  return json{{"format", "fabricsim-trace"},
              {"version", 1},
              {"name", "ib-cc-chunk-stream"},
              {"ranks", n},
              {"iterations", 1},
              {"collectives",
               {{"algorithm", "auto"},
                {"channels", 1},
                {"nvlink_channels", 1},
                {"step_latency_nvlink_ps", 600000},
                {"step_latency_network_ps", 2700000},
                {"protocol_efficiency", 1.0},
                {"chunk_size_bytes", 1048576},
                {"traffic_class", 0}}},
              {"communicators", {{{"name", "p"}, {"groups", {{0, 1, 2, 3, 4}}}}}},
              {"programs", progs},
              {"program_of_rank", ranks},
              {"placement", {0, 4, 12, 1, 8}}}
      .dump();
}

}  // namespace

// IB CC is not fair at full link rate: the long message that shares GPU 8's link with streams of
// short chunks is throttled hard (about three times its time on credits alone at packet level),
// while the link stays full. The hybrid holds the flows such an episode cuts (it once held only
// the flows of episodes that lost throughput, and gave the message 265 us against the packet
// backend's ~460). Checked: the message's time (the slowest network transfer) within 25% of the
// packet backend's mean over seeds 1-3. Not the contract's 10%: the episode starts every flow
// together, where at packet level the streams arrive over the message's life
// (docs/hybrid-backend.md, Limits, with scripts/ib_cc_chunk_stream.py's table).
TEST(HybridBackend, ALongMessageThrottledByIbCcBesideChunkStreamsWithin25PercentOfPacket) {
  TempDir dir;
  dir.write("chunks.trace.json", chunkStreamTrace());
  const std::string workload = dir.write("chunks.yaml", "kind: trace\ntrace: chunks.trace.json\n");
  const std::string args =
      quoted(kRoot + "topologies/leafspine-16.yaml") + " --workload " + quoted(workload) +
      " --set links.technology=infiniband --set links.host_speed=400Gbps"
      " --set links.fabric_speed=400Gbps --set switch.buffer=64MiB --set switch.ecn.kmin=400KB"
      " --set switch.ecn.kmax=1600KB --set switch.ecn.pmax=0.2 --routing ib-sm --cc ibcc";
  auto slowest = [](const nlohmann::json& r) { return r["flows"]["network"]["fct_us"]["max"].get<double>(); };
  double packet = 0;
  for (int seed = 1; seed <= 3; ++seed) {
    const auto p = runBackend(dir, args + " --seed " + std::to_string(seed), "packet");
    ASSERT_TRUE(p.is_object());
    packet += slowest(p) / 3;
  }
  const auto h = runBackend(dir, args + " --seed 1", "hybrid");
  ASSERT_TRUE(h.is_object());
  std::printf(
      "[ hybrid ib-cc chunk streams ] slowest transfer: packet %.1f us (mean of 3 seeds), hybrid %.1f us\n",
      packet, slowest(h));
  EXPECT_NEAR(slowest(h), packet, 0.25 * packet);
}
