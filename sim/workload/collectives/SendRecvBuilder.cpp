#include "sim/workload/collectives/SendRecvBuilder.h"

#include <algorithm>

namespace fabricsim {

void SendRecvBuilder::addMessage(CollectivePlan& plan, const BuildContext& ctx, uint32_t srcGpu,
                                 uint32_t dstGpu, Bytes bytes) {
  const bool network = !sameHost(srcGpu, dstGpu, ctx.gpusPerHost);
  const uint32_t c = static_cast<uint32_t>(
      std::min<Bytes>(network ? ctx.tuning.channels : ctx.tuning.nvlinkChannels, bytes));
  for (uint32_t ch = 0; ch < c; ++ch) {
    Lane l;
    l.src = srcGpu;
    l.dst = dstGpu;
    l.total = 1;
    l.received = 1;
    l.data = shareOf(bytes, c, ch);
    l.qp = static_cast<uint16_t>(ch);
    l.kind = LaneKind::Whole;
    l.network = network;
    plan.lanes.push_back(l);
  }
  plan.remaining += c;
}

void SendRecvBuilder::build(CollectivePlan& plan, const BuildContext& ctx, const std::vector<uint32_t>& gpus,
                            Bytes bytes) {
  const auto n = static_cast<uint32_t>(gpus.size());
  for (uint32_t r = 0; r < n; ++r) addMessage(plan, ctx, gpus[r], gpus[(r + 1) % n], bytes);
}

}  // namespace fabricsim
