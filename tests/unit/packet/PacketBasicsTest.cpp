// PacketPool, PacketQueue, RoceFraming and the exact serialization arithmetic of Units.h.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"
#include "sim/packet/Packet.h"
#include "sim/packet/PacketPool.h"
#include "sim/packet/PacketQueue.h"
#include "sim/packet/PacketRing.h"
#include "sim/fabric/RoceFraming.h"

using namespace fabricsim;

TEST(PacketPool, AllocateReleaseReusesSlotsLifo) {
  PacketPool pool;
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.peak(), 0u);
  const uint32_t a = pool.allocate();
  const uint32_t b = pool.allocate();
  const uint32_t c = pool.allocate();
  EXPECT_EQ(std::set<uint32_t>({a, b, c}).size(), 3u);
  EXPECT_EQ(pool.live(), 3u);
  EXPECT_EQ(pool.peak(), 3u);
  EXPECT_EQ(pool.capacity(), 3u);
  pool.get(b).psn = 77;
  pool.get(b).wireBytes = 1234;
  pool.release(b);
  pool.release(a);
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.peak(), 3u);
  // LIFO: the last released comes back first, reset to a default packet.
  EXPECT_EQ(pool.allocate(), a);
  const uint32_t b2 = pool.allocate();
  EXPECT_EQ(b2, b);
  EXPECT_EQ(pool.get(b2).psn, 0u);
  EXPECT_EQ(pool.get(b2).wireBytes, 0u);
  EXPECT_EQ(pool.capacity(), 3u) << "reused slots must not grow the pool";
  EXPECT_EQ(pool.live(), 3u);
  const uint32_t d = pool.allocate();
  EXPECT_EQ(d, 3u);
  EXPECT_EQ(pool.peak(), 4u);
}

TEST(PacketPool, ReferencesStayValidAcrossGrowth) {
  PacketPool pool;
  constexpr uint32_t kCount = 3 * PacketPool::kChunkSize + 123;  // > 4096: several chunks
  std::vector<uint32_t> ids;
  std::vector<Packet*> refs;
  for (uint32_t i = 0; i < kCount; ++i) {
    const uint32_t id = pool.allocate();
    Packet& p = pool.get(id);
    p.psn = i;
    p.payload = i * 3;
    ids.push_back(id);
    refs.push_back(&p);
  }
  EXPECT_EQ(pool.live(), kCount);
  EXPECT_EQ(pool.peak(), kCount);
  EXPECT_EQ(pool.capacity(), kCount);
  EXPECT_EQ(std::set<uint32_t>(ids.begin(), ids.end()).size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(&pool.get(ids[i]), refs[i]) << "packet " << i << " moved when the pool grew";
    ASSERT_EQ(refs[i]->psn, i);
    ASSERT_EQ(refs[i]->payload, i * 3);
  }
  // Release every other packet, then allocate as many again: no growth, same storage.
  for (uint32_t i = 0; i < kCount; i += 2) pool.release(ids[i]);
  EXPECT_EQ(pool.live(), kCount / 2);
  std::set<uint32_t> released;
  for (uint32_t i = 0; i < kCount; i += 2) released.insert(ids[i]);
  for (size_t i = 0; i < released.size(); ++i) {
    const uint32_t id = pool.allocate();
    EXPECT_TRUE(released.count(id));
  }
  EXPECT_EQ(pool.capacity(), kCount);
  EXPECT_EQ(pool.live(), kCount);
  EXPECT_EQ(pool.peak(), kCount);
  for (uint32_t i = 1; i < kCount; i += 2) ASSERT_EQ(refs[i]->psn, i) << "live packet clobbered";
  // Growing past the peak again still keeps the old references.
  const uint32_t extra = pool.allocate();
  EXPECT_EQ(extra, kCount);
  EXPECT_EQ(pool.peak(), kCount + 1u);
  EXPECT_EQ(&pool.get(ids[1]), refs[1]);
}

TEST(PacketQueue, FifoOrderAndByteAccounting) {
  PacketQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.packets(), 0u);
  uint64_t total = 0;
  for (uint32_t i = 0; i < 10; ++i) {
    q.push(100 + i, 1000 + i);
    total += 1000 + i;
    EXPECT_EQ(q.bytes(), total);
    EXPECT_EQ(q.packets(), i + 1);
  }
  for (uint32_t i = 0; i < 5; ++i) {
    const PacketQueue::Entry e = q.pop();
    EXPECT_EQ(e.packet, 100 + i);
    EXPECT_EQ(e.wireBytes, 1000 + i);
    total -= 1000 + i;
    EXPECT_EQ(q.bytes(), total);
    EXPECT_EQ(q.packets(), 9 - i);
  }
  // Interleave pushes with the remaining pops (the ring wraps and grows): still FIFO.
  uint32_t nextIn = 110, nextOut = 105;
  for (int round = 0; round < 200; ++round) {
    for (int k = 0; k < 3; ++k) {
      q.push(nextIn, 4178);
      total += 4178;
      ++nextIn;
    }
    for (int k = 0; k < 2; ++k) {
      const PacketQueue::Entry e = q.pop();
      ASSERT_EQ(e.packet, nextOut);
      total -= e.wireBytes;
      ++nextOut;
    }
    ASSERT_EQ(q.bytes(), total);
    ASSERT_EQ(q.packets(), nextIn - nextOut);
  }
  while (!q.empty()) {
    ASSERT_EQ(q.pop().packet, nextOut);
    ++nextOut;
  }
  EXPECT_EQ(nextOut, nextIn);
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.packets(), 0u);
  // Reusable after draining.
  q.push(7, 86);
  EXPECT_EQ(q.bytes(), 86u);
  EXPECT_EQ(q.pop().packet, 7u);
  EXPECT_TRUE(q.empty());
}

