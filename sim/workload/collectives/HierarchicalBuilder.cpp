#include "sim/workload/collectives/HierarchicalBuilder.h"

#include <algorithm>

#include "sim/workload/collectives/RingBuilder.h"

namespace fabricsim {

void HierarchicalBuilder::build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes) {
  plan.algo = PlanAlgo::Hierarchical;
  plan.splitByHost(ctx.gpusPerHost, "hierarchical");
  const uint32_t hosts = plan.hosts, perHost = plan.perHost, n = hosts * perHost;
  plan.nvChannels = static_cast<uint32_t>(std::min<Bytes>(ctx.tuning.nvlinkChannels, bytes));
  plan.channels = static_cast<uint32_t>(ctx.tuning.channels);
  const uint32_t cn = plan.nvChannels;
  plan.received.assign(2 * static_cast<size_t>(n), 0);

  // Phase 0: per host, reduce-scatter over its GPUs; lanes (h, c, i) at h * cn * G + c * G + i.
  for (uint32_t h = 0; h < hosts; ++h)
    RingBuilder::addRing(plan, ctx, LaneKind::RingReduceScatter, perHost - 1, perHost, bytes, cn, 0, true,
                         h * perHost, 1);
  // Phase 1: per local index i, ring all-reduce of the shard GPU i owns after phase 0 (chunk i of
  // every NVLink channel) over the same-index GPUs of all hosts; lanes (i, c, h).
  for (uint32_t i = 0; i < perHost; ++i) {
    Bytes owned = 0;
    for (uint32_t c = 0; c < cn; ++c) owned += shareOf(shareOf(bytes, cn, c), perHost, i);
    const uint32_t c = static_cast<uint32_t>(std::min<Bytes>(plan.channels, std::max<Bytes>(owned, 1)));
    plan.railFirst.push_back(static_cast<uint32_t>(plan.lanes.size()));
    plan.railChannels.push_back(c);
    RingBuilder::addRing(plan, ctx, LaneKind::RingAllReduce, 2 * (hosts - 1), hosts, owned, c, 1, false, i,
                         perHost);
  }
  // Phase 2: per host, all-gather of the reduced shards.
  plan.base2 = static_cast<uint32_t>(plan.lanes.size());
  for (uint32_t h = 0; h < hosts; ++h)
    RingBuilder::addRing(plan, ctx, LaneKind::RingAllGather, perHost - 1, perHost, bytes, cn, 2, false,
                         h * perHost, 1);
}

}  // namespace fabricsim
