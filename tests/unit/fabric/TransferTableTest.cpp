// TransferTable: slots freed at delivery and reused, so the table holds the transfers in flight
// rather than every transfer made; counts and statistics by counting what the test did.
#include <gtest/gtest.h>

#include "sim/core/Error.h"
#include "sim/fabric/Fabric.h"
#include "sim/fabric/TransferTable.h"

namespace fabricsim {
namespace {

using namespace fabricsim::literals;

FlowRecord transfer(Time start, Time ideal, bool nvlink = false) {
  FlowRecord r;
  r.bytes = 1000;
  r.start = start;
  r.ideal = ideal;
  r.intraHost = nvlink;
  return r;
}

struct Log : TransferObserver {
  std::vector<uint64_t> tags;
  void onTransferDelivered(uint64_t tag, Time) override { tags.push_back(tag); }
};

TEST(TransferTable, SlotsAreReusedSoTheTableHoldsOnlyTransfersInFlight) {
  // 10,000 transfers, never more than 3 in flight: 3 slots, whatever the total.
  TransferTable t;
  Log log;
  std::vector<uint32_t> open;
  for (uint64_t i = 0; i < 10000; ++i) {
    if (open.size() == 3) {
      const auto w = t.deliver(open.front(), Time::us(static_cast<int64_t>(i)));
      w.observer->onTransferDelivered(w.tag, Time::zero());
      open.erase(open.begin());
    }
    open.push_back(t.open(transfer(Time::us(static_cast<int64_t>(i)), 1_us), i, &log));
  }
  EXPECT_EQ(t.slots(), 3u);
  EXPECT_EQ(t.started(), 10000u);
  EXPECT_EQ(t.delivered(), 9997u);
  EXPECT_EQ(t.inFlight(), 3u);
  EXPECT_THROW(t.records(), SimError);  // records are kept only when asked for
  // Delivered in request order, each told once with its own tag.
  ASSERT_EQ(log.tags.size(), 9997u);
  for (uint64_t i = 0; i < log.tags.size(); ++i) EXPECT_EQ(log.tags[i], i);
  // Each waited 3 us (delivered when the third next one started) against 1 us alone.
  const TransferStats::Category& net = t.stats().network();
  EXPECT_EQ(net.count(), 9997u);
  EXPECT_NEAR(net.fctUs.mean(), 3.0, 1e-9);
  EXPECT_NEAR(net.slowdown.max(), 3.0, 1e-9);
  EXPECT_EQ(t.stats().nvlink().count(), 0u);
}

TEST(TransferTable, KeepAllKeepsEveryRecordInRequestOrder) {
  TransferTable t;
  t.keepAll(true);
  const uint32_t a = t.open(transfer(0_us, 1_us), 1, nullptr);
  t.deliver(a, 2_us);
  const uint32_t b = t.open(transfer(3_us, 1_us, true), 2, nullptr);
  EXPECT_NE(a, b);  // no reuse
  ASSERT_EQ(t.records().size(), 2u);
  EXPECT_EQ(t.records()[0].id, 0u);
  EXPECT_EQ(t.records()[1].id, 1u);
  EXPECT_TRUE(t.records()[0].done());
  EXPECT_EQ(t.records()[0].fct(), 2_us);
  EXPECT_FALSE(t.records()[1].done());
}

TEST(TransferTable, FailedTransfersKeepTheirSlotAndAreCountedApart) {
  TransferTable t;
  const uint32_t a = t.open(transfer(0_us, 1_us), 1, nullptr);
  const uint32_t b = t.open(transfer(0_us, 1_us, true), 2, nullptr);
  t.fail(a);
  EXPECT_FALSE(t.isOpen(a));
  EXPECT_TRUE(t.record(a).failed);
  t.deliver(b, 4_us);
  const uint32_t c = t.open(transfer(5_us, 1_us), 3, nullptr);
  EXPECT_EQ(c, b);  // the delivered one's slot, never the failed one's
  EXPECT_EQ(t.failed(), 1u);
  EXPECT_EQ(t.delivered(), 1u);
  EXPECT_EQ(t.inFlight(), 1u);
  int open = 0;
  t.forEachOpen([&](uint32_t s, const FlowRecord&) {
    EXPECT_EQ(s, c);
    ++open;
  });
  EXPECT_EQ(open, 1);
  // The NVLink transfer is counted as such: 4 us against 1 us alone.
  EXPECT_EQ(t.stats().nvlink().count(), 1u);
  EXPECT_NEAR(t.stats().nvlink().slowdown.max(), 4.0, 1e-9);
  EXPECT_EQ(t.stats().all().count(), 1u);
}

}  // namespace
}  // namespace fabricsim
