// Host links and NICs that fail (issue 17): a connection whose NIC goes down fails over to the
// host's other NIC when nic.failover allows it, on every backend, and otherwise the run ends with
// status failed naming exactly the transfers that were lost; flaps of a host link; bad input.
//
// Fabric: 2 leaves, 1 spine, 100 Gb/s everywhere, 1 us per link, MTU 4096, no PFC, no congestion
// control; the RC timer is 100 us, doubling, with 3 retries. One 4 MiB transfer from GPU 0
// (host-0) to the first GPU of host-1 unless a test says otherwise.
//
// Independent references, computed here by hand from the settings:
//   R    the host link's payload rate: 100 Gb/s x 4096 / 4178 (a RoCEv2 frame of a 4096-byte
//        payload is 4096 + 82 bytes on the wire: Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble,
//        inter-frame gap);
//   S/R  the transfer's time at that rate; every byte of it must cross a host link of host-0.
// Failover timing (README, "Host links and NICs"): the connection notices at its retransmission
// timeout, which runs from its last acknowledged progress (at most the failure time, and at
// least one packet time before it while ACKs stream back), then resends from its oldest
// unacknowledged byte on the other NIC. So with the failure at t and the RTO T:
//   JCT >= t - p + T + (S - R t) / R = S/R + T - p          (p: one packet time)
//   JCT <= t + T + (S - R (t - RTT)) / R + L + p = S/R + T + RTT + L + p
// (L: the path's latency, 4 links of 1 us and 3 switches' store-and-forward of a 0.33 us frame,
// 5.0 us; RTT: a round trip, 4 frame times + 8 us + a 86-byte ACK's serialization, 9.4 us; p:
// 0.33 us), so S/R + T + 14.7 us. The fluid counts what is in flight as its rate x twice its
// one-way latency (10 us, FlowFabric.h), so S/R + T + 15 us there. The test allows 20 us.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/flow/FlowFabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/runtime/Experiment.h"
#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

using namespace fabricsim;
using namespace fabricsim::testsupport;

namespace {

constexpr double kRate = 100e9 / 8 * 4096.0 / 4178.0;  // payload bytes per second
constexpr double kBytes = 4.0 * 1024 * 1024;
constexpr double kPacket = 4178 * 8 / 100e9;  // one frame's time on a host link
constexpr double kRto = 100e-6;
constexpr double kFail = 100e-6;  // when the failure happens

/// A topology file: 2 leaves with `hostsPerLeaf` hosts of `nics` GPUs and NICs each; `failures`
/// is the YAML list (it starts on line 9); `failover`: nic.failover.
std::string topology(int hostsPerLeaf, int nics, bool failover, const std::string& failures) {
  return "name: hostfail\n"                                                       // 1
         "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: " +  // 2
         std::to_string(hostsPerLeaf) +
         "}\n" +                                                                                 //
         "hosts: {gpus_per_host: " + std::to_string(nics) + ", nics_per_host: " +                // 3
         std::to_string(nics) + "}\n" +                                                          //
         "links: {technology: roce, host_speed: 100Gbps, fabric_speed: 100Gbps, latency: 1us, "  // 4
         "mtu: 4096}\n"                                                                          //
         "switch: {buffer: 32MiB, latency: 0ns, pfc: {enabled: false}}\n"                        // 5
         "congestion_control: {algorithm: none}\n"                                               // 6
         "nic: {reorder: strict, retransmit_timeout: 100us, rto_backoff: 2, retry_limit: 3, "    // 7
         "failover: " +                                                                          //
         (failover ? "true" : "false") +
         "}\n" +                    //
         "failures:\n" + failures;  // 8, 9..
}

/// `senders` GPUs (the first ones other than `receiver`) each send 4 MiB to GPU `receiver`.
std::string incast(int senders, int receiver) {
  return "kind: pattern\npattern: incast\nmessage_size: 4MiB\nincast: {senders: " + std::to_string(senders) +
         ", receiver: " + std::to_string(receiver) + "}\n";
}

struct Outcome {
  nlohmann::json results;
  double nic0Bytes = 0, nic1Bytes = 0;  ///< payload bytes out of host-0's NIC 0 and NIC 1
  std::vector<FlowRecord> records;
};

Outcome run(const TempDir& dir, const std::string& topo, const std::string& workload,
            const std::string& backend) {
  RunOptions o;
  o.topologyPath = dir.write("topo.yaml", topo);
  o.workloadPaths = {dir.write("work.yaml", workload)};
  o.backend = backend;
  o.progress = false;
  o.keepFlowRecords = true;
  Experiment e(o);
  e.run();
  Outcome r;
  r.results = e.results();
  r.records = e.fabric().flowRecords();
  const Topology& t = e.topology();
  if (PacketFabric* p = e.packetFabric()) {
    // Wire bytes of data frames back to payload (host-0 only sends data: no ACKs leave it).
    r.nic0Bytes = static_cast<double>(p->port(t.nicPort(0)).wireBytesSent()) * 4096 / 4178;
    r.nic1Bytes =
        t.nicsPerHost() > 1 ? static_cast<double>(p->port(t.nicPort(1)).wireBytesSent()) * 4096 / 4178 : 0;
  } else {
    r.nic0Bytes = e.flowFabric()->portPayloadBytes(t.nicPort(0));
    r.nic1Bytes = t.nicsPerHost() > 1 ? e.flowFabric()->portPayloadBytes(t.nicPort(1)) : 0;
  }
  return r;
}

}  // namespace

