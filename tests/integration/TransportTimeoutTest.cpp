// Transport timeouts as NICs do them (issue 16): a connection whose only path is dead times out
// on its technology's schedule and fails after its retries, ending the run; progress (an ACK that
// advances the oldest unacknowledged PSN) resets both the backoff and the retry counter.
//
// Fabric: 2 leaves, 1 spine, 2 hosts per leaf (host-0, host-1 on leaf-0; host-2, host-3 on
// leaf-1). The leaf-1 -> host-3 direction is taken down, so every data packet to host-3 is lost
// at the dead link and host-3 sends no ACK. A loss there involves no credits (the leaf forwarded
// the packet, which returns its upstream credit; a port facing a host has none), so the
// InfiniBand case does not depend on credit recovery. host-1 -> host-2 avoids the dead link.
//
// Expected times are sums of the timeout schedule computed here from the settings, and, where a
// packet must cross the fabric, the same transfer's delivery time on a healthy copy of the fabric
// (time-shift invariance: the same packet on an idle fabric takes the same time whenever it is
// sent). Every comparison is exact to the picosecond: the simulator's clock is integer
// picoseconds and every term is an integer number of picoseconds, so no tolerance is needed.
#include <gtest/gtest.h>

#include <numeric>
#include <ostream>
#include <vector>

#include "tests/support/PacketBench.h"

namespace fabricsim {
// Readable Time values in failure messages.
void PrintTo(const Time& t, std::ostream* os) {
  *os << t.picos() << " ps";
}
}  // namespace fabricsim

using namespace fabricsim;
using namespace fabricsim::testsupport;

namespace {

constexpr uint32_t kSrc = 0, kDst = 3, kOtherSrc = 1, kOtherDst = 2;

TopologySpec fabricSpec(const std::string& technology) {
  TopologySpec s = leafSpineSpec(2, 1, 2, technology);
  if (technology == "infiniband") {
    s.nic.reorder = "tolerant";  // as the loader sets it for InfiniBand
    s.sw.pfc.enabled = false;
  }
  return s;
}

/// The leaf's port that transmits toward host `h` (one NIC per host).
PortId leafPortToward(const PacketBench& b, uint32_t h) {
  return b.topo->peerPort(b.topo->nicPort(h));
}

void send(PacketBench& b, DeliveryLog& log, uint32_t src, uint32_t dst, Bytes bytes, uint64_t tag) {
  TransferRequest r;
  r.srcGpu = src;
  r.dstGpu = dst;
  r.bytes = bytes;
  r.tag = tag;
  b.fabric.send(r, &log);
}

/// When a transfer of `bytes` from src to dst sent at time 0 is delivered on a healthy fabric.
Time healthyDelivery(const TopologySpec& s, uint32_t src, uint32_t dst, Bytes bytes) {
  PacketBench b(s);
  DeliveryLog log;
  send(b, log, src, dst, bytes, 1);
  b.sim.run();
  EXPECT_EQ(log.at.count(1), 1u);
  return log.at.count(1) ? log.at[1] : Time::zero();
}

/// initial x backoff^k capped at cap, for k = 0..n-1, computed independently of NicParams.
std::vector<Time> roceSchedule(Time initial, int64_t backoff, Time cap, int n) {
  std::vector<Time> out;
  Time t = initial;
  for (int k = 0; k < n; ++k) {
    out.push_back(std::min(t, cap));
    t = t * backoff;
  }
  return out;
}

Time sum(const std::vector<Time>& v) {
  return std::accumulate(v.begin(), v.end(), Time::zero());
}

}  // namespace

