// Local fast failover (issue 17): a switch takes a dead port out of its ECMP groups after
// routing.failover_delay, before and whatever the control plane does.
//
// The fabric: two leaves, two spines, one host per leaf, one 100 Gb/s link of 1 us between
// each leaf and each spine. One 4 MiB transfer from host-0 to host-1 hashes onto one of the
// two spines; the link from leaf-0 to that spine fails 100 us into the transfer. With static
// tables and no local failover, nothing changes the tables: the QP's packets die on the link
// until its retries run out. With local failover the leaf sends on the other spine after the
// delay d; what the failure costs is the bytes sent into the dead link from the failure until
// the failover (d of sending), then one round trip until the receiver's NAK brings the sender
// back to the first lost packet. So the completion time grows by d plus at most a few round
// trips, one for one with d, on every backend.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/core/Error.h"
#include "sim/runtime/Experiment.h"

using namespace fabricsim;

namespace {

// A directory of its own per test: ctest runs the tests of this file in parallel processes.
std::string writeFiles() {
  const std::string dir =
      testing::TempDir() + "lf-" + testing::UnitTest::GetInstance()->current_test_info()->name() + "-";
  {
    std::ofstream t(dir + "topo.yaml");
    t << "name: lf\n"
         "topology: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 1, links_per_spine: 1}\n"
         "hosts: {gpus_per_host: 1}\n"
         "links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps, latency: 1us, mtu: 4096}\n"
         "switch: {buffer: 32MiB, latency: 0ns, pfc: {enabled: false}}\n"
         "routing: {algorithm: ecmp}\n"
         "congestion_control: {algorithm: none}\n";
  }
  {
    std::ofstream w(dir + "one-flow.yaml");
    w << "kind: pattern\npattern: incast\nmessage_size: 4MiB\nincast: {senders: 1, receiver: 1}\n";
  }
  return dir;
}

struct Outcome {
  nlohmann::json r;
  double jct = 0;
  int64_t lost = 0;  // bytes lost on dead links
};

Outcome run(const std::string& backend, bool fail, const std::vector<std::string>& extra, uint64_t seed) {
  const std::string dir = writeFiles();
  RunOptions o;
  o.topologyPath = dir + "topo.yaml";
  o.workloadPaths = {dir + "one-flow.yaml"};
  o.progress = false;
  o.backend = backend;
  o.seed = seed;
  o.sets = extra;
  if (fail) o.sets.push_back("failures=[{at: 100us, action: down, link: [leaf-0, spine-0]}]");
  Experiment e(o);
  e.run();
  Outcome out;
  out.r = e.results();
  if (out.r["status"] == "completed") out.jct = out.r["jobs"][0]["jct_s"].get<double>();
  out.lost = out.r["network"]["bytes_dropped"].get<int64_t>();
  return out;
}

// A run seed whose hash puts the data on spine-0 (the failure loses bytes) and the ACKs on
// spine-1 (the run completes): about one seed in four.
uint64_t seedWithDataOnSpine0() {
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    const Outcome o = run("packet", true, {"routing.failover_delay=10us"}, seed);
    if (o.r["status"] == "completed" && o.lost > 0) return seed;
  }
  ADD_FAILURE() << "no seed in 1..64 hashes the data onto spine-0 and the ACKs onto spine-1";
  return 1;
}

}  // namespace

