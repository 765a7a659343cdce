#include "sim/workload/collectives/NvlsBuilder.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

void NvlsBuilder::addLane(CollectivePlan& plan, uint32_t a, uint32_t b, Bytes user, Time delay, uint8_t phase,
                          bool gate) {
  Lane l;
  l.src = plan.members[a];
  l.dst = plan.members[b];
  l.total = 1;
  l.received = 1;
  l.pos = a;
  l.dstIndex = b;
  l.data = user;
  l.kind = LaneKind::Whole;
  l.phase = phase;
  l.gate = gate;
  l.fixedDelay = true;
  l.delay = delay;
  l.nvlsWire = true;
  plan.lanes.push_back(l);
  ++plan.remaining;
}

void NvlsBuilder::build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes) {
  const uint32_t n = static_cast<uint32_t>(plan.members.size());
  const double S = static_cast<double>(bytes);
  const double perPair = S * (n + 1) / (static_cast<double>(n) * (n - 1));
  const Bytes user = std::max<Bytes>(1, static_cast<Bytes>(std::ceil(perPair)));
  plan.nvlsEff = ctx.tuning.nvlsEfficiency;
  const double nvRate = ctx.fabric.pathRate(plan.members[0], plan.members[1]) * plan.nvlsEff;
  const double pipeline = static_cast<double>(ctx.tuning.nvlsPipeline);
  const Time fill = Time::ps(static_cast<int64_t>(std::min(S, pipeline) / nvRate * 1e12));
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = 0; b < n; ++b)
      if (a != b) addLane(plan, a, b, user, ctx.tuning.nvlsLatency + fill, 0, true);
}

}  // namespace fabricsim
