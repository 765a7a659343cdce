#include "sim/workload/collectives/RingBuilder.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace fabricsim {

Time RingBuilder::pipelinedDelay(const CollectivePlan& plan, const BuildContext& ctx, const Lane& l,
                                 Time pathLatencies, uint32_t sharing) {
  const Time step = l.network ? plan.stepNet : plan.stepNv;
  const double wire = static_cast<double>(l.data) / plan.eff;
  const double rate = ctx.fabric.pathRate(l.src, l.dst);
  // A lane alone on its link moves at the link's rate, or the protocol's ceiling if lower.
  const double alone = plan.protoRate > 0 ? std::min(rate, plan.protoRate * 1e12) : rate;
  const double hiddenPs = std::max(0.0, sharing * wire / rate - wire / alone) * 1e12;
  const Time wait =
      pathLatencies - ctx.fabric.pathLatency(l.src, l.dst) - Time::ps(static_cast<int64_t>(hiddenPs));
  return std::max(step, wait);
}

void RingBuilder::addRing(CollectivePlan& plan, const BuildContext& ctx, LaneKind kind, uint32_t steps,
                          uint32_t ringSize, Bytes data, uint32_t ringChannels, uint8_t phase, bool gate,
                          uint32_t memberBase, uint32_t memberStride) {
  const uint32_t g = ctx.gpusPerHost;
  // The rotation per channel (see the header): only for a ring through all members.
  uint32_t rot = 0;  // GPUs per host when rotating, else 0
  if (memberBase == 0 && memberStride == 1 && ringSize == plan.members.size()) {
    uint32_t per = 1;
    while (per < ringSize && sameHost(plan.members[per], plan.members[0], g)) ++per;
    // Members are sorted, so hosts are contiguous: uniform when every block of `per` members
    // is one host.
    bool uniform = per > 1 && per < ringSize && ringSize % per == 0;
    for (uint32_t p = 0; uniform && p < ringSize; ++p)
      uniform = sameHost(plan.members[p], plan.members[(p / per) * per], g) &&
                (p % per != 0 || p == 0 || !sameHost(plan.members[p], plan.members[p - 1], g));
    if (uniform) rot = per;
  }
  auto member = [&](uint32_t c, uint32_t p) {
    const uint32_t idx = rot ? (p / rot) * rot + ((p % rot) + c) % rot : memberBase + p * memberStride;
    return idx;
  };
  // The sender and receiver GPUs of channel c's lane at position p. PXN: a rotated ring leaves
  // each host through the NIC of the rail it enters the next host on (its local GPU c mod G, the
  // host's entry GPU of this channel), so its inter-host hops stay on one rail as NCCL's do (the
  // exit GPU hands its data over NVLink to that rail's GPU, whose proxy sends it; that NVLink leg
  // is not a transfer here).
  auto endpoints = [&](uint32_t c, uint32_t p) {
    uint32_t src = plan.members[member(c, p)];
    const uint32_t dst = plan.members[member(c, (p + 1) % ringSize)];
    if (rot && !sameHost(src, dst, g)) src = plan.members[(p / rot) * rot + c % rot];
    return std::pair{src, dst};
  };
  // Pipelined: how many of the ring's lanes (over all channels) share each sender -> receiver
  // pair, hence its link: those lanes' data hide each other's latencies (pipelinedDelay).
  std::vector<uint64_t>& pairs = ctx.pairs;
  pairs.clear();
  if (plan.pipelined) {
    for (uint32_t c = 0; c < ringChannels; ++c)
      for (uint32_t p = 0; p < ringSize; ++p) {
        const auto [src, dst] = endpoints(c, p);
        pairs.push_back(static_cast<uint64_t>(src) << 32 | dst);
      }
    std::sort(pairs.begin(), pairs.end());
  }
  auto sharing = [&](uint32_t src, uint32_t dst) {
    const uint64_t key = static_cast<uint64_t>(src) << 32 | dst;
    const auto [lo, hi] = std::equal_range(pairs.begin(), pairs.end(), key);
    return static_cast<uint32_t>(hi - lo);
  };
  // Lanes of ring channel c at position p: first + c * ringSize + p; members member(c, p), each
  // sending to the next.
  const uint32_t first = static_cast<uint32_t>(plan.lanes.size());
  for (uint32_t c = 0; c < ringChannels; ++c) {
    const Bytes cd = shareOf(data, ringChannels, c);
    // Pipelined: each hop's latency (step latency plus path latency) and their prefix sums, for
    // the sum over the `steps` hops ending at each lane.
    std::vector<Time>& prefix = ctx.hopPrefix;
    if (plan.pipelined && (c == 0 || rot != 0)) {  // unrotated channels share one ring order
      prefix.assign(ringSize + 1, Time::zero());
      for (uint32_t p = 0; p < ringSize; ++p) {
        const uint32_t a = plan.members[member(c, p)], b = plan.members[member(c, (p + 1) % ringSize)];
        prefix[p + 1] =
            prefix[p] + ctx.fabric.pathLatency(a, b) + (sameHost(a, b, g) ? plan.stepNv : plan.stepNet);
      }
    }
    const Time cycle = plan.pipelined ? prefix[ringSize] : Time::zero();
    // Sum of the latencies of hops p - steps + 1 .. p (mod ringSize).
    auto window = [&](uint32_t p) {
      const int64_t full = steps / ringSize;
      const uint32_t rem = steps % ringSize;
      Time t = cycle * full;
      // the rem hops ending at p: indices p - rem + 1 .. p
      const int64_t lo = static_cast<int64_t>(p) + 1 - rem;
      if (lo >= 0)
        t += prefix[p + 1] - prefix[static_cast<size_t>(lo)];
      else
        t += prefix[p + 1] + (cycle - prefix[static_cast<size_t>(lo + ringSize)]);
      return t;
    };
    for (uint32_t p = 0; p < ringSize; ++p) {
      Lane l;
      const uint32_t q = (p + 1) % ringSize;
      std::tie(l.src, l.dst) = endpoints(c, p);
      l.pos = p;
      l.n = ringSize;
      l.dstIndex = member(c, q);
      l.qp = static_cast<uint16_t>(c);
      l.flow = LaneFlow::Ring;
      l.base = 1;
      l.phase = phase;
      l.gate = gate;
      l.network = !sameHost(l.src, l.dst, g);
      if (plan.pipelined) {
        // One send per ring edge and channel carrying every chunk its steps would: reduce-scatter
        // forwards all chunks but the sender's own, all-gather all but the receiver's.
        const Bytes rs = cd - shareOf(cd, ringSize, p);
        const Bytes ag = cd - shareOf(cd, ringSize, q);
        l.total = 1;
        l.data = kind == LaneKind::RingReduceScatter ? rs : kind == LaneKind::RingAllGather ? ag : rs + ag;
        l.kind = LaneKind::Whole;  // next stays kNoLane: no per-step dependency; phases still count receipts
        l.repeat = steps;
        l.delay = pipelinedDelay(plan, ctx, l, window(p), sharing(l.src, l.dst));
        plan.lanes.push_back(l);
        continue;
      }
      l.total = steps;
      l.next = first + c * ringSize + q;
      l.data = cd;
      l.kind = kind;
      l.overlap = true;
      plan.lanes.push_back(l);
    }
  }
  plan.remaining += static_cast<uint64_t>(plan.pipelined ? 1 : steps) * ringChannels * ringSize;
}