TEST(LocalFailover, CompletionGrowsOneForOneWithTheFailoverDelayOnEveryBackend) {
  // The closed form. A 4 KiB frame (4096 B payload and about 80 B of headers) takes 0.334 us
  // at 100 Gb/s. The first packet lost is the one on the dead leaf-0 -> spine-0 wire at the
  // failure: it left the host 2 links + 1 frame = 2.33 us before. After the failover the next
  // packet reaches the receiver, whose NAK returns: one round trip of 8 links (data and ACK)
  // + 3 store-and-forward data frames = 9.0 us. The sender then resends from the first lost
  // packet, so the completion time grows by d + 2.33 + 9.0 = d + 11.3 us. Tolerance 2 us:
  // where within a frame the failure falls (0.33 us), ACK and NAK frames (0.01 us each), and the
  // flow backend's recovery, which waits two one-way delays rather than data plus ACK (1 us).
  // Between two delays the difference is d2 - d1 within the same 2 us.
  const uint64_t seed = seedWithDataOnSpine0();
  for (const char* backend : {"packet", "flow", "hybrid"}) {
    const Outcome none = run(backend, false, {}, seed);
    ASSERT_EQ(none.r["status"], "completed") << backend;
    double jct[2];
    const double delays[2] = {10e-6, 200e-6};
    for (int i = 0; i < 2; ++i) {
      const Outcome f =
          run(backend, true, {"routing.failover_delay=" + std::string(i == 0 ? "10us" : "200us")}, seed);
      ASSERT_EQ(f.r["status"], "completed") << backend;
      const auto& n = f.r["network"];
      EXPECT_EQ(n["goodput_bytes"].get<int64_t>(), 4LL << 20) << backend;
      EXPECT_EQ(n["bytes_sent"].get<int64_t>(),
                n["bytes_delivered"].get<int64_t>() + n["bytes_dropped"].get<int64_t>())
          << backend;
      jct[i] = f.jct;
      EXPECT_NEAR(f.jct - none.jct, delays[i] + 11.3e-6, 2e-6) << backend;
      // Bytes lost on the dead link: at least the payload sent into it during d (payload at
      // 100 Gb/s x 4096/4176 of the wire: 12.26 GB/s), at most all the payload sent from the
      // first lost packet until the NAK (d + 11.3 us, + the 2 us above): the packet backend
      // counts what died on the link, the flow backend everything it resends.
      const double payloadRate = 100e9 / 8 * 4096.0 / 4176.0;
      const auto lost = static_cast<double>(f.r["routing"]["bytes_lost_dead_links"].get<int64_t>());
      EXPECT_GE(lost, payloadRate * delays[i]) << backend;
      EXPECT_LE(lost, payloadRate * (delays[i] + 13.3e-6)) << backend;
      // The results give the failover time and the switches it changed: leaf-0 (its group
      // toward leaf-1 loses the spine) and the spine (its only way to leaf-0 is gone).
      const auto& ev = f.r["routing"]["failures"];
      ASSERT_EQ(ev.size(), 1u) << backend;
      EXPECT_EQ(ev[0]["event"], "link_down");
      EXPECT_NEAR(ev[0]["local_failover_s"].get<double>(), delays[i], 1e-12) << backend;
      EXPECT_EQ(ev[0]["local_failover_switches"].get<int>(), 2) << backend;
      EXPECT_TRUE(ev[0]["convergence_time_s"].is_null()) << backend;  // no control plane ran
    }
    EXPECT_NEAR(jct[1] - jct[0], 190e-6, 2e-6) << backend;
  }
}

TEST(LocalFailover, WithoutItStaticTablesLoseTheConnection) {
  // The same failure with local failover off: the leaf keeps hashing the QP into the dead port,
  // go-back-N times out retry_limit + 1 times and the QP fails; the run ends and names it.
  const uint64_t seed = seedWithDataOnSpine0();
  for (const char* backend : {"packet", "flow"}) {
    const Outcome f = run(backend, true, {"routing.local_failover=false"}, seed);
    EXPECT_EQ(f.r["status"], "failed") << backend;
    ASSERT_EQ(f.r["failures"].size(), 1u) << backend;
    EXPECT_EQ(f.r["failures"][0]["src_nic"], 0) << backend;
    EXPECT_EQ(f.r["failures"][0]["dst_nic"], 1) << backend;
    EXPECT_TRUE(f.r["routing"]["failures"][0]["local_failover_s"].is_null()) << backend;
  }
}

TEST(LocalFailover, ActsBeforeAndIndependentlyOfBgp) {
  // BGP with its default BFD (300 ms x 3) detects the failure 0.9 s after it; the transfer
  // (about 0.4 ms) is long finished by then, because the leaf failed over locally after 10 us:
  // its completion is the static-table run's (the same packets on the same paths: 1 ps), and the
  // results give both times, the local one and BGP's.
  const std::vector<std::string> bgp = {"routing.control_plane=bgp", "routing.failover_delay=10us"};
  const uint64_t seed = seedWithDataOnSpine0();
  const Outcome withBgp = run("packet", true, bgp, seed);
  const Outcome staticTables = run("packet", true, {"routing.failover_delay=10us"}, seed);
  ASSERT_EQ(withBgp.r["status"], "completed");
  ASSERT_EQ(staticTables.r["status"], "completed");
  EXPECT_NEAR(withBgp.jct, staticTables.jct, 1e-12);
  const auto& ev = withBgp.r["routing"]["failures"];
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NEAR(ev[0]["local_failover_s"].get<double>(), 10e-6, 1e-12);
  ASSERT_FALSE(ev[0]["detected_s"].is_null());
  EXPECT_NEAR(ev[0]["detected_s"].get<double>() - ev[0]["at_s"].get<double>(), 0.9, 1e-9);
}

