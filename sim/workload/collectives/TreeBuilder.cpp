#include "sim/workload/collectives/TreeBuilder.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "sim/core/Error.h"
#include "sim/workload/TreeShape.h"

namespace fabricsim {

void TreeBuilder::build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes, uint32_t channels) {
  plan.algo = PlanAlgo::Tree;
  const uint32_t g = ctx.gpusPerHost;
  const uint32_t n = static_cast<uint32_t>(plan.members.size());
  plan.ranks = n;
  // Hosts in order: hostStart[h] is the rank of host h's first GPU (its head).
  std::vector<uint32_t>& hostStart = ctx.scratch;
  hostStart.clear();
  for (uint32_t r = 0; r < n; ++r)
    if (r == 0 || plan.members[r] / g != plan.members[r - 1] / g) hostStart.push_back(r);
  const uint32_t hosts = static_cast<uint32_t>(hostStart.size());
  // Instances (tree t, channel c), q = t * C + c. Instance q enters and leaves each host through
  // its local GPU c mod (the host's GPUs), the head of a chain through the host's GPUs in turn
  // from there: the instances' inter-host edges spread over the hosts' NICs (one per GPU,
  // rail-matched: the same local GPU on every host), and both trees of channel c share its NIC,
  // as NCCL's tree channels c and C + c do. (Were the trees on different NICs, a host's NICs
  // of the tree it is interior in would carry 3 units to the others' 1.)
  const uint32_t c = std::max<uint32_t>(1, channels);
  const uint32_t instances = 2 * c;
  plan.chunk = chunkFor(bytes / instances, n / hosts, hosts, ctx.tuning.chunkSize);
  plan.parent.assign(static_cast<size_t>(instances) * n, kNoLane);
  plan.children.assign(static_cast<size_t>(instances) * n * 3, kNoLane);
  for (uint32_t q = 0; q < instances; ++q) {
    const int t = static_cast<int>(q / c);
    // The rank at position j of host h's chain: hostStart[h] + (j + c) mod size, c = q mod C.
    auto at = [&](uint32_t h, uint32_t j) {
      const uint32_t size = (h + 1 < hosts ? hostStart[h + 1] : n) - hostStart[h];
      return hostStart[h] + (j + q % c) % size;
    };
    for (uint32_t h = 0; h < hosts; ++h) {
      const uint32_t size = (h + 1 < hosts ? hostStart[h + 1] : n) - hostStart[h];
      for (uint32_t j = 0; j < size; ++j) {
        const uint32_t r = at(h, j);
        uint32_t up = kNoLane;
        if (j > 0) {
          up = at(h, j - 1);  // chain inside the host towards its head
        } else {
          const int64_t ph = TreeShape::parent(hosts, h, t);
          if (ph != TreeShape::kNone) up = at(static_cast<uint32_t>(ph), 0);
        }
        plan.parent[static_cast<size_t>(q) * n + r] = up;
        if (up != kNoLane) {
          uint32_t* ch = &plan.children[(static_cast<size_t>(q) * n + up) * 3];
          int i = 0;
          while (ch[i] != kNoLane) ++i;
          SIM_CHECK(i < 3, "tree node with more than three children");
          ch[i] = r;
        }
      }
    }
  }
  if (plan.pipelined) {
    buildPipelined(plan, ctx, bytes, instances);
    return;
  }
  // Each instance has 2N lanes: up lane of rank r at q * 2N + r (r -> parent), down lane at
  // q * 2N + N + r (parent -> r).
  plan.lanes.resize(static_cast<size_t>(instances) * 2 * n);
  for (uint32_t q = 0; q < instances; ++q) {
    const Bytes data = shareOf(bytes, instances, q);
    const uint32_t chunks = static_cast<uint32_t>((data + plan.chunk - 1) / plan.chunk);
    for (uint32_t r = 0; r < n; ++r) {
      const uint32_t up = plan.parent[static_cast<size_t>(q) * n + r];
      if (up == kNoLane) continue;
      const bool leaf = plan.children[(static_cast<size_t>(q) * n + r) * 3] == kNoLane;
      for (int dir = 0; dir < 2; ++dir) {
        Lane& l = plan.lanes[static_cast<size_t>(q) * 2 * n + dir * n + r];
        l.src = dir == 0 ? plan.members[r] : plan.members[up];
        l.dst = dir == 0 ? plan.members[up] : plan.members[r];
        l.total = chunks;
        l.received = dir == 0 && leaf ? chunks : 0;
        l.pos = r;
        l.n = q;
        l.data = data;
        l.qp = static_cast<uint16_t>(q);
        l.kind = LaneKind::Pipelined;
        l.window = pipelineWindow(plan.chunk);
        l.overlap = true;  // each chunk's step latency overlaps the sends before it
        l.inOrder = true;  // one connection: its chunks cross the NIC one after another
        l.flow = dir == 0 ? LaneFlow::TreeUp : LaneFlow::TreeDown;
        l.network = !sameHost(l.src, l.dst, g);
      }
      plan.remaining += 2 * static_cast<uint64_t>(chunks);
    }
  }
}