void RingBuilder::addBroadcastChain(CollectivePlan& plan, const BuildContext& ctx, uint32_t root, Bytes bytes,
                                    uint32_t channels) {
  // A chain through the ring order starting at the root, pipelined in chunks per channel.
  const uint32_t g = ctx.gpusPerHost;
  const uint32_t n = static_cast<uint32_t>(plan.members.size());
  plan.chunk = ctx.tuning.chunkSize;
  for (uint32_t c = 0; c < channels; ++c) {
    const Bytes cd = shareOf(bytes, channels, c);
    const uint32_t chunks = static_cast<uint32_t>((cd + plan.chunk - 1) / plan.chunk);
    const uint32_t first = static_cast<uint32_t>(plan.lanes.size());
    for (uint32_t p = 0; p + 1 < n; ++p) {
      Lane l;
      l.src = plan.members[(root + p) % n];
      l.dst = plan.members[(root + p + 1) % n];
      l.total = chunks;
      l.received = p == 0 ? chunks : 0;
      l.next = p + 2 < n ? first + p + 1 : kNoLane;
      l.pos = p;
      l.data = cd;
      l.qp = static_cast<uint16_t>(c);
      l.kind = LaneKind::Pipelined;
      l.window = pipelineWindow(plan.chunk);
      l.flow = LaneFlow::Chain;
      l.network = !sameHost(l.src, l.dst, g);
      plan.lanes.push_back(l);
    }
    plan.remaining += static_cast<uint64_t>(chunks) * (n - 1);
  }
}

}  // namespace fabricsim