TEST(LocalFailover, ASwitchFailureChangesEveryNeighbourAndTheSwitch) {
  // spine-0 fails: both leaves lose it from their groups toward each other, and spine-0's own
  // groups (all its ports dead) empty: 3 switches, counted by hand.
  const std::string dir = writeFiles();
  RunOptions o;
  o.topologyPath = dir + "topo.yaml";
  o.workloadPaths = {dir + "one-flow.yaml"};
  o.progress = false;
  o.sets = {"failures=[{at: 100us, action: down, switch: spine-0}]"};
  Experiment e(o);
  e.run();
  const nlohmann::json r = e.results();
  EXPECT_EQ(r["status"], "completed");
  ASSERT_EQ(r["routing"]["failures"].size(), 1u);
  EXPECT_EQ(r["routing"]["failures"][0]["event"], "switch_down");
  EXPECT_EQ(r["routing"]["failures"][0]["local_failover_switches"].get<int>(), 3);
}

TEST(LocalFailover, FailoverKeysAreEthernetOnly) {
  // On InfiniBand the subnet manager's tables forward; Ethernet ECMP settings are refused.
  const std::string dir = writeFiles();
  RunOptions o;
  o.topologyPath = dir + "topo.yaml";
  o.workloadPaths = {dir + "one-flow.yaml"};
  o.progress = false;
  o.routing = "ib-sm";
  o.sets = {"links.technology=infiniband", "routing.failover_delay=5us"};
  try {
    Experiment e(o);
    FAIL() << "accepted routing.failover_delay on InfiniBand";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("routing.failover_delay"), std::string::npos) << err.what();
  }
}

TEST(LocalFailover, AcksThroughASwitchWithoutARouteFailTheConnectionOnEveryBackend) {
  // A seed for which the data avoids spine-0 but the ACKs from leaf-1 hash onto it: after the
  // failure spine-0 has no way to leaf-0, and with static tables it never gets one. Every byte
  // arrives, but the sender never hears so: it times out, resends, and fails on the timeout after
  // its 7 retries, 1 + 2 + ... + 128 = 255 ms (RTO 1 ms doubling) after its timer started, which
  // is between the failure (0.1 ms) and the end of sending (0.35 ms): at 255.1 to 255.5 ms.
  uint64_t seed = 0;
  for (uint64_t s = 1; s <= 64 && seed == 0; ++s) {
    const Outcome o = run("packet", true, {"routing.failover_delay=10us"}, s);
    if (o.r["status"] == "failed" && o.lost == 0) seed = s;
  }
  ASSERT_NE(seed, 0u) << "no seed in 1..64 sends only the ACKs through spine-0";
  for (const char* backend : {"packet", "flow", "hybrid"}) {
    const Outcome o = run(backend, true, {"routing.failover_delay=10us"}, seed);
    EXPECT_EQ(o.r["status"], "failed") << backend;
    EXPECT_EQ(o.r["network"]["goodput_bytes"].get<int64_t>(), 4LL << 20) << backend;
    ASSERT_EQ(o.r["failures"].size(), 1u) << backend;
    const auto& f = o.r["failures"][0];
    EXPECT_EQ(f["kind"], "retry_exceeded") << backend;
    EXPECT_EQ(f["transfers_failed"].get<int>(), 0) << backend;
    EXPECT_GE(f["at_s"].get<double>(), 0.2551) << backend;
    EXPECT_LE(f["at_s"].get<double>(), 0.2555) << backend;
  }
}

TEST(LocalFailover, ALinkOfAFailedSwitchStaysDownUntilBothAreRepaired) {
  // spine-0 fails at 100 us; its link to leaf-0 fails at 150 us and is repaired at 200 us while
  // spine-0 is still down. The link must stay down (its switch is dead): the two link events
  // change nothing, so the run is the same as with the switch failure alone, to the picosecond,
  // and the link events changed no switch's tables.
  for (const char* backend : {"packet", "flow"}) {
    const std::string dir = writeFiles();
    auto runWith = [&](const std::string& failures) {
      RunOptions o;
      o.topologyPath = dir + "topo.yaml";
      o.workloadPaths = {dir + "one-flow.yaml"};
      o.progress = false;
      o.backend = backend;
      o.sets = {"failures=" + failures};
      Experiment e(o);
      e.run();
      return e.results();
    };
    const nlohmann::json alone = runWith("[{at: 100us, action: down, switch: spine-0}]");
    const nlohmann::json both = runWith(
        "[{at: 100us, action: down, switch: spine-0}, {at: 150us, action: down, link: [leaf-0, spine-0]}, "
        "{at: 200us, action: up, link: [leaf-0, spine-0]}]");
    ASSERT_EQ(alone["status"], "completed") << backend;
    ASSERT_EQ(both["status"], "completed") << backend;
    EXPECT_EQ(both["jobs"][0]["jct_s"].get<double>(), alone["jobs"][0]["jct_s"].get<double>()) << backend;
    const auto& ev = both["routing"]["failures"];
    ASSERT_EQ(ev.size(), 3u) << backend;
    EXPECT_EQ(ev[1]["local_failover_switches"].get<int>(), 0) << backend;
    EXPECT_EQ(ev[2]["local_failover_switches"].get<int>(), 0) << backend;
  }
}