TEST(TransportTimeout, RoceBacksOffToItsCapAndFailsAfterItsRetries) {
  TopologySpec s = fabricSpec("roce");
  s.nic.retransmitTimeout = Time::us(10);
  s.nic.rtoBackoff = 2;
  s.nic.maxRto = Time::us(35);
  s.nic.retryLimit = 4;
  PacketBench b(s);
  b.fabric.mutablePort(leafPortToward(b, kDst)).setUp(false);
  DeliveryLog log;
  send(b, log, kSrc, kDst, 4096, 1);  // two one-packet messages on the same QP, both lost
  send(b, log, kSrc, kDst, 4096, 2);
  send(b, log, kOtherSrc, kOtherDst, 4096, 3);  // another connection, on a healthy path
  b.sim.run();

  // Timeouts after 10, 20, 35 (40 capped), 35, 35 us: the fifth, after 4 retries, fails the QP.
  const Time fail = sum(roceSchedule(Time::us(10), 2, Time::us(35), 5));
  ASSERT_EQ(fail, Time::us(135));
  EXPECT_EQ(b.sim.now(), fail);  // the run ended at the failure
  const auto failures = b.fabric.failures();
  ASSERT_EQ(failures.size(), 1u);
  const TransferFailure& f = failures[0];
  EXPECT_EQ(f.kind, TransferFailure::Kind::RetryExceeded);
  EXPECT_EQ(f.at, fail);
  EXPECT_EQ(f.source, "host-0");
  EXPECT_EQ(f.destination, "host-3");
  EXPECT_EQ(f.retries, 4);
  EXPECT_EQ(f.transfers, 2u);
  EXPECT_NE(f.message.find("host-0 -> host-3"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("4 retries"), std::string::npos) << f.message;
  const auto& recs = b.fabric.flowRecords();
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_TRUE(recs[0].failed && !recs[0].done());
  EXPECT_TRUE(recs[1].failed && !recs[1].done());
  EXPECT_TRUE(recs[2].done() && !recs[2].failed);  // the healthy connection is not affected
  EXPECT_EQ(log.at.count(1) + log.at.count(2), 0u);
  // Five expiries; each of the 4 retries resent both packets; all 10 sends died on the dead link.
  const PacketCounters& c = b.fabric.counters();
  EXPECT_EQ(c.timeouts, 5u);
  EXPECT_EQ(c.retransmittedBytes, 4u * 2 * 4096);
  EXPECT_EQ(c.deadLinkPackets, 5u * 2);
}

TEST(TransportTimeout, InfinibandWaitsTheLocalAckTimeoutEachTimeAndFailsAfterRetryCount) {
  TopologySpec s = fabricSpec("infiniband");
  s.nic.localAckTimeout = 3;  // 4.096 us x 2^3 = 32.768 us, every time (the IBTA has no backoff)
  s.nic.retryCount = 2;       // RoCE settings stay at their defaults (1 ms, x2): they must not apply
  PacketBench b(s);
  b.fabric.mutablePort(leafPortToward(b, kDst)).setUp(false);
  DeliveryLog log;
  send(b, log, kSrc, kDst, 8192, 1);
  send(b, log, kOtherSrc, kOtherDst, 8192, 2);
  b.sim.run();

  const Time localAck = Time::ps(4'096'000) * 8;
  const Time fail = localAck * 3;  // the first timeout and two retries' timeouts
  ASSERT_EQ(fail, Time::ps(98'304'000));
  EXPECT_EQ(b.sim.now(), fail);
  const auto failures = b.fabric.failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].at, fail);
  EXPECT_EQ(failures[0].retries, 2);
  EXPECT_EQ(failures[0].transfers, 1u);
  EXPECT_EQ(failures[0].source, "host-0");
  EXPECT_EQ(failures[0].destination, "host-3");
  EXPECT_TRUE(b.fabric.flowRecords()[0].failed);
  EXPECT_TRUE(b.fabric.flowRecords()[1].done());
  EXPECT_EQ(b.fabric.counters().timeouts, 3u);
}

TEST(TransportTimeout, InfiniteLocalAckTimeoutStallsAndTheStallIsReported) {
  TopologySpec s = fabricSpec("infiniband");
  s.nic.localAckTimeout = 0;  // IBTA: 0 disables the timer
  PacketBench b(s);
  b.fabric.mutablePort(leafPortToward(b, kDst)).setUp(false);
  DeliveryLog log;
  send(b, log, kSrc, kDst, 4096, 1);
  b.sim.run();  // nothing times out: the queue drains with the transfer outstanding
  EXPECT_TRUE(b.fabric.failures().empty());
  EXPECT_EQ(b.fabric.counters().timeouts, 0u);
  EXPECT_FALSE(b.fabric.flowRecords()[0].done());
  ASSERT_EQ(b.fabric.failStalledConnections(), 1u);
  const auto failures = b.fabric.failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].kind, TransferFailure::Kind::Stalled);
  EXPECT_NE(failures[0].message.find("infinite"), std::string::npos) << failures[0].message;
  EXPECT_TRUE(b.fabric.flowRecords()[0].failed);
}