TEST(HostFailure, ANicDownMidTransferFailsOverToTheHostsOtherNicOnEveryBackend) {
  TempDir dir;
  // NIC 0 of host-0 dies 100 us into the transfer from GPU 0 (NIC 0) to GPU 2 (host-1, NIC 0).
  const std::string topo = topology(1, 2, true, "  - {at: 100us, action: down, nic: host-0/0}\n");
  for (const char* backend : {"packet", "flow", "hybrid"}) {
    const Outcome r = run(dir, topo, incast(1, 2), backend);
    const auto& j = r.results;
    ASSERT_EQ(j["status"], "completed") << backend << " " << j["failures"].dump();
    EXPECT_EQ(j["network"]["goodput_bytes"].get<double>(), kBytes) << backend;  // every byte arrived
    EXPECT_EQ(j["network"]["nic_failovers"], 1) << backend;
    // JCT bounds from the header; the tolerance is in them (one packet time below, 20 us above).
    const double jct = j["jobs"][0]["jct_s"].get<double>();
    EXPECT_GE(jct, kBytes / kRate + kRto - kPacket) << backend;
    EXPECT_LE(jct, kBytes / kRate + kRto + 20e-6) << backend;
    // The bytes NIC 0 had not sent by the failure went out of NIC 1, with at most a round trip
    // (10 us at R, the fluid's in-flight figure and above the packet RTT) and a packet of what it had sent
    // but not had acknowledged. The two together sent every byte. NIC 0 delivered at most R x t; at packet
    // level it goes on transmitting into its dead link until the timeout moves the connection (those bytes
    // are lost and counted), the fluid does not charge them (README: capacity burnt upstream of a failure).
    const double unsent = kBytes - kRate * kFail;
    EXPECT_GE(r.nic1Bytes, unsent - 4096) << backend;
    EXPECT_LE(r.nic1Bytes, unsent + kRate * 10e-6 + 4096) << backend;
    const bool packet = std::string(backend) == "packet";
    EXPECT_LE(r.nic0Bytes, kRate * (kFail + (packet ? kRto : 0)) + 4096) << backend;
    EXPECT_GE(r.nic0Bytes + r.nic1Bytes, kBytes - 1) << backend;
    if (packet) {  // bytes conservation: sent = delivered + dropped
      const auto& n = j["network"];
      EXPECT_EQ(n["bytes_sent"].get<int64_t>(),
                n["bytes_delivered"].get<int64_t>() + n["bytes_dropped"].get<int64_t>());
      EXPECT_GT(n["bytes_dropped"].get<int64_t>(), 0);
    }
  }
}

