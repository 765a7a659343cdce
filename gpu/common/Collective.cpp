#include "gpu/common/Collective.h"

#include <algorithm>
#include <string>

namespace fabricsim::gpu {

std::string_view collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

std::optional<Collective> parseCollective(std::string_view name) {
  std::string n(name);
  if (n.size() > 5 && n.ends_with("_perf")) n.resize(n.size() - 5);
  std::erase(n, '_');
  std::erase(n, '-');
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (n == "allreduce") return Collective::kAllReduce;
  if (n == "allgather") return Collective::kAllGather;
  if (n == "reducescatter") return Collective::kReduceScatter;
  if (n == "alltoall") return Collective::kAllToAll;
  if (n == "broadcast" || n == "bcast") return Collective::kBroadcast;
  if (n == "sendrecv") return Collective::kSendRecv;
  return std::nullopt;
}

const std::vector<Collective>& allCollectives() {
  static const std::vector<Collective> all = {Collective::kAllReduce,     Collective::kAllGather,
                                              Collective::kReduceScatter, Collective::kAllToAll,
                                              Collective::kBroadcast,     Collective::kSendRecv};
  return all;
}

bool isReduction(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter;
}
bool hasRoot(Collective c) {
  return c == Collective::kBroadcast;
}
bool checksInPlace(Collective c) {
  return c != Collective::kAllToAll && c != Collective::kSendRecv;
}

std::string_view reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kAvg:
      return "avg";
  }
  return "?";
}

std::optional<ReduceOp> parseReduceOp(std::string_view name) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg})
    if (name == reduceOpName(op)) return op;
  return std::nullopt;
}

CollectiveCounts collectiveCounts(Collective c, size_t bytes, size_t elementSize, int ranks) {
  const size_t n = static_cast<size_t>(std::max(ranks, 1));
  const size_t count = elementSize ? bytes / elementSize : 0;
  CollectiveCounts k;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kSendRecv:
      k.sendCount = k.recvCount = k.paramCount = count;
      break;
    case Collective::kAllGather: {
      const size_t base = count / n;
      k.sendCount = base;
      k.recvCount = base * n;
      k.paramCount = base;
      k.sendInPlaceOffset = base;
      break;
    }
    case Collective::kReduceScatter: {
      const size_t base = count / n;
      k.sendCount = base * n;
      k.recvCount = base;
      k.paramCount = base;
      k.recvInPlaceOffset = base;
      break;
    }
    case Collective::kAllToAll: {
      const size_t base = count / n;
      k.sendCount = k.recvCount = base * n;
      k.paramCount = base;
      break;
    }
  }
  return k;
}

size_t printedBytes(const CollectiveCounts& counts, size_t elementSize) {
  return std::max(counts.sendCount, counts.recvCount) * elementSize;
}

size_t printedCount(const CollectiveCounts& counts) {
  return counts.paramCount;
}

double algorithmBytes(Collective c, const CollectiveCounts& counts, size_t elementSize, int ranks) {
  const double per = static_cast<double>(counts.paramCount) * static_cast<double>(elementSize);
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return per * std::max(ranks, 1);
    default:
      return per;
  }
}

double busBandwidthFactor(Collective c, int ranks) {
  const double n = std::max(ranks, 1);
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

Bandwidth collectiveBandwidth(Collective c, const CollectiveCounts& counts, size_t elementSize, int ranks,
                              double seconds) {
  Bandwidth b;
  if (seconds <= 0) return b;
  b.algBwGBps = algorithmBytes(c, counts, elementSize, ranks) / 1e9 / seconds;
  b.busBwGBps = b.algBwGBps * busBandwidthFactor(c, ranks);
  return b;
}

}  // namespace fabricsim::gpu