void TreeBuilder::buildPipelined(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes, uint32_t instances) {
  const uint32_t n = plan.ranks, g = ctx.gpusPerHost;
  // The sends in the same direction (up or down) sharing each sender's port (its NVLink, or its
  // NIC), over every instance: the first chunks of all instances go up together (every leaf
  // starts at once), and come down together.
  auto portOf = [&](uint32_t a, uint32_t b, bool upward) {
    const uint32_t ga = plan.members[a], gb = plan.members[b];
    return static_cast<uint64_t>(ga) << 2 | (sameHost(ga, gb, g) ? 0 : 2) | (upward ? 1 : 0);
  };
  std::vector<uint64_t>& ports = ctx.pairs;
  ports.clear();
  for (uint32_t q = 0; q < instances; ++q)
    for (uint32_t r = 0; r < n; ++r)
      if (const uint32_t p = plan.parent[static_cast<size_t>(q) * n + r]; p != kNoLane) {
        ports.push_back(portOf(r, p, true));
        ports.push_back(portOf(p, r, false));
      }
  std::sort(ports.begin(), ports.end());
  // One hop of the first chunk (the chunk, or all of an instance's data when it is smaller):
  // the step latency, the path's latency and the chunk's serialization at the sender's share of
  // its port.
  const double first = static_cast<double>(std::min(plan.chunk, shareOf(bytes, instances, 0)));
  auto hop = [&](uint32_t a, uint32_t b, bool upward) {
    const uint32_t ga = plan.members[a], gb = plan.members[b];
    const auto [lo, hi] = std::equal_range(ports.begin(), ports.end(), portOf(a, b, upward));
    const double sharers = static_cast<double>(hi - lo);
    const double chunkPs =
        sharers * first / plan.eff / ctx.fabric.pathRate(ga, gb) * 1e12;
    return (sameHost(ga, gb, g) ? plan.stepNv : plan.stepNet) + ctx.fabric.pathLatency(ga, gb) +
           Time::ps(static_cast<int64_t>(chunkPs));
  };
  std::vector<uint32_t>& order = ctx.scratch;  // ranks, root first (breadth first)
  std::vector<Time>& times = ctx.hopPrefix;       // up[r] at r, down[r] at n + r
  for (uint32_t q = 0; q < instances; ++q) {
    const uint32_t* parent = &plan.parent[static_cast<size_t>(q) * n];
    const uint32_t* children = &plan.children[static_cast<size_t>(q) * n * 3];
    order.clear();
    for (uint32_t r = 0; r < n; ++r)
      if (parent[r] == kNoLane) order.push_back(r);
    for (size_t i = 0; i < order.size(); ++i)
      for (int c = 0; c < 3 && children[order[i] * 3 + c] != kNoLane; ++c) order.push_back(children[order[i] * 3 + c]);
    // up[r]: when r's first chunk, reduced over its subtree, is ready to go up (0 at a leaf);
    // down[r]: when r has the first chunk of the result.
    times.assign(2 * static_cast<size_t>(n), Time::zero());
    Time* up = times.data();
    Time* down = up + n;
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (parent[*it] != kNoLane) up[parent[*it]] = std::max(up[parent[*it]], up[*it] + hop(*it, parent[*it], true));
    for (const uint32_t r : order)
      down[r] = parent[r] == kNoLane ? up[r] : down[parent[r]] + hop(parent[r], r, false);
    const Bytes data = shareOf(bytes, instances, q);
    for (uint32_t r = 0; r < n; ++r) {
      if (parent[r] == kNoLane) continue;
      for (int dir = 0; dir < 2; ++dir) {
        // Each edge sends its whole share as one transfer once its first chunk could go (the
        // steady state of the chunked pipeline: every edge busy at once), after the chunk's hops
        // below it (up) or from the root down to the sender (down); the transfer adds its own
        // path latency.
        Lane l;
        l.src = plan.members[dir == 0 ? r : parent[r]];
        l.dst = plan.members[dir == 0 ? parent[r] : r];
        l.total = 1;
        l.received = 1;
        l.pos = r;
        l.n = q;
        l.data = data;
        l.qp = static_cast<uint16_t>(q);
        l.kind = LaneKind::Whole;
        l.network = !sameHost(l.src, l.dst, g);
        l.fixedDelay = true;
        const Time start = dir == 0 ? up[r] : down[parent[r]];
        l.delay = start;
        plan.lanes.push_back(l);
        ++plan.remaining;
      }
    }
  }
}

Bytes TreeBuilder::chunkFor(Bytes perInstance, uint32_t ranksPerHost, uint32_t hosts, Bytes cap) {
  // NCCL's Simple step (NCCL_BUFFSIZE / NCCL_STEPS), the tree's chunk, at most the user's cap.
  Bytes chunk = std::min<Bytes>(cap, kConnectionBuffer / kNcclSteps);
  const Bytes depth = static_cast<Bytes>(ranksPerHost - 1) +
                      static_cast<Bytes>(std::bit_width(static_cast<uint64_t>(hosts - 1)));
  const auto halveWhile = [&](Bytes chunksPerDepth, Bytes floor) {
    while (chunk > floor && perInstance / chunk < depth * chunksPerDepth) chunk /= 2;
  };
  halveWhile(8, 128 * 1024);
  halveWhile(4, 64 * 1024);
  halveWhile(1, 32 * 1024);
  return std::max<Bytes>(chunk, 1);
}

}  // namespace fabricsim
