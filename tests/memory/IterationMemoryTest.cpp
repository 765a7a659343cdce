// Memory proportional to active work: the same training job run for 1 and for 3 iterations on
// the flow backend, in process, holds no more heap at its peak, nor after the run (nor in the
// backend's own tables), than one iteration plus a constant justified below, while keeping a record per
// transfer, as the backends did before, would exceed that constant. Counted in bytes of live
// heap (LiveHeap: exact and deterministic), never RSS or time.
#include <gtest/gtest.h>

#include <string>

#include "sim/flow/FlowFabric.h"
#include "sim/runtime/Experiment.h"
#include "tests/memory/LiveHeap.h"

namespace fabricsim {
namespace {

using testsupport::LiveHeap;

struct Footprint {
  size_t peakHeap = 0;     ///< peak live heap while building and running, above what was live before
  size_t liveAfter = 0;    ///< live heap after the run (the experiment still alive), likewise
  size_t fabricBytes = 0;  ///< FlowFabric::memoryBytes() after the run
  uint64_t transfers = 0;
  size_t slots = 0;           ///< the most transfer slots taken at once
  uint64_t peakInFlight = 0;  ///< the most transfers in flight at once
  double jct = 0;
};

Footprint run(int iterations) {
  RunOptions o;
  o.topologyPath = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/default.yaml";  // its 64-GPU job
  o.backend = "flow";
  o.progress = false;
  o.workloadSets = {"iterations=" + std::to_string(iterations)};
  const size_t before = LiveHeap::live();
  LiveHeap::resetPeak();
  Footprint f;
  {
    Experiment e(o);
    e.run();
    f.peakHeap = LiveHeap::peak() - before;
    f.liveAfter = LiveHeap::live() - before;
    f.fabricBytes = e.flowFabric()->memoryBytes();
    f.transfers = e.fabric().transfers().started();
    f.slots = e.fabric().transfers().slots();
    f.peakInFlight = e.fabric().transfers().peakInFlight();
    f.jct = e.results()["jobs"][0]["jct_s"].get<double>();
  }
  return f;
}

TEST(IterationMemory, ThreeIterationsHoldNoMoreThanOnePlusAConstant) {
  const Footprint one = run(1);
  const Footprint three = run(3);
  // The job really ran three times as long and made three times the transfers.
  ASSERT_EQ(three.transfers, 3 * one.transfers);
  ASSERT_GT(three.jct, 2.9 * one.jct);
  // What may legitimately grow with more iterations (the bound, fixed before any measurement):
  // - the FCT statistics: four QuantileSketches of at most ln(max/min)/ln(gamma) + 2 counters
  //   each, allocated up to twice over; FCTs from 1 us to 100 ms (5 decades) at alpha 0.5% are
  //   1,153 counters, so even a range the first iteration never reached costs at most
  //   4 x 2 x 1,153 x 8 B = 72 KiB;
  // - per-iteration figures: 12 B per iteration (the end time and a rank count);
  // - tables sized by the work in flight (transfer slots, solver flows, collective lanes, events,
  //   hash maps of pending collectives): a rank starts iteration i+1 while others finish i, so
  //   the peak in flight may exceed one iteration's, and a table may double its capacity once:
  //   at most 1 KiB per transfer in flight in one iteration across all of them.
  // Rounded up: 128 KiB + 1 KiB x (one iteration's peak of transfers in flight, counted as
  // transfers requested and not yet delivered, whatever the backend keeps).
  const size_t bound = 128 * 1024 + one.peakInFlight * 1024;
  EXPECT_LE(three.peakHeap, one.peakHeap + bound) << "peak heap " << one.peakHeap << " -> " << three.peakHeap;
  EXPECT_LE(three.liveAfter, one.liveAfter + bound)
      << "held after " << one.liveAfter << " -> " << three.liveAfter;
  EXPECT_LE(three.fabricBytes, one.fabricBytes + bound)
      << "fabric " << one.fabricBytes << " -> " << three.fabricBytes;
  EXPECT_LE(three.slots, 2 * one.peakInFlight);  // slots are reused, not one per transfer
  // The test can fail: a record per transfer (FlowRecord and its waiter, as before) for the two
  // extra iterations would alone exceed the bound.
  EXPECT_GT(2 * one.transfers * (sizeof(FlowRecord) + sizeof(TransferTable::Waiter)), bound);
}

}  // namespace
}  // namespace fabricsim
