// A spine-leaf link fails during a permutation on a BGP-routed leaf-spine (issue 4): BGP
// converges within the bound its timers imply, traffic stops using the failed link, nothing is
// lost after convergence, and every flow still completes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/runtime/Experiment.h"

using namespace fabricsim;

namespace {

nlohmann::json runWithFailure(const std::string& routing, const std::string& reorder) {
  RunOptions o;
  o.topologyPath = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/leafspine-64.yaml";
  o.workloadPaths = {std::string(FABRICSIM_SOURCE_DIR) + "/workloads/permutation-1mib.yaml"};
  o.progress = false;
  o.routing = routing;
  // BFD at 3 x 50 us, set explicitly: far faster than the 3 x 300 ms default, so that the run
  // and its bound stay short.
  o.sets = {"routing.control_plane=bgp",
            "routing.bgp={detection: bfd, bfd_interval: 50us, bfd_multiplier: 3, update_delay: 50us}",
            "nic.reorder=" + reorder, "failures=[{at: 20us, action: down, link: [leaf-0, spine-0]}]"};
  Experiment e(o);
  e.run();
  return e.results();
}

}  // namespace

TEST(RoutingFailure, BgpReconvergesAroundAFailedSpineLeafLink) {
  for (const auto& [routing, reorder] : {std::pair{"ecmp", "strict"}, std::pair{"adaptive", "tolerant"}}) {
    const nlohmann::json r = runWithFailure(routing, reorder);
    const auto& rt = r["routing"];
    ASSERT_EQ(rt["failures"].size(), 1u) << routing;
    const auto& f = rt["failures"][0];
    // Bound: BFD detection (3 x 50 us) + two hops (spine, then the other leaves) of update
    // processing (50 us) and link latency (1 us).
    const double bound = 150e-6 + 2 * (50e-6 + 1e-6);
    EXPECT_GT(f["convergence_time_s"].get<double>(), 150e-6 - 1e-9) << routing;  // not before detection
    EXPECT_LE(f["convergence_time_s"].get<double>(), bound + 1e-9) << routing;
    EXPECT_LT(f["ecmp_groups_after"]["mean"].get<double>(), f["ecmp_groups_before"]["mean"].get<double>());
    EXPECT_EQ(f["ecmp_groups_after"]["empty"].get<int>(), 1) << routing;  // spine-0 loses its way to leaf-0
    // Losses happen only between the failure and convergence.
    const double converged = f["last_fib_change_s"].get<double>();
    ASSERT_FALSE(rt["last_route_loss_s"].is_null()) << routing;
    EXPECT_GT(rt["bytes_lost_dead_links"].get<int64_t>(), 0) << routing;
    EXPECT_LE(rt["last_route_loss_s"].get<double>(), converged + 2e-6) << routing;  // + packets already in flight
    // BGP's own cost: 8 leaves x 8 spines are 128 directed sessions; at the start every leaf's
    // prefix crosses each of them once (the first route a switch hears is a shortest one, so its
    // best AS_PATH never changes and it announces each prefix once): 128 x 8 UPDATEs.
    const auto& bgp = rt["bgp"];
    EXPECT_EQ(bgp["start_updates_sent"].get<int64_t>(), 128 * 8) << routing;
    EXPECT_EQ(bgp["start_withdrawals_sent"].get<int64_t>(), 0) << routing;
    EXPECT_LE(bgp["start_last_fib_change_s"].get<double>(), rt["initial_convergence_s"].get<double>()) << routing;
    EXPECT_GT(bgp["memory_bytes"].get<int64_t>(), 0) << routing;
    EXPECT_GE(bgp["start_cpu_s"].get<double>(), 0.0) << routing;
    EXPECT_EQ(bgp["updates_sent"].get<int64_t>(), rt["bgp_updates_sent"].get<int64_t>()) << routing;
    // Every byte still arrives, and the job completes.
    const auto& n = r["network"];
    EXPECT_EQ(n["goodput_bytes"].get<int64_t>(), 64LL * 1024 * 1024) << routing;
    EXPECT_EQ(n["bytes_sent"].get<int64_t>(), n["bytes_delivered"].get<int64_t>() + n["bytes_dropped"].get<int64_t>());
    EXPECT_GT(r["jobs"][0]["jct_s"].get<double>(), 0.0);
  }
}
