#include "sim/workload/collectives/AllToAllBuilder.h"

namespace fabricsim {

void AllToAllBuilder::build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes) {
  const uint32_t g = ctx.gpusPerHost;
  const uint32_t n = static_cast<uint32_t>(plan.members.size());
  const bool crossHost = plan.members.front() / g != plan.members.back() / g;
  const uint32_t c = static_cast<uint32_t>(crossHost ? ctx.tuning.channels : ctx.tuning.nvlinkChannels);
  for (uint32_t r = 0; r < n; ++r) {
    Lane l;
    l.src = plan.members[r];
    l.dst = plan.members[(r + 1) % n];
    l.total = n - 1;
    l.received = n - 1;
    l.pos = r;
    l.n = n;
    l.data = bytes;
    l.qp = static_cast<uint16_t>(c);  // the channel count; send k uses qp k % c
    l.kind = LaneKind::AllToAll;
    l.network = crossHost;
    l.batch = true;
    plan.lanes.push_back(l);
  }
  plan.remaining = static_cast<uint64_t>(n) * (n - 1);
}

}  // namespace fabricsim