TEST(HostFailure, OnUnconnectedRailsBothEndsMoveToACommonRail) {
  TempDir dir;
  // Two rails, each its own leaf-spine (2 leaves, 1 spine); NIC r of every host is on rail r, and
  // the rails do not meet. host-0's rail-0 link dies: its NIC 1 cannot reach host-1's NIC 0, so
  // the connection moves to NIC 1 -> NIC 1 (global NICs 1 and 3). The same bounds as above hold:
  // the rail-1 path has the same 4 links.
  std::string topo = topology(1, 2, true, "  - {at: 100us, action: down, link: [host-0, rail0-leaf-0]}\n");
  const std::string ls = "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 1}";
  topo.replace(topo.find(ls), ls.size(),
               "topology: {kind: rail-optimized, rails: 2, shared_spines: false, rail: {kind: leaf-spine, "
               "leaves: 2, spines: 1, hosts_per_leaf: 1}}");
  for (const char* backend : {"packet", "flow", "hybrid"}) {
    const Outcome r = run(dir, topo, incast(1, 2), backend);
    const auto& j = r.results;
    ASSERT_EQ(j["status"], "completed") << backend << " " << j["failures"].dump();
    EXPECT_EQ(j["network"]["goodput_bytes"].get<double>(), kBytes) << backend;
    EXPECT_EQ(j["network"]["nic_failovers"], 1) << backend;
    const double jct = j["jobs"][0]["jct_s"].get<double>();
    EXPECT_GE(jct, kBytes / kRate + kRto - kPacket) << backend;
    EXPECT_LE(jct, kBytes / kRate + kRto + 20e-6) << backend;
    EXPECT_GE(r.nic1Bytes, kBytes - kRate * kFail - 4096) << backend;
  }
}

TEST(HostFailure, WithoutFailoverTheRunFailsNamingTheLostTransferAfterItsRetries) {
  TempDir dir;
  // Retries: timeouts after 100, 200, 400 and 800 us; the fourth, after 3 retries, fails the QP:
  // 1.5 ms after its last progress (the failure in the flow backend; within a packet time before
  // it at packet level, where the last ACK arrived just before the link died).
  const double giveUp = kFail + 100e-6 + 200e-6 + 400e-6 + 800e-6;
  const std::string topo = topology(1, 2, false, "  - {at: 100us, action: down, nic: host-0/0}\n");
  for (const char* backend : {"packet", "flow", "hybrid"}) {
    const Outcome r = run(dir, topo, incast(1, 2), backend);
    const auto& j = r.results;
    ASSERT_EQ(j["status"], "failed") << backend;
    ASSERT_EQ(j["failures"].size(), 1u) << backend;
    const auto& f = j["failures"][0];
    EXPECT_EQ(f["kind"], "nic_down") << backend;
    EXPECT_EQ(f["src_gpus"], nlohmann::json::array({0})) << backend;
    EXPECT_EQ(f["dst_gpus"], nlohmann::json::array({2})) << backend;
    EXPECT_EQ(f["src_nic"], 0) << backend;
    EXPECT_EQ(f["dst_nic"], 2) << backend;
    EXPECT_EQ(f["source"], "host-0 nic 0") << backend;
    EXPECT_EQ(f["transfers_failed"], 1) << backend;
    EXPECT_EQ(f["retries"], 3) << backend;
    EXPECT_NE(f["message"].get<std::string>().find("nic.failover is off"), std::string::npos) << backend;
    EXPECT_LE(f["at_s"].get<double>(), giveUp + 1e-12) << backend;
    EXPECT_GE(f["at_s"].get<double>(), giveUp - kPacket) << backend;
    EXPECT_EQ(j["network"]["nic_failovers"], 0) << backend;
  }
}

