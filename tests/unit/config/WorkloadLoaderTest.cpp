// WorkloadLoader: the pattern schema and its diagnostics.
#include "sim/config/WorkloadLoader.h"

#include <gtest/gtest.h>

#include "sim/config/SpecJson.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml) {
  try {
    parseWorkloadYaml(yaml, "w.yaml");
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

TEST(WorkloadLoaderTest, ReadsPattern) {
  const WorkloadSpec w = parseWorkloadYaml(
      "kind: pattern\npattern: incast\nmessage_size: 2MB\nstart: 10us\nrepetitions: 3\ngap: 1us\n"
      "incast: {senders: 16, receiver: 5}\ntraffic_class: 3\ngpus: {first: 8, count: 32}\nqps_per_pair: 4\n",
      "dir/incast-x.yaml");
  EXPECT_EQ(w.name, "incast-x");
  EXPECT_EQ(w.pattern.pattern, PatternKind::Incast);
  EXPECT_EQ(w.pattern.messageSize, 2'000'000);
  EXPECT_EQ(w.pattern.start, Time::us(10));
  EXPECT_EQ(w.pattern.repetitions, 3);
  EXPECT_EQ(w.pattern.incastSenders, 16);
  EXPECT_EQ(w.pattern.incastReceiver, 5u);
  EXPECT_EQ(w.pattern.trafficClass, 3);
  EXPECT_EQ(w.pattern.firstGpu, 8u);
  EXPECT_EQ(w.pattern.gpus, 32u);
  EXPECT_EQ(w.pattern.qpsPerPair, 4);
  EXPECT_EQ(toJson(w)["incast"]["receiver"], 5);
}

TEST(WorkloadLoaderTest, UnsupportedKindIsClear) {
  const auto d = diagnosticsOf("kind: training\nmodel: gpt3-175b\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "kind");
  EXPECT_EQ(d[0].line, 1);
  EXPECT_NE(d[0].message.find("kind 'training' is not supported yet; supported: pattern"), std::string::npos);
}

TEST(WorkloadLoaderTest, ReportsEveryBadField) {
  const auto d = diagnosticsOf("kind: pattern\npattern: broadcast\nmessage_size: 1024\ntraffic_class: 9\nfoo: 1\n");
  ASSERT_EQ(d.size(), 4u);
  // In file order.
  EXPECT_EQ(d[0].key, "pattern");
  EXPECT_EQ(d[1].key, "message_size");
  EXPECT_EQ(d[2].key, "traffic_class");
  EXPECT_EQ(d[2].line, 4);
  EXPECT_EQ(d[3].key, "foo");
}

TEST(WorkloadLoaderTest, ExampleWorkloadsLoad) {
  for (const char* f : {"permutation-1mib.yaml", "permutation-2mb.yaml", "incast-16.yaml", "all-to-all-64k.yaml"}) {
    const WorkloadSpec w = loadWorkloadFile(std::string(FABRICSIM_SOURCE_DIR) + "/workloads/" + f);
    EXPECT_GT(w.pattern.messageSize, 0) << f;
  }
  EXPECT_EQ(loadWorkloadFile(std::string(FABRICSIM_SOURCE_DIR) + "/workloads/permutation-2mb.yaml").pattern.messageSize,
            2'000'000);
}

}  // namespace
}  // namespace fabricsim
