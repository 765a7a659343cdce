#include "sim/workload/collectives/NvlsTreeBuilder.h"

#include <algorithm>
#include <cmath>

#include "sim/workload/TreeShape.h"
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
  // Phase 1: per rail i and channel, NCCL's double binary tree over the hosts (TreeShape): two
  // complementary trees each carrying half of the rail's S/G, every tree edge one up send
  // (child -> parent, the partial sums) and one down send (parent -> child, the result), all of
  // them pipelined (every edge busy at once, each its whole share). Per NIC and direction that
  // is S/G at two hosts (as a ring) and 2 S/G from three on (a host is interior in one tree:
  // two children and a parent; a leaf in the other).
  const uint32_t c = static_cast<uint32_t>(std::max(1, tuning.channels / static_cast<int>(perHost)));
  plan.received.assign(n, 0);
  plan.expected.assign(n, 0);
  // The pipeline's latency: one hop per tree edge up and one down, over the trees' depth.
  const int64_t depth = TreeShape::depth(hosts);
  const Bytes shard = bytesOf(S / G);
  for (uint32_t i = 0; i < perHost; ++i) {
    const uint32_t a0 = plan.members[i], b0 = plan.members[perHost + i];
    const Time hop = ctx.fabric.pathLatency(a0, b0) + tuning.nvlsTreeHop();
    for (uint32_t ch = 0; ch < c; ++ch) {
      const Bytes cd = shareOf(shard, c, ch);
      for (int t = 0; t < 2; ++t) {
        const Bytes td = shareOf(cd, 2, static_cast<uint32_t>(t));
        for (uint32_t h = 0; h < hosts; ++h) {
          const int64_t p = TreeShape::parent(hosts, h, t);
          if (p == TreeShape::kNone) continue;
          for (int dir = 0; dir < 2; ++dir) {
            const uint32_t from = dir == 0 ? h : static_cast<uint32_t>(p);
            const uint32_t to = dir == 0 ? static_cast<uint32_t>(p) : h;
            Lane l;
            l.src = plan.members[from * perHost + i];
            l.dst = plan.members[to * perHost + i];
            l.total = 1;
            l.received = 1;
            l.pos = from;
            l.n = hosts;
            l.dstIndex = to * perHost + i;
            l.data = td;
            l.qp = static_cast<uint16_t>(2 * ch + static_cast<uint32_t>(t));
            l.kind = LaneKind::Whole;
            l.phase = 1;
            l.network = true;
            l.fixedDelay = true;
            l.delay = fill + hop * (2 * depth) - ctx.fabric.pathLatency(l.src, l.dst);
            l.delay = std::max(l.delay, fill);
            plan.lanes.push_back(l);
            ++plan.expected[l.dstIndex];
            ++plan.remaining;
          }
        }
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