TEST(TransportTimeout, ALinkBackBeforeTheRetriesRunOutLetsTheTransferComplete) {
  TopologySpec s = fabricSpec("roce");
  s.nic.retransmitTimeout = Time::us(10);
  s.nic.rtoBackoff = 2;
  s.nic.maxRto = Time::ms(1);
  s.nic.retryLimit = 3;
  const Time healthy = healthyDelivery(s, kSrc, kDst, 4096);
  PacketBench b(s);
  EgressPort& dead = b.fabric.mutablePort(leafPortToward(b, kDst));
  dead.setUp(false);
  DeliveryLog log;
  send(b, log, kSrc, kDst, 4096, 1);
  // Timeouts at 10 and 30 us; the link returns at 50 us, before the third at 70 us, whose
  // retransmission then crosses an idle fabric exactly as the first send would have.
  b.sim.run(Time::us(50));
  dead.setUp(true);
  b.sim.run();
  const Time retransmitted = sum(roceSchedule(Time::us(10), 2, Time::ms(1), 3));
  ASSERT_EQ(retransmitted, Time::us(70));
  ASSERT_EQ(log.at.count(1), 1u);
  EXPECT_EQ(log.at[1], retransmitted + healthy);
  EXPECT_TRUE(b.fabric.failures().empty());
  EXPECT_EQ(b.fabric.counters().timeouts, 3u);
}

TEST(TransportTimeout, ProgressResetsTheBackoffAndTheRetryCounter) {
  // Window of one packet: the second packet of an 8 KiB message leaves only when the first is
  // acknowledged. The first is lost until the link returns (timeouts at 10, 30, 70 us, the
  // third with the backoff at 40 us and the next armed 80 us later); its ACK is progress, so the
  // second packet, lost again on a link that went back down, times out 10, 20, 40, 80 us after
  // it left (a fresh backoff) and its QP fails after 3 fresh retries: 150 us after that ACK.
  TopologySpec s = fabricSpec("roce");
  s.nic.retransmitTimeout = Time::us(10);
  s.nic.rtoBackoff = 2;
  s.nic.maxRto = Time::ms(1);
  s.nic.retryLimit = 3;
  s.nic.window = 4096;
  const Time onePacket = healthyDelivery(s, kSrc, kDst, 4096);
  // On a healthy fabric the second packet leaves when the first's ACK arrives and then takes
  // onePacket: so the first's ACK arrives (twoPackets - onePacket) after the first send.
  const Time ackOfFirst = healthyDelivery(s, kSrc, kDst, 8192) - onePacket;
  PacketBench b(s);
  EgressPort& dead = b.fabric.mutablePort(leafPortToward(b, kDst));
  dead.setUp(false);
  DeliveryLog log;
  send(b, log, kSrc, kDst, 8192, 1);
  b.sim.run(Time::us(50));
  dead.setUp(true);
  const Time firstResent = sum(roceSchedule(Time::us(10), 2, Time::ms(1), 3));  // 70 us
  b.sim.run(firstResent + onePacket);  // up to the first packet's delivery, then down again
  dead.setUp(false);
  b.sim.run();
  const Time secondSent = firstResent + ackOfFirst;
  const Time fail = secondSent + sum(roceSchedule(Time::us(10), 2, Time::ms(1), 4));
  const auto failures = b.fabric.failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].at, fail);
  EXPECT_EQ(failures[0].retries, 3);
  EXPECT_EQ(b.sim.now(), fail);
  EXPECT_EQ(b.fabric.counters().timeouts, 3u + 4u);
  EXPECT_TRUE(b.fabric.flowRecords()[0].failed);
}
