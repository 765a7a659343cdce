#include "gpu/common/CollectiveCheck.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::gpu {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

CollectiveCheck::CollectiveCheck(Collective collective, DataType type, ReduceOp op, int ranks, int root,
                                 uint64_t seed)
    : collective_(collective), type_(type), op_(op), ranks_(ranks), root_(root), seed_(seed) {
  if (ranks < 1) throw std::invalid_argument("CollectiveCheck: ranks must be >= 1");
  if (root < 0 || root >= ranks) throw std::invalid_argument("CollectiveCheck: root out of range");
  if (isReduction(collective) && isFloatingPoint(type)) {
    const double n = ranks;
    const double largestPartial = 2.0 * n;  // |v| <= 2
    const double exactLimit = std::ldexp(1.0, significandBits(type));
    if (op == ReduceOp::kAvg) {
      tolerance_ = (n + 1) * 2.0 * std::ldexp(1.0, 1 - significandBits(type));
    } else if (op == ReduceOp::kSum && largestPartial > exactLimit) {
      tolerance_ = n * largestPartial * std::ldexp(1.0, 1 - significandBits(type));
    }
  }
}

uint64_t CollectiveCheck::elementHash(size_t i) const {
  return splitmix64(seed_ * 0x100000001b3ull + i);
}

double CollectiveCheck::inputValue(int rank, size_t i) const {
  const bool unsignedType = !isSigned(type_);
  if (isReduction(collective_)) {
    if (op_ == ReduceOp::kProd)
      return static_cast<int>(elementHash(i) % static_cast<uint64_t>(ranks_)) == rank ? 2.0 : 1.0;
    const int residue = static_cast<int>((7ull * static_cast<uint64_t>(rank) + elementHash(i) % 5) % 5);
    return unsignedType ? residue : residue - 2;
  }
  const uint64_t h = splitmix64(elementHash(i) ^ (static_cast<uint64_t>(rank) + 1) * 0xd6e8feb86659fd93ull);
  const int v = static_cast<int>(h % 201);
  return unsignedType ? v : v - 100;
}

void CollectiveCheck::fillInput(int rank, size_t count, void* dst) const {
  auto* out = static_cast<unsigned char*>(dst);
  const size_t size = dataTypeSize(type_);
  for (size_t i = 0; i < count; ++i) encodeElement(type_, inputValue(rank, i), out + i * size);
}

double CollectiveCheck::reduced(size_t i) const {
  const int n = ranks_;
  if (op_ == ReduceOp::kProd) return 2.0;
  // Any 5 consecutive ranks hold each residue once: their sum is 0 (10 unsigned), max 2 (4), min -2 (0).
  const int fullBlocks = n / 5;
  const double shift = isSigned(type_) ? -2.0 : 0.0;
  double sum = fullBlocks * (10.0 + 5.0 * shift);
  double hi = fullBlocks > 0 ? 4.0 + shift : -1e300;
  double lo = fullBlocks > 0 ? 0.0 + shift : 1e300;
  for (int r = fullBlocks * 5; r < n; ++r) {
    const double v = inputValue(r, i);
    sum += v;
    hi = std::max(hi, v);
    lo = std::min(lo, v);
  }
  switch (op_) {
    case ReduceOp::kSum:
      return roundTo(type_, sum);
    case ReduceOp::kMax:
      return hi;
    case ReduceOp::kMin:
      return lo;
    case ReduceOp::kAvg:
      if (isFloatingPoint(type_)) return roundTo(type_, sum / n);
      return roundTo(type_, std::trunc(roundTo(type_, sum) / n));  // integer avg: wrapped sum, then divide
    case ReduceOp::kProd:
      break;
  }
  return 2.0;
}

double CollectiveCheck::expected(int rank, size_t i, const CollectiveCounts& counts) const {
  const size_t base = counts.paramCount;
  switch (collective_) {
    case Collective::kAllReduce:
      return reduced(i);
    case Collective::kReduceScatter:
      return reduced(static_cast<size_t>(rank) * base + i);
    case Collective::kAllGather:
      return inputValue(static_cast<int>(i / base), i % base);
    case Collective::kAllToAll:
      return inputValue(static_cast<int>(i / base), static_cast<size_t>(rank) * base + i % base);
    case Collective::kBroadcast:
      return inputValue(root_, i);
    case Collective::kSendRecv:
      return inputValue((rank - 1 + ranks_) % ranks_, i);
  }
  return 0;
}

size_t CollectiveCheck::countWrong(int rank, const CollectiveCounts& counts, const void* received) const {
  const auto* in = static_cast<const unsigned char*>(received);
  const size_t size = dataTypeSize(type_);
  size_t wrong = 0;
  for (size_t i = 0; i < counts.recvCount; ++i) {
    const double got = decodeElement(type_, in + i * size);
    const double want = expected(rank, i, counts);
    if (!(std::fabs(got - want) <= tolerance_)) ++wrong;
  }
  return wrong;
}

}  // namespace fabricsim::gpu