TEST(PacketRing, GrowsWhileWrappedAndKeepsOrder) {
  PacketRing<uint32_t> r;
  EXPECT_TRUE(r.empty());
  // Fill to the initial capacity (4), consume 3 so head sits mid-buffer, then grow past it.
  for (uint32_t i = 0; i < 4; ++i) r.push(i);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(r.pop(), i);
  uint32_t in = 4, out = 3;
  for (; in < 40; ++in) r.push(in);
  EXPECT_EQ(r.size(), in - out);
  EXPECT_EQ(r.front(), out);
  while (!r.empty()) EXPECT_EQ(r.pop(), out++);
  EXPECT_EQ(out, in);
}

TEST(RoceFraming, WireBytes) {
  EXPECT_EQ(RoceFraming::dataWireBytes(4096), 4178u);
  EXPECT_EQ(RoceFraming::dataWireBytes(1024), 1024u + 82);
  EXPECT_EQ(RoceFraming::ackWireBytes(), 86u);
  // Headers + ICRC + FCS are 62 bytes: payloads below 2 bytes are padded to the 64-byte minimum
  // frame, plus preamble/SFD and inter-frame gap (20).
  EXPECT_EQ(RoceFraming::dataWireBytes(0), 64u + 20);
  EXPECT_EQ(RoceFraming::dataWireBytes(1), 64u + 20);
  EXPECT_EQ(RoceFraming::dataWireBytes(2), 64u + 20);
  EXPECT_EQ(RoceFraming::dataWireBytes(3), 65u + 20);
  EXPECT_EQ(RoceFraming::frameOnWire(10), 84u);
  EXPECT_EQ(RoceFraming::frameOnWire(64), 84u);
  EXPECT_EQ(RoceFraming::frameOnWire(1500), 1520u);
}

TEST(Units, SerializationTimeIsExactAndRoundsUp) {
  EXPECT_EQ(serializationTime(4178, BitRate::gbps(100)), Time::ps(334'240));
  EXPECT_EQ(serializationTime(4178, BitRate::gbps(400)), Time::ps(83'560));
  EXPECT_EQ(serializationTime(0, BitRate::gbps(100)), Time::zero());
  EXPECT_EQ(serializationTime(1, BitRate::gbps(100)), Time::ps(80));
  // 8 bits at 3 bit/s = 2.666... s: rounded up to the next picosecond.
  EXPECT_EQ(serializationTime(1, BitRate::bps(3)), Time::ps(2'666'666'666'667));
  // 1 byte at 3 Tbit/s = 2.666 ps -> 3 ps.
  EXPECT_EQ(serializationTime(1, BitRate::bps(3'000'000'000'000)), Time::ps(3));
  // Large sizes do not overflow: 1 TiB at 1 Gbit/s.
  EXPECT_EQ(serializationTime(Bytes{1} << 40, BitRate::gbps(1)), Time::ps((int64_t{1} << 40) * 8 * 1000));
}

TEST(Units, BytesInTimeRoundsDown) {
  EXPECT_EQ(bytesInTime(Time::ps(334'240), BitRate::gbps(100)), 4178);
  EXPECT_EQ(bytesInTime(Time::ps(334'239), BitRate::gbps(100)), 4177);
  EXPECT_EQ(bytesInTime(Time::us(1), BitRate::gbps(100)), 12'500);
  EXPECT_EQ(bytesInTime(Time::zero(), BitRate::gbps(100)), 0);
  EXPECT_EQ(bytesInTime(Time::s(1), BitRate::bps(3)), 0);
  EXPECT_EQ(bytesInTime(Time::ps(2'666'666'666'667), BitRate::bps(3)), 1);
  // Round trip: the serialization time of b bytes carries at least b bytes, one picosecond
  // less carries fewer.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    const Bytes b = static_cast<Bytes>(rng() % 10'000'000) + 1;
    const BitRate r = BitRate::bps(static_cast<int64_t>(rng() % 800'000'000'000ULL) + 1);
    const Time t = serializationTime(b, r);
    ASSERT_GE(bytesInTime(t, r), b);
    ASSERT_LT(bytesInTime(t - Time::ps(1), r), b);
  }
}
