#include "sim/workload/collectives/TreeBuilder.h"

#include <vector>

#include "sim/core/Error.h"
#include "sim/workload/TreeShape.h"

namespace fabricsim {

void TreeBuilder::build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes) {
  plan.algo = PlanAlgo::Tree;
  const uint32_t g = ctx.gpusPerHost;
  const uint32_t n = static_cast<uint32_t>(plan.members.size());
  plan.ranks = n;
  plan.chunk = ctx.tuning.chunkSize;
  // Hosts in order: hostStart[h] is the rank of host h's first GPU (its head).
  std::vector<uint32_t>& hostStart = ctx.scratch;
  hostStart.clear();
  for (uint32_t r = 0; r < n; ++r)
    if (r == 0 || plan.members[r] / g != plan.members[r - 1] / g) hostStart.push_back(r);
  const uint32_t hosts = static_cast<uint32_t>(hostStart.size());
  const bool crossHost = hosts > 1;
  plan.parent.assign(2 * static_cast<size_t>(n), kNoLane);
  plan.children.assign(2 * static_cast<size_t>(n) * 3, kNoLane);
  for (int t = 0; t < 2; ++t) {
    uint32_t h = 0;
    for (uint32_t r = 0; r < n; ++r) {
      while (h + 1 < hosts && hostStart[h + 1] <= r) ++h;
      uint32_t up = kNoLane;
      if (r != hostStart[h]) {
        up = r - 1;  // chain inside the host towards its head
      } else {
        const int64_t ph = TreeShape::parent(hosts, h, t);
        if (ph != TreeShape::kNone) up = hostStart[static_cast<size_t>(ph)];
      }
      plan.parent[t * n + r] = up;
      if (up != kNoLane) {
        uint32_t* ch = &plan.children[(static_cast<size_t>(t) * n + up) * 3];
        int i = 0;
        while (ch[i] != kNoLane) ++i;
        SIM_CHECK(i < 3, "tree node with more than three children");
        ch[i] = r;
      }
    }
  }
  // Instances (tree t, channel c), q = t * C + c, each with 2N lanes: up lane of rank r at
  // q * 2N + r (r -> parent), down lane at q * 2N + N + r (parent -> r).
  const uint32_t c = static_cast<uint32_t>(crossHost ? ctx.tuning.channels : ctx.tuning.nvlinkChannels);
  plan.lanes.resize(static_cast<size_t>(2 * c) * 2 * n);
  for (int t = 0; t < 2; ++t) {
    for (uint32_t ch = 0; ch < c; ++ch) {
      const uint32_t q = static_cast<uint32_t>(t) * c + ch;
      const Bytes data = shareOf(bytes, 2 * c, q);
      const uint32_t chunks = static_cast<uint32_t>((data + plan.chunk - 1) / plan.chunk);
      for (uint32_t r = 0; r < n; ++r) {
        const uint32_t up = plan.parent[t * n + r];
        if (up == kNoLane) continue;
        const bool leaf = plan.children[(static_cast<size_t>(t) * n + r) * 3] == kNoLane;
        for (int dir = 0; dir < 2; ++dir) {
          Lane& l = plan.lanes[static_cast<size_t>(q) * 2 * n + dir * n + r];
          l.src = dir == 0 ? plan.members[r] : plan.members[up];
          l.dst = dir == 0 ? plan.members[up] : plan.members[r];
          l.total = chunks;
          l.received = dir == 0 && leaf ? chunks : 0;
          l.pos = r;
          l.n = static_cast<uint32_t>(t);
          l.data = data;
          l.qp = static_cast<uint16_t>(q);
          l.kind = LaneKind::Pipelined;
          l.window = pipelineWindow(plan.chunk);
          l.flow = dir == 0 ? LaneFlow::TreeUp : LaneFlow::TreeDown;
          l.network = !sameHost(l.src, l.dst, g);
        }
        plan.remaining += 2 * static_cast<uint64_t>(chunks);
      }
    }
  }
}

}  // namespace fabricsim
