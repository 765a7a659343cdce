// Watchdogs (issue 16 item 6): a NIC whose receive path hangs sends PAUSE frames without a break
// (failures: pfc-storm). Without a PFC storm watchdog the PAUSE spreads upstream and blocks
// flows that never go near that NIC until the storm ends; with one the leaf stops honouring it,
// drops what is queued for that host, and the other flows finish as if nothing happened. A storm
// that never ends leaves packets queued with nothing delivered: the no-progress watchdog stops
// the run and names the stuck ports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/runtime/Experiment.h"

using namespace fabricsim;

namespace {

nlohmann::json run(const std::vector<std::string>& sets) {
  RunOptions o;
  o.topologyPath = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/leafspine-16.yaml";
  o.workloadPaths = {std::string(FABRICSIM_SOURCE_DIR) + "/workloads/permutation-1mib.yaml"};
  o.progress = false;
  o.sets = sets;
  Experiment e(o);
  e.run();
  return e.results();
}

const std::string kPfc = "switch.pfc={enabled: true, xoff: 60KB, xon: 48KB, classes: [0]";

/// The finish time of every flow that does not go to host 3, and of the one that does.
struct Finishes {
  double victimsMaxUs = 0;
  double toStormUs = 0;
};

}  // namespace

TEST(PfcWatchdog, StormWatchdogKeepsOtherFlowsMovingAndDropsOnlyTheStormedClass) {
  // Storm from 10 us to 3 ms. Alone, every 1 MiB flow needs about 90 us (1 MiB at 100 Gb/s plus
  // a few hops); the permutation on this 1:1 fabric finishes well under 1 ms without the storm.
  const std::string storm =
      "failures=[{at: 10us, action: pfc-storm, host: host-3}, "
      "{at: 3ms, action: pfc-storm-end, host: host-3}]";
  const nlohmann::json none = run({kPfc + "}", storm});
  const nlohmann::json guarded =
      run({kPfc + ", storm_watchdog: {detection: 200us, restoration: 200us}}", storm});
  for (const auto* r : {&none, &guarded}) {
    EXPECT_EQ((*r)["status"], "completed");
    EXPECT_EQ((*r)["network"]["lossless_drops"].get<uint64_t>(), 0u);
    EXPECT_EQ((*r)["network"]["goodput_bytes"].get<int64_t>(), 16LL * 1024 * 1024);
  }
  // Unguarded: the storm spreads (pauses propagate) and some flow that does not end at host 3 is
  // held until the storm is over (3 ms). p90 covers 14 of the 16 flows: at least one victim.
  EXPECT_GT(none["network"]["pfc_pause_propagated"].get<uint64_t>(), 0u);
  EXPECT_GT(none["flows"]["fct_us"]["p90"].get<double>(), 3000.0);
  EXPECT_EQ(none["network"]["pfc_watchdog"]["storms"].get<uint64_t>(), 0u);
  // Guarded: detection after 200 us of unbroken pause; packets of the stormed class are dropped
  // (not lossless violations: the watchdog's policy), every other flow finishes before the storm
  // would have released it: all but the flow to host 3 under 1 ms.
  EXPECT_GE(guarded["network"]["pfc_watchdog"]["storms"].get<uint64_t>(), 1u);
  EXPECT_GT(guarded["network"]["pfc_watchdog"]["packets_dropped"].get<uint64_t>(), 0u);
  EXPECT_LT(guarded["flows"]["fct_us"]["p90"].get<double>(), 1000.0);
  // The flow into host 3 completes only after the storm ends (3 ms) and the leaf restores PFC.
  EXPECT_GT(guarded["flows"]["fct_us"]["max"].get<double>(), 3000.0);
}

TEST(PfcWatchdog, NoProgressWatchdogStopsAnEndlessStormAndNamesTheStuckPort) {
  const nlohmann::json r = run({kPfc + "}", "failures=[{at: 10us, action: pfc-storm, host: host-3}]",
                                "watchdog={interval: 500us, no_progress: 5ms}"});
  EXPECT_EQ(r["status"], "failed");
  ASSERT_EQ(r["failures"].size(), 1u);
  const auto& f = r["failures"][0];
  EXPECT_EQ(f["kind"], "no_progress");
  // Nothing can arrive after the last delivery; the check runs every 500 us, so it fires between
  // 5 ms and 5.5 ms after that delivery (which is before 1 ms here).
  const double at = f["at_s"].get<double>();
  EXPECT_GE(at, 5e-3);
  EXPECT_LE(at, 6.5e-3);
  const std::string msg = f["message"].get<std::string>();
  EXPECT_NE(msg.find("leaf-0 port 3 -> host-3"), std::string::npos) << msg;  // the storm's victim port
  EXPECT_NE(msg.find("paused since"), std::string::npos) << msg;
  EXPECT_GT(f["transfers_failed"].get<uint64_t>(), 0u);
}
