// TreeBuilder: NCCL's tree all-reduce: a double binary tree over the hosts (two complementary
// trees, TreeShape, each carrying half of the data) with a chain inside each host towards its
// head, reduce up then broadcast down, pipelined in chunks sized as NCCL sizes them (chunkFor).
//
// Models (chunked, the packet backend's default): instances (tree t, channel c), each carrying
// 1/(2C) of the data, with an up lane (rank
// -> parent) and a down lane (parent -> rank) per rank but the root, at most kConnectionBuffer in
// flight per lane, its sends in order (one connection). Instance q = t C + c enters and leaves
// every host through its local GPU c mod G (G: the host's GPUs in the call; both trees of a
// channel on one NIC), the head of its chain through the host's GPUs in
// turn from there; so the instances' inter-host edges spread over the hosts' NICs, rail-matched
// (the same local GPU, hence the same rail, on both ends), as NCCL's tree channels do. A rank
// sends chunk j up once every child has delivered chunk j to it; the root instead starts
// broadcasting chunk j to its children; a rank forwards chunk j down once it has it.
// Leaves out: NCCL's balanced and split tree patterns (the parent reached from one GPU of the
// host, the children from another: here one GPU of the host per instance does both), and the
// reduction arithmetic.
// Units: Bytes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/workload/collectives/BuildContext.h"
#include "sim/workload/collectives/CollectivePlan.h"

namespace fabricsim {

class TreeBuilder {
 public:
  /// Lays out the all-reduce of `bytes` over plan.members (the plan's algo becomes Tree) on
  /// `channels` channels (two tree instances each).
  static void build(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes, uint32_t channels);

  /// The pipelined model (the flow backend's default, as for rings): every tree edge of every
  /// instance sends its whole share as one transfer after the latency its first chunk needs to
  /// reach it (each hop below it going up, or from the root down to its sender: step latency,
  /// path latency and one chunk's serialization per hop). Chunked, a 64-host tree of 16
  /// instances holds tens of thousands of transfers in flight; pipelined, one per edge.
  static void buildPipelined(CollectivePlan& plan, const BuildContext& ctx, Bytes bytes, uint32_t instances);

  /// The chunk NCCL's tree pipelines `perInstance` bytes in (enqueue.cc, Simple, pattern
  /// TreeUpDown): its Simple step (kConnectionBuffer / kNcclSteps, at most `cap`), halved while
  /// the instance has fewer than 8 chunks per tree level (down to 128 KiB), 4 (to 64 KiB), 1 (to
  /// 32 KiB). The tree's depth: the chain inside a host (ranksPerHost - 1) plus log2(hosts).
  static Bytes chunkFor(Bytes perInstance, uint32_t ranksPerHost, uint32_t hosts, Bytes cap);

  /// A send of tree lane `lane` has been delivered: raises the `received` of the lanes it
  /// unlocks and calls pump(lane) for each.
  template <class Pump>
  static void onDelivered(CollectivePlan& plan, uint32_t lane, Pump&& pump) {
    const uint32_t n = plan.ranks;
    const uint32_t q = lane / (2 * n);
    const uint32_t first = q * 2 * n;
    const Lane& l = plan.lanes[lane];
    const size_t t = l.n;  // the instance
    const uint32_t r = l.pos;
    if (l.flow == LaneFlow::TreeUp) {
      const uint32_t up = plan.parent[t * n + r];
      const uint32_t* ch = &plan.children[(t * n + up) * 3];
      uint32_t all = plan.lanes[first + ch[0]].delivered;
      for (int i = 1; i < 3 && ch[i] != kNoLane; ++i)
        all = std::min(all, plan.lanes[first + ch[i]].delivered);
      if (plan.parent[t * n + up] != kNoLane) {
        Lane& next = plan.lanes[first + up];
        if (all > next.received) {
          next.received = all;
          pump(first + up);
        }
      } else {
        for (int i = 0; i < 3 && ch[i] != kNoLane; ++i) {
          Lane& down = plan.lanes[first + n + ch[i]];
          if (all > down.received) {
            down.received = all;
            pump(first + n + ch[i]);
          }
        }
      }
    } else {
      const uint32_t got = l.delivered;
      const uint32_t* ch = &plan.children[(t * n + r) * 3];
      for (int i = 0; i < 3 && ch[i] != kNoLane; ++i) {
        Lane& down = plan.lanes[first + n + ch[i]];
        down.received = got;
        pump(first + n + ch[i]);
      }
    }
  }
};

}  // namespace fabricsim