TEST(HostFailure, AHostLinkDownWithOneNicPerHostLosesExactlyItsTransfer) {
  TempDir dir;
  // 4 hosts of one GPU and one NIC (host-0, host-1 on leaf-0). GPUs 1 and 2 each send 4 MiB to
  // GPU 0; host-1's only link dies at 100 us. Failover is on but host-1 has no other NIC: its
  // transfer is lost (found at its fourth timeout, 1.5 ms later), while 2 -> 0 finishes first
  // (alone on host-0's link after 100 us, by 100 us + 4 MiB / R < 0.5 ms).
  const std::string topo = topology(2, 1, true, "  - {at: 100us, action: down, link: [host-1, leaf-0]}\n");
  for (const char* backend : {"packet", "flow", "hybrid"}) {
    const Outcome r = run(dir, topo, incast(2, 0), backend);
    const auto& j = r.results;
    ASSERT_EQ(j["status"], "failed") << backend;
    ASSERT_EQ(j["failures"].size(), 1u) << backend;
    const auto& f = j["failures"][0];
    EXPECT_EQ(f["kind"], "nic_down") << backend;
    EXPECT_EQ(f["src_gpus"], nlohmann::json::array({1})) << backend;
    EXPECT_EQ(f["dst_gpus"], nlohmann::json::array({0})) << backend;
    EXPECT_EQ(f["source"], "host-1") << backend;
    EXPECT_EQ(f["destination"], "host-0") << backend;
    EXPECT_EQ(f["transfers_failed"], 1) << backend;
    EXPECT_NE(f["message"].get<std::string>().find("no other NIC of host-1"), std::string::npos) << backend;
    ASSERT_EQ(r.records.size(), 2u) << backend;
    for (const FlowRecord& rec : r.records) {
      if (rec.srcGpu == 1) {
        EXPECT_TRUE(rec.failed && !rec.done()) << backend;
      }
      if (rec.srcGpu == 2) {
        EXPECT_TRUE(rec.done() && !rec.failed) << backend;
      }
    }
  }
}

TEST(HostFailure, AFlappingHostLinkCostsItsDownTimeAndATimeoutPerDown) {
  TempDir dir;
  // host-0's only link is down 100-150 us and 250-300 us, inside the ~342 us transfer. Nothing
  // crosses it while down, so JCT >= S/R + 100 us; each down costs at most the time until the
  // timer after the last progress fires (the RTO, longer than the 50 us down) and a round trip,
  // so JCT <= S/R + 2 x (RTO + 10 us) + 5 us of path latency.
  const std::string topo = topology(
      1, 1, false,
      "  - {at: 100us, action: flap, link: [host-0, leaf-0], down_for: 50us, up_for: 100us, count: 2}\n");
  for (const char* backend : {"packet", "flow", "hybrid"}) {
    const Outcome r = run(dir, topo, incast(1, 1), backend);
    const auto& j = r.results;
    ASSERT_EQ(j["status"], "completed") << backend << " " << j["failures"].dump();
    EXPECT_EQ(j["network"]["goodput_bytes"].get<double>(), kBytes) << backend;
    const double jct = j["jobs"][0]["jct_s"].get<double>();
    EXPECT_GE(jct, kBytes / kRate + 100e-6) << backend;
    EXPECT_LE(jct, kBytes / kRate + 2 * (kRto + 10e-6) + 5e-6) << backend;
    if (std::string(backend) == "packet") {
      const auto& n = j["network"];
      EXPECT_EQ(n["bytes_sent"].get<int64_t>(),
                n["bytes_delivered"].get<int64_t>() + n["bytes_dropped"].get<int64_t>());
    }
  }
}

TEST(HostFailure, BadNicAndHostLinkFailuresExitTwoWithFileLineAndKey) {
  TempDir dir;
  const std::string work = dir.write("work.yaml", incast(1, 2));
  struct Case {
    std::string failure, expect;
  };
  const Case cases[] = {
      {"  - {at: 10us, action: down, nic: host-9/0}\n", "no host named 'host-9'"},
      {"  - {at: 10us, action: down, nic: host-0/2}\n", "expected a NIC index from 0 to 1"},
      {"  - {at: 10us, action: down, nic: host-0}\n", "expected a NIC as 'host-<i>/<n>'"},
      {"  - {at: 10us, action: down, nic: host-0/0, link: [host-0, leaf-0]}\n", "exactly one of"},
      {"  - {at: 10us, action: down, link: [host-0, leaf-1]}\n", "share no link"},
  };
  for (const Case& c : cases) {
    const std::string topo = dir.write("bad.yaml", topology(1, 2, true, c.failure));
    const CliResult r = runFabricsim("run '" + topo + "' --workload '" + work + "' --quiet", "2>&1");
    EXPECT_EQ(r.status, 2) << c.failure << r.out;
    EXPECT_NE(r.out.find("bad.yaml:9"), std::string::npos) << c.failure << r.out;
    EXPECT_NE(r.out.find("failures[0]"), std::string::npos) << c.failure << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.failure << r.out;
  }
}
