#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "gpu/common/CollectiveCheck.h"

using namespace fabricsim::gpu;

namespace {

using Buffer = std::vector<unsigned char>;

// What NCCL would leave in each rank's receive buffer, computed the slow obvious way.
std::vector<Buffer> simulate(Collective c, DataType t, ReduceOp op, int n, int root,
                             const CollectiveCounts& k, const CollectiveCheck& check) {
  const size_t es = dataTypeSize(t);
  std::vector<Buffer> out(n, Buffer(k.recvCount * es));
  auto in = [&](int r, size_t i) { return check.inputValue(r, i); };
  auto reduce = [&](size_t i) {
    double acc = in(0, i);
    for (int r = 1; r < n; ++r) {
      const double v = in(r, i);
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg:
          acc = roundTo(t, acc + v);
          break;
        case ReduceOp::kProd:
          acc = roundTo(t, acc * v);
          break;
        case ReduceOp::kMax:
          acc = std::max(acc, v);
          break;
        case ReduceOp::kMin:
          acc = std::min(acc, v);
          break;
      }
    }
    if (op == ReduceOp::kAvg)
      acc = isFloatingPoint(t) ? acc / n : static_cast<double>(static_cast<long>(acc) / n);
    return acc;
  };
  for (int rank = 0; rank < n; ++rank) {
    for (size_t i = 0; i < k.recvCount; ++i) {
      double v = 0;
      const size_t b = k.paramCount;
      switch (c) {
        case Collective::kAllReduce:
          v = reduce(i);
          break;
        case Collective::kReduceScatter:
          v = reduce(rank * b + i);
          break;
        case Collective::kAllGather:
          v = in(static_cast<int>(i / b), i % b);
          break;
        case Collective::kAllToAll:
          v = in(static_cast<int>(i / b), rank * b + i % b);
          break;
        case Collective::kBroadcast:
          v = in(root, i);
          break;
        case Collective::kSendRecv:
          v = in((rank + n - 1) % n, i);
          break;
      }
      encodeElement(t, v, out[rank].data() + i * es);
    }
  }
  return out;
}

}  // namespace

TEST(GpuCollectiveCheck, CorrectResultsHaveNoWrongElements) {
  for (Collective c : allCollectives()) {
    for (DataType t : {DataType::kFloat, DataType::kBfloat16, DataType::kHalf, DataType::kInt8,
                       DataType::kUint8, DataType::kInt32, DataType::kUint64, DataType::kDouble}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg}) {
        if (!isReduction(c) && op != ReduceOp::kSum) continue;
        for (int n : {1, 3, 8, 13}) {
          const int root = n / 2;
          const CollectiveCheck check(c, t, op, n, root, 42);
          const auto k = collectiveCounts(c, 1040 * dataTypeSize(t), dataTypeSize(t), n);
          const auto received = simulate(c, t, op, n, root, k, check);
          for (int r = 0; r < n; ++r)
            EXPECT_EQ(check.countWrong(r, k, received[r].data()), 0u)
                << collectiveName(c) << " " << dataTypeName(t) << " " << reduceOpName(op) << " n=" << n
                << " rank " << r;
        }
      }
    }
  }
}

TEST(GpuCollectiveCheck, CatchesCorruptionMisplacementAndWrongRanks) {
  const int n = 8;
  const DataType t = DataType::kBfloat16;
  const size_t es = dataTypeSize(t);
  {
    const CollectiveCheck check(Collective::kAllReduce, t, ReduceOp::kSum, n, 0, 7);
    const auto k = collectiveCounts(Collective::kAllReduce, 4096, es, n);
    auto got = simulate(Collective::kAllReduce, t, ReduceOp::kSum, n, 0, k, check);
    encodeElement(t, check.expected(3, 5, k) + 1, got[3].data() + 5 * es);
    encodeElement(t, check.expected(3, 9, k) - 1, got[3].data() + 9 * es);
    EXPECT_EQ(check.countWrong(3, k, got[3].data()), 2u);
    // An all-reduce that forgot one rank's contribution is wrong almost everywhere.
    size_t wrong = 0;
    Buffer partial(k.recvCount * es);
    for (size_t i = 0; i < k.recvCount; ++i)
      encodeElement(t, check.expected(0, i, k) - check.inputValue(7, i), partial.data() + i * es);
    wrong = check.countWrong(0, k, partial.data());
    EXPECT_GT(wrong, k.recvCount / 2);
  }
  {
    // all_gather whose blocks arrive swapped.
    const CollectiveCheck check(Collective::kAllGather, t, ReduceOp::kSum, n, 0, 7);
    const auto k = collectiveCounts(Collective::kAllGather, 8192, es, n);
    auto got = simulate(Collective::kAllGather, t, ReduceOp::kSum, n, 0, k, check);
    std::swap_ranges(got[2].begin(), got[2].begin() + k.paramCount * es, got[2].begin() + k.paramCount * es);
    EXPECT_GT(check.countWrong(2, k, got[2].data()), k.paramCount);
  }
  {
    // sendrecv that received from the wrong neighbour.
    const CollectiveCheck check(Collective::kSendRecv, DataType::kFloat, ReduceOp::kSum, n, 0, 7);
    const auto k = collectiveCounts(Collective::kSendRecv, 4096, 4, n);
    Buffer got(k.recvCount * 4);
    check.fillInput(5, k.sendCount, got.data());  // rank 5 should get rank 4's data
    EXPECT_GT(check.countWrong(5, k, got.data()), k.recvCount * 9 / 10);
    check.fillInput(4, k.sendCount, got.data());
    EXPECT_EQ(check.countWrong(5, k, got.data()), 0u);
  }
}

TEST(GpuCollectiveCheck, ToleranceOnlyWhereRoundingIsPossible) {
  EXPECT_EQ(
      CollectiveCheck(Collective::kAllReduce, DataType::kBfloat16, ReduceOp::kSum, 64, 0, 1).tolerance(), 0);
  EXPECT_GT(
      CollectiveCheck(Collective::kAllReduce, DataType::kBfloat16, ReduceOp::kSum, 512, 0, 1).tolerance(), 0);
  EXPECT_GT(CollectiveCheck(Collective::kAllReduce, DataType::kFloat, ReduceOp::kAvg, 8, 0, 1).tolerance(),
            0);
  EXPECT_EQ(CollectiveCheck(Collective::kAllReduce, DataType::kInt32, ReduceOp::kAvg, 8, 0, 1).tolerance(),
            0);
  EXPECT_EQ(CollectiveCheck(Collective::kAllGather, DataType::kHalf, ReduceOp::kSum, 8, 0, 1).tolerance(), 0);
  EXPECT_THROW(CollectiveCheck(Collective::kBroadcast, DataType::kHalf, ReduceOp::kSum, 4, 4, 1),
               std::invalid_argument);
}
