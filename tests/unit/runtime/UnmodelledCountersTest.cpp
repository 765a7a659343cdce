// UnmodelledCounters on hand-written results documents: a group the backend does not model
// turns exactly its keys to null (every tier's for a "*"), lists them, and touches nothing else;
// a key missing from the document is a bug, reported.
#include "sim/runtime/UnmodelledCounters.h"

#include <gtest/gtest.h>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

nlohmann::json doc() {
  return nlohmann::json::parse(R"({
    "network": {"bytes_sent": 10, "ecn_marks": 0, "max_queue_bytes": 0, "queue_bytes": {"p50": 0},
                "queue_bytes_by_class": [], "top_queues": [],
                "per_tier": {"host-leaf up": {"util_mean": 0.5, "max_queue_bytes": 0, "queue_bytes": {"p99": 0}},
                             "leaf-spine up": {"util_mean": 0.25, "max_queue_bytes": 0, "queue_bytes": {"p99": 0}}}}})");
}

TEST(UnmodelledCountersTest, EverythingModelledListsNothingAndChangesNothing) {
  EXPECT_TRUE(UnmodelledCounters::keysFor(CounterCoverage{}).empty());
  nlohmann::json d = doc();
  UnmodelledCounters::apply(CounterCoverage{}, d);
  nlohmann::json expected = doc();
  expected["unmodelled"] = nlohmann::json::array();
  EXPECT_EQ(d, expected);
}

TEST(UnmodelledCountersTest, AnUnmodelledGroupIsNullInEveryTierAndListedOnce) {
  CounterCoverage m;
  m.queues = false;
  nlohmann::json d = doc();
  UnmodelledCounters::apply(m, d);
  // By hand: the queue keys of the network section and of both tiers are null; the rest stays.
  nlohmann::json expected = doc();
  for (const char* k : {"max_queue_bytes", "queue_bytes", "queue_bytes_by_class", "top_queues"})
    expected["network"][k] = nullptr;
  for (const char* t : {"host-leaf up", "leaf-spine up"})
    for (const char* k : {"max_queue_bytes", "queue_bytes"}) expected["network"]["per_tier"][t][k] = nullptr;
  expected["unmodelled"] = {"network.max_queue_bytes",
                            "network.queue_bytes",
                            "network.queue_bytes_by_class",
                            "network.top_queues",
                            "network.per_tier.*.max_queue_bytes",
                            "network.per_tier.*.queue_bytes"};
  EXPECT_EQ(d, expected);
}

TEST(UnmodelledCountersTest, AListedKeyMissingFromTheResultsIsABug) {
  CounterCoverage m;
  m.ecnMarks = false;  // network.per_tier.*.ecn_marks is not in doc()
  nlohmann::json d = doc();
  EXPECT_THROW(UnmodelledCounters::apply(m, d), SimError);
}

}  // namespace
}  // namespace fabricsim
