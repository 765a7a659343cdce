#include "sim/workload/collectives/NvlsTreeBuilder.h"

#include <algorithm>
#include <cmath>

#include "sim/workload/collectives/NvlsBuilder.h"

namespace fabricsim {

void NvlsTreeBuilder::build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes) {
  const CollectiveTuning& tuning = ctx.tuning;
  plan.algo = PlanAlgo::NvlsTree;
  plan.splitByHost(ctx.gpusPerHost, "nvls_tree");
  const uint32_t hosts = plan.hosts, perHost = plan.perHost, n = hosts * perHost;
  const double S = static_cast<double>(bytes), G = perHost;
  const double f = std::min(S, static_cast<double>(tuning.nvlsPipeline));
  plan.nvlsEff = tuning.nvlsEfficiency * tuning.nvlsTreeEfficiency;
  const double nvRate = ctx.fabric.pathRate(plan.members[0], plan.members[1]) * plan.nvlsEff;
  const Time fill = Time::ps(static_cast<int64_t>(f / nvRate * 1e12));
  auto bytesOf = [](double v) { return static_cast<Bytes>(std::ceil(v)); };
  const Bytes reducePair = bytesOf(S / (G - 1));
  const Bytes tailPair = bytesOf(f / G / (G - 1));
  const Bytes bulkPair = std::max<Bytes>(0, bytesOf(S / G / (G - 1)) - tailPair);
  // Phase 0: reduce and the bulk of the multicast, per host and ordered pair.
  for (uint32_t h = 0; h < hosts; ++h)
    for (uint32_t a = 0; a < perHost; ++a)
      for (uint32_t b = 0; b < perHost; ++b)
        if (a != b) {
          NvlsBuilder::addLane(plan, h * perHost + a, h * perHost + b, reducePair, tuning.nvlsLatency, 0,
                               true);
          if (bulkPair > 0)
            NvlsBuilder::addLane(plan, h * perHost + a, h * perHost + b, bulkPair, tuning.nvlsLatency, 0,
                                 true);
        }
  // Phase 1: per rail i, a pipelined ring all-reduce of S/G over the hosts, `c` channels.
  const uint32_t c = static_cast<uint32_t>(std::max(1, tuning.channels / static_cast<int>(perHost)));
  plan.channels = c;
  plan.received.assign(n, 0);
  const Bytes shard = bytesOf(S / G);
  for (uint32_t i = 0; i < perHost; ++i) {
    const uint32_t a0 = plan.members[i], b0 = plan.members[perHost + i];
    const Time hop = ctx.fabric.pathLatency(a0, b0) + plan.stepNet;
    for (uint32_t ch = 0; ch < c; ++ch) {
      const Bytes cd = shareOf(shard, c, ch);
      for (uint32_t h = 0; h < hosts; ++h) {
        const uint32_t q = (h + 1) % hosts;
        Lane l;
        l.src = plan.members[h * perHost + i];
        l.dst = plan.members[q * perHost + i];
        l.total = 1;
        l.received = 1;
        l.pos = h;
        l.n = hosts;
        l.dstIndex = q * perHost + i;
        l.data = (cd - shareOf(cd, hosts, h)) + (cd - shareOf(cd, hosts, q));
        l.qp = static_cast<uint16_t>(ch);
        l.kind = LaneKind::Whole;
        l.phase = 1;
        l.network = true;
        l.fixedDelay = true;
        l.delay = fill + hop * static_cast<int64_t>(2 * (hosts - 1)) - ctx.fabric.pathLatency(l.src, l.dst);
        l.delay = std::max(l.delay, fill);
        plan.lanes.push_back(l);
        ++plan.remaining;
      }
    }
  }
  // Phase 2: the multicast tail of each GPU, opened by its inter-host receipts; lanes of member
  // m at base2 + m * (G - 1) + j.
  plan.base2 = static_cast<uint32_t>(plan.lanes.size());
  for (uint32_t h = 0; h < hosts; ++h)
    for (uint32_t a = 0; a < perHost; ++a)
      for (uint32_t b = 0; b < perHost; ++b)
        if (a != b)
          NvlsBuilder::addLane(plan, h * perHost + a, h * perHost + b, tailPair, Time::zero(), 2, false);
}

}  // namespace fabricsim
