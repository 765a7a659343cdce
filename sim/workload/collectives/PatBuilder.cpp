#include "sim/workload/collectives/PatBuilder.h"

#include <algorithm>
#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {

uint32_t PatBuilder::steps(uint32_t n) {
  uint32_t k = 0;
  while ((uint64_t{1} << k) < n) ++k;
  return k;
}

uint32_t PatBuilder::blocksAt(uint32_t n, uint32_t k) {
  const uint64_t d = uint64_t{1} << k;
  return static_cast<uint32_t>(std::min<uint64_t>(d, n - d));
}

void PatBuilder::build(CollectivePlan& plan, const BuildContext& ctx, CollectiveOp op, Bytes bytes,
                       uint32_t channels) {
  SIM_CHECK(op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter, "PAT runs all-gather or reduce-scatter");
  const uint32_t n = static_cast<uint32_t>(plan.members.size());
  const uint32_t K = steps(n);
  const bool gather = op == CollectiveOp::AllGather;
  const uint32_t g = ctx.gpusPerHost;
  const uint32_t first = static_cast<uint32_t>(plan.lanes.size());
  auto index = [&](uint32_t c, uint32_t k, uint32_t r) { return first + (c * K + k) * n + r; };
  for (uint32_t c = 0; c < channels; ++c) {
    const Bytes cd = shareOf(bytes, channels, c);
    for (uint32_t k = 0; k < K; ++k) {
      // Distance and blocks of step k: all-gather doubles the distance, reduce-scatter halves it.
      const uint32_t e = gather ? k : K - 1 - k;
      const uint32_t d = 1u << e;
      const uint32_t blocks = blocksAt(n, e);
      const Bytes data = static_cast<Bytes>(
          std::llround(static_cast<double>(cd) * static_cast<double>(blocks) / static_cast<double>(n)));
      for (uint32_t r = 0; r < n; ++r) {
        Lane l;
        const uint32_t to = gather ? (r + n - d % n) % n : (r + d) % n;
        l.src = plan.members[r];
        l.dst = plan.members[to];
        l.total = 1;
        l.received = k == 0 ? 1 : 0;  // later steps wait for the previous step's receipt
        l.pos = r;
        l.n = n;
        l.data = data;
        l.qp = static_cast<uint16_t>(c);
        l.kind = LaneKind::Whole;
        l.flow = LaneFlow::Chain;
        l.next = k + 1 < K ? index(c, k + 1, to) : kNoLane;  // the receiver's next step
        l.network = !sameHost(l.src, l.dst, g);
        plan.lanes.push_back(l);
      }
    }
  }
  plan.remaining += static_cast<uint64_t>(channels) * K * n;
}

}  // namespace fabricsim
