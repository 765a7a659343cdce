// Collective: the six NCCL collectives the harness times, with nccl-tests' buffer sizes and
// bandwidth definitions.
//
// Models: for a requested size in bytes, the element counts each rank sends and receives, the
// counts and offsets nccl-tests uses (the in-place offsets of all_gather and reduce_scatter), the
// size and count columns nccl-tests prints, and algbw / busbw exactly as nccl-tests computes them:
//   algbw = bytes / time, with bytes the whole tensor (count * size for all_reduce, broadcast and
//           sendrecv; per-rank count * ranks * size for all_gather, reduce_scatter and alltoall);
//   busbw = algbw * factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n;
//           broadcast and sendrecv 1.
// Leaves out: reduce, gather, scatter and hypercube (nccl-tests has them; fabricsim's workloads do
// not). sendrecv is nccl-tests' ring shift: rank r sends to r+1 and receives from r-1.
// Units: bytes, elements, seconds, GB/s (10^9 bytes per second, as nccl-tests prints).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace fabricsim::gpu {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kSendRecv };
enum class ReduceOp { kSum, kProd, kMax, kMin, kAvg };

/// fabricsim's name of a collective ("all_reduce", ...), the one workloads and `calibrate` use.
std::string_view collectiveName(Collective c);
/// Accepts fabricsim's names and nccl-tests' binary stems (all_reduce_perf, allreduce, alltoall ...).
std::optional<Collective> parseCollective(std::string_view name);
const std::vector<Collective>& allCollectives();
/// Whether the collective takes a reduction operator (all_reduce, reduce_scatter).
bool isReduction(Collective c);
/// Whether the collective has a root rank (broadcast).
bool hasRoot(Collective c);
/// Whether #wrong is reported for the in-place variant: not for alltoall (nccl-tests does not
/// either) and sendrecv, whose in-place forms send from the buffer they receive into, which NCCL
/// does not define; they are still timed.
bool checksInPlace(Collective c);

std::string_view reduceOpName(ReduceOp op);
std::optional<ReduceOp> parseReduceOp(std::string_view name);

/// Buffer geometry of one collective call, in elements, as nccl-tests' GetCollByteCount defines it.
struct CollectiveCounts {
  size_t sendCount = 0;   ///< elements in each rank's send buffer
  size_t recvCount = 0;   ///< elements in each rank's receive buffer
  size_t paramCount = 0;  ///< the count passed to NCCL (per peer for all_gather, reduce_scatter, alltoall)
  size_t sendInPlaceOffset = 0;  ///< in place, rank r sends from recvbuff + r * this (elements)
  size_t recvInPlaceOffset = 0;  ///< in place, rank r receives at recvbuff + r * this (elements)
};

/// Counts for a requested size of `bytes` with elements of `elementSize` bytes on `ranks` ranks.
CollectiveCounts collectiveCounts(Collective c, size_t bytes, size_t elementSize, int ranks);

/// The "size" column nccl-tests prints: max(send, recv) bytes.
size_t printedBytes(const CollectiveCounts& counts, size_t elementSize);
/// The "count" column nccl-tests prints: paramCount.
size_t printedCount(const CollectiveCounts& counts);

/// Bytes algbw divides by time (nccl-tests' baseBw numerator).
double algorithmBytes(Collective c, const CollectiveCounts& counts, size_t elementSize, int ranks);
/// busbw / algbw for `ranks` ranks.
double busBandwidthFactor(Collective c, int ranks);

struct Bandwidth {
  double algBwGBps = 0;
  double busBwGBps = 0;
};
/// algbw and busbw in GB/s (10^9 B/s) for one call taking `seconds`; zero when seconds <= 0.
Bandwidth collectiveBandwidth(Collective c, const CollectiveCounts& counts, size_t elementSize, int ranks,
                              double seconds);

}  // namespace fabricsim::gpu
