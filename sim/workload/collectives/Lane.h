// Lane: one stream of sends from one GPU to one peer in a collective (one channel of one ring
// position, one tree edge, one NVLS pair, ...), and the small arithmetic every builder shares.
//
// Models: a lane's send k may start once ready() exceeds k: its data has arrived (received,
// plus `base` sends it holds from the start), its phase has opened (gate) and, with a window,
// fewer than `window` of its sends are undelivered (a connection's buffer). How many bytes send
// k carries and to whom is its LaneKind's rule (CollectiveEngine::laneBytes); what its delivery
// unlocks is its LaneFlow's (the next lane of its ring or chain, its tree parent or children).
// Leaves out: timing (the engine's step latencies and the fabric decide it).
// Units: Bytes (user bytes, before the protocol's wire efficiency); Time (ps).
#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

/// No lane, rank or tree node.
inline constexpr uint32_t kNoLane = 0xFFFFFFFFu;

/// Bytes a pipelined connection may have in flight (NCCL_BUFFSIZE's default, 4 MiB): a tree or
/// broadcast lane waits for deliveries once this much is outstanding, as NCCL's sender waits for
/// free slots in the receiver's buffer. Without it a leaf would push all its data at once.
inline constexpr Bytes kConnectionBuffer = 4 * 1024 * 1024;

/// Steps a connection's buffer is divided into (NCCL_STEPS): a Simple step is
/// kConnectionBuffer / kNcclSteps (512 KiB).
inline constexpr Bytes kNcclSteps = 8;

/// Share i of `total` split into `parts` near-equal shares (the first total % parts get one
/// byte more), so that the shares add up to `total` exactly.
inline Bytes shareOf(Bytes total, uint64_t parts, uint64_t i) {
  const Bytes p = static_cast<Bytes>(parts);
  return total / p + (static_cast<Bytes>(i) < total % p ? 1 : 0);
}

inline bool sameHost(uint32_t a, uint32_t b, uint32_t gpusPerHost) {
  return a / gpusPerHost == b / gpusPerHost;
}

/// v mod n in [0, n).
inline uint32_t modN(int64_t v, uint32_t n) {
  const int64_t m = v % static_cast<int64_t>(n);
  return static_cast<uint32_t>(m < 0 ? m + n : m);
}

/// Sends of `chunk` bytes a pipelined connection may have in flight (at least 2).
inline uint32_t pipelineWindow(Bytes chunk) {
  return static_cast<uint32_t>(std::max<Bytes>(2, (kConnectionBuffer + chunk - 1) / chunk));
}

/// How a lane's sends are sized and addressed.
enum class LaneKind : uint8_t {
  RingReduceScatter,  ///< send k carries chunk (pos - k - 1) mod n of the lane's data
  RingAllGather,      ///< send k carries chunk (pos - k) mod n
  RingAllReduce,      ///< reduce-scatter for k < n - 1, then all-gather
  Pipelined,          ///< send k carries bytes [k * chunk, (k + 1) * chunk) of the lane's data
  Whole,              ///< one send of all the lane's data
  AllToAll,           ///< send k goes to rank (pos + 1 + k) mod n with that rank's share
};

/// What a delivered send unlocks.
enum class LaneFlow : uint8_t { Ring, Chain, TreeUp, TreeDown, None };

struct Lane {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t total = 0;     ///< sends
  uint32_t received = 0;  ///< sends whose data have arrived (data dependencies met)
  uint32_t sent = 0;
  uint32_t delivered = 0;
  uint32_t next = kNoLane;  ///< Ring / Chain: the lane whose data this one delivers
  uint32_t pos = 0;         ///< position of the sender in its ring / chain / rank list
  uint32_t n = 0;           ///< ring / alltoall: ranks (chunks per channel); tree lanes: the tree (0, 1)
  uint32_t dstIndex = 0;    ///< hierarchical: receiver's index in the member list
  Bytes data = 0;           ///< user bytes this lane's channel carries
  uint16_t qp = 0;          ///< the request's qp; AllToAll lanes: the channel count (send k uses k % it)
  LaneKind kind = LaneKind::Whole;
  LaneFlow flow = LaneFlow::None;
  uint8_t base = 0;   ///< sends available before any data arrive (ring: 1, its own chunk)
  uint8_t phase = 0;  ///< hierarchical: 0 intra-host reduce-scatter, 1 inter-host, 2 all-gather
  bool gate = true;   ///< false until the sender's previous phase has completed
  bool busy = false;  ///< a step-latency event is pending
  bool network = false;
  bool batch = false;
  uint32_t repeat = 1;      ///< ring steps this lane's one send stands for (pipelined ring model)
  Time delay;               ///< pipelined or fixed-delay lane: the wait before its one send
  /// When the protocol's ceiling (CollectivePlan::protoRate) has passed the data of the lane's
  /// latest send.
  Time paceEnd;
  /// A pipeline's edges sent as one group (Fabric::sendGroup, where the fabric couples them):
  /// the leader's groupSize lanes from groupLead, every groupStride-th; members leave it to the
  /// leader.
  uint32_t groupLead = kNoLane;
  uint32_t groupSize = 0;  ///< the leader's: lanes in its group
  uint32_t scheduled = 0;  ///< overlap lanes: sends whose step-latency event has been scheduled
  uint32_t window = kNoLane;  ///< most sends in flight (issued, not yet delivered)
  uint8_t groupStride = 1;    ///< the leader's
  bool fixedDelay = false;    ///< the wait before each send is `delay` (NVLS lanes)
  bool nvlsWire = false;      ///< wire bytes = user bytes / nvlsEfficiency (NVLS lanes)
  /// Stepped ring lanes: each send that becomes ready waits its own step latency, overlapping
  /// the waits of sends before it, so a ring's latency is the sum of its hops' latencies along
  /// the data's path (NCCL's ring latency) rather than steps x the slowest hop's.
  bool overlap = false;
  /// One connection (one queue pair): the fabric moves the lane's sends in flight one after
  /// another (TransferRequest::inOrder), as a NIC streams a QP's posted messages in turn, not
  /// all at once at a share each (then every tree level would store and forward each chunk at a
  /// fraction of the rate).
  bool inOrder = false;

  uint32_t ready() const {
    if (!gate) return 0;
    const uint32_t byData = std::min(total, received + base);
    return window == kNoLane ? byData : std::min(byData, delivered + window);
  }
};

}  // namespace fabricsim
