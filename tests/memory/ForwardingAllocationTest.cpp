// The packet engine allocates nothing per packet (issue 22): on a 2:1-oversubscribed leaf-spine
// with PFC, every host sends one long transfer to a host on another leaf; after a warm-up, the
// run goes on for a window in which every transfer is still sending, while LiveHeap counts every
// call of operator new. What may still allocate there is growth to a new high-water mark (a queue
// or wire ring doubling, a port's first PAUSE state, an event lane's ring), a few per hundred
// thousand frames and fewer as the run goes on; what must not is anything per packet.
// Tolerance, set from the patterns it must catch, not from the result: fewer than one allocation
// per 1,000 packets the NICs send. A per-packet allocation gives 1,000 or more; the std::deque the
// NICs' active lists used to be allocated a block per 128 pulls, about 4 per 1,000 packets sent
// (a data packet and its ACK per pull).
// The transfers (32 MiB, over 2.6 ms at line rate) do not complete in the window, so the
// completion path (records, callbacks), which may allocate, is not part of the count.
#include <gtest/gtest.h>

#include <cstdint>

#include "sim/packet/PacketFabric.h"
#include "tests/memory/LiveHeap.h"
#include "tests/support/PacketBench.h"

namespace fabricsim {
namespace {

using testsupport::DeliveryLog;
using testsupport::LiveHeap;
using testsupport::PacketBench;

TEST(ForwardingAllocation, NothingAllocatedPerPacket) {
  TopologySpec spec = testsupport::leafSpineSpec(4, 2, 4);  // 16 hosts; 4 x 100G down, 2 x 100G up per leaf
  spec.sw.pfc.enabled = true;
  spec.sw.pfc.xoff = 60 * 1000;
  spec.sw.pfc.xon = 48 * 1000;
  PacketBench b(spec);
  DeliveryLog log;
  constexpr uint32_t kHosts = 16;
  for (uint32_t i = 0; i < kHosts; ++i) {
    TransferRequest r;
    r.srcGpu = i;
    r.dstGpu = (i + 4) % kHosts;  // the next leaf: every transfer crosses the spines
    r.bytes = 32ull << 20;
    r.tag = i;
    b.fabric.send(r, &log);
  }
  b.sim.run(Time::us(1500));  // warm-up
  const PacketCounters before = b.fabric.counters();
  const size_t allocations0 = LiveHeap::allocations();
  b.sim.run(Time::us(2700));
  const size_t allocations = LiveHeap::allocations() - allocations0;
  const PacketCounters& after = b.fabric.counters();
  const uint64_t sent = after.packetsSent - before.packetsSent;
  // The window really forwarded and paused: 16 hosts for 1.2 ms at about half their line rate
  // (the uplinks are shared 2:1) in 4,096-byte frames is some 30,000 data packets.
  EXPECT_GT(sent, 20000u);
  EXPECT_GT(after.pfcPauseFrames, before.pfcPauseFrames) << "the window should exercise PFC";
  EXPECT_TRUE(log.at.empty()) << "a transfer completed inside the window";
  EXPECT_LT(allocations * 1000, sent)
      << "operator new called " << allocations << " times for " << sent << " packets sent";
}

}  // namespace
}  // namespace fabricsim
