// FlowFabric, hybrid mode: congestion episodes on the links a solve leaves congested, and the
// paces they hold their flows to (see FlowFabric.h, "Hybrid mode").
#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <tuple>

#include "sim/cc/CongestionControl.h"
#include "sim/core/Error.h"
#include "sim/flow/FlowFabric.h"
#include "sim/routing/FlowHash.h"

namespace fabricsim {

template <class Fn>
void FlowFabric::forEachCrossing(const MaxMinSolver::User& u, [[maybe_unused]] uint32_t link, Fn&& fn) const {
  const Active& a = active_[u.flow];
  if (a.group == kNoGroup) {
    const uint32_t hop = solver_.hopIndex(u);
    if (hop >= a.dataHops) return;  // an ACK share
    fn(Crossing{solver_.hops(u.flow).first(a.dataHops), hop, 1.0, a.burst, a.latency, a.record, a.qp, kNoMember});
    return;
  }
  // A group's hops merge every member's path (ACK shares included): each member whose own path
  // crosses the link is a passage of its own.
  const Group& g = groups_[a.group];
  const uint32_t hop = solver_.hopIndex(u);
  if (hop + 1 >= g.crossBegin.size()) return;  // its pace
  for (uint32_t i = g.crossBegin[hop]; i < g.crossBegin[hop + 1]; ++i) {
    const auto [m, k] = g.crossings[i];
    const GroupMember& gm = g.members[m];
    const std::span<const MaxMinSolver::Hop> path(g.paths.data() + gm.pathBegin, gm.pathEnd - gm.pathBegin);
    assert(path[k].resource == link);
    fn(Crossing{path, k, gm.share, gm.burst, gm.latency, gm.record, gm.qp, m});
  }
}

void FlowFabric::setEpisodeModel(CongestionEpisodeModel* model) {
  episodes_ = model;
  // The queue pairs' congestion-control states between episodes: the fabric's own algorithm.
  qpCc_ = model != nullptr ? makeCongestionControl(spec_.congestionControl) : nullptr;
  scratchCc_ = model != nullptr ? makeCongestionControl(spec_.congestionControl) : nullptr;
  qpSlots_.clear();
}

uint32_t FlowFabric::commitEpisodes(double tolerance) {
  // Jacobi: every congested link's episode is read from the same solution, and the flows are
  // held to their paces only after all of them are known, so the outcome does not depend on the
  // order in which the solver lists the links. Copied: the next solve rewrites the list.
  ++round_;  // the cached NIC shares and pass fractions are this solution's
  if (share_.size() < topo_.portCount()) {
    share_.assign(topo_.portCount(), 0);
    pass_.assign(topo_.portCount(), 0);
    shareStamp_.assign(topo_.portCount(), 0);
    passStamp_.assign(topo_.portCount(), 0);
  }
  touched_.assign(solver_.touchedResources().begin(), solver_.touchedResources().end());
  std::sort(touched_.begin(), touched_.end());
  targets_.clear();
  shapes_.clear();
  for (uint32_t r : touched_) {
    // Pace resources are not links; a NIC's own uplink is shared by its scheduler, without a
    // switch queue: never an episode.
    if (r >= topo_.portCount() || topo_.isHost(topo_.portNode(r)) || !solver_.saturated(r)) continue;
    shapes_.emplace_back();
    if (!episodeAt(r, shapes_.back())) shapes_.pop_back();
  }
  // Each episode as if alone on its switch, then with what the other episodes of its switch
  // hold of the buffer.
  for (Shape& shape : shapes_) evaluate(shape);
  shareSwitchBuffers();
  // An episode holds its flows where the link lost throughput, and also where it kept the link
  // busy but cut some flows below their fluid share: a congestion control need not be fair (IB
  // CC throttles a long message that shares a link with streams of short ones, while the link
  // stays full), and what one flow loses there the max-min solve gives to the others.
  auto cut = [&](double e) { return e < 1 - tolerance; };
  for (const Shape& shape : shapes_) {
    const auto& f = shape.answer.flows;
    if (cut(shape.answer.efficiency) || std::any_of(f.begin(), f.end(), cut))
      targets_.push_back(shape.answer);
  }
  // Each flow of an episode keeps the pace it had there (its fluid rate x the efficiency) for
  // the bytes the episode covered: the congestion control's state outlives the collision that
  // set it (a DCQCN queue pair cut in it recovers over milliseconds, whatever the link does).
  // A flow in two episodes keeps the slower pace.
  paces_.clear();
  recut_.clear();
  for (const Target& t : targets_) {
    draws_.clear();
    for (const MaxMinSolver::User& u : solver_.users(t.link)) {
      const Active& a = active_[u.flow];
      forEachCrossing(u, t.link, [&](const Crossing& c) {
        // A flow held to a pace since before this instant is in the episode's background, which
        // kept only part of its rate while the episode lasted: the flow loses the rest of that
        // time. It is spread over the bytes its pace still covers (a later pace to the same end),
        // not kept for the rest of the flow: the queue that cut it drains. (A flow paced at this
        // instant, in an earlier round, met this queue in the same collision: the slower of its
        // paces stands, as for a flow in two episodes of one round.)
        if (a.paced) {
          const double pace = solver_.capacity(a.pace);
          const double covered = std::max(0.0, left(a) - a.paceUntil);
          if (t.background < 1 - tolerance && covered > 0 && a.pacedAt < sim_.now()) {
            const double lost = (1 - t.background) * t.durationPs;
            recut_.emplace_back(u.flow, covered / (covered / pace + lost));
          }
          return;
        }
        if (!episodic(a)) return;
        // Which flow draws which of the episode's outcomes. A flow draws among the outcomes of
        // the flows of its size (its size quartile in the episode: those with less left, already
        // sending when the others came, end sooner). Among those, a queue pair whose congestion
        // control is still held from an earlier episode starts below the others and recovers
        // slowest (its target rate was cut): the lowest, the most held first. The others by the
        // luck of the packets: a hash of the transfer, the time and the run's seed
        // (deterministic, unrelated to the order of the flows, and drawn afresh at each episode
        // a flow takes part in). A group's members draw each as a flow of their own.
        Draw d;
        d.size = std::min(left(a) * c.share, static_cast<double>(c.burst));
        d.carried = a.held ? solver_.capacity(a.pace) * c.share / nominal_[c.path[0].resource] : 2.0;
        const uint64_t id = transfers_.record(c.record).id;
        d.hash = FlowHash::mix(sim_.seed() ^ (id * 0x9e3779b97f4a7c15ull) ^
                               static_cast<uint64_t>(sim_.now().picos()));
        d.flow = u.flow;
        d.crossing = c;
        draws_.push_back(d);
      });
    }
    // Size quartiles, as the episode measured them (CongestionEpisodeModel::flowQuartiles).
    std::sort(draws_.begin(), draws_.end(), [](const Draw& x, const Draw& y) {
      return x.size != y.size ? x.size < y.size : x.hash < y.hash;
    });
    const auto n = static_cast<uint32_t>(draws_.size());
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t quartile = 4 * i / n;
      draws_[i].begin = t.quartiles.empty() ? 0 : t.quartiles[2 * quartile];
      draws_[i].end =
          t.quartiles.empty() ? static_cast<uint32_t>(t.flows.size()) : t.quartiles[2 * quartile + 1];
    }
    std::sort(draws_.begin(), draws_.end(), [](const Draw& x, const Draw& y) {
      return std::tie(x.begin, x.end, x.carried, x.hash) < std::tie(y.begin, y.end, y.carried, y.hash);
    });
    for (uint32_t g = 0; g < n;) {
      uint32_t h = g;
      while (h < n && draws_[h].begin == draws_[g].begin && draws_[h].end == draws_[g].end) ++h;
      const double range = static_cast<double>(draws_[g].end - draws_[g].begin);
      for (uint32_t j = g; j < h; ++j) {
        const uint32_t f = draws_[j].flow;
        // The j-th of the group's m flows takes its outcomes at (j + 1/2) / m, and the state that
        // outcome's queue pair ended in.
        const size_t at = draws_[g].begin + std::min(static_cast<size_t>(range) - 1,
                                                     static_cast<size_t>((static_cast<double>(j - g) + 0.5) /
                                                                         static_cast<double>(h - g) * range));
        const double eff = range <= 0 ? t.efficiency : t.flows[at];
        const CongestionEpisodeModel::QueuePairState state =
            range > 0 && at < t.states.size() ? t.states[at] : CongestionEpisodeModel::QueuePairState{};
        // A group member's pace is share x the group's: the group's is its rate x the efficiency.
        paces_.emplace_back(f, std::max(solver_.rate(f) * eff, 1e-6 * nominal_[t.link]), state,
                            draws_[j].crossing.member);
      }
      g = h;
    }
  }
  // The background's flows: a flow in the backgrounds of two episodes of the round keeps the
  // lower of the two cuts (both worked out from its pace at the round's start: Jacobi).
  std::sort(recut_.begin(), recut_.end());
  for (size_t i = 0; i < recut_.size();) {
    const uint32_t f = recut_[i].first;
    double pace = recut_[i].second;
    for (; i < recut_.size() && recut_[i].first == f; ++i) pace = std::min(pace, recut_[i].second);
    solver_.setCapacity(active_[f].pace, pace);
    ++backgroundCuts_;
  }
  std::sort(paces_.begin(), paces_.end(), [](const auto& x, const auto& y) {
    return std::get<0>(x) != std::get<0>(y)   ? std::get<0>(x) < std::get<0>(y)
           : std::get<1>(x) != std::get<1>(y) ? std::get<1>(x) < std::get<1>(y)
                                              : std::get<3>(x) < std::get<3>(y);
  });
  uint32_t held = 0;
  for (size_t i = 0; i < paces_.size();) {
    // The slowest of its paces (first: sorted) holds the flow, and the state that outcome left
    // its queue pair in is the one the flow carries on. A group's other members carry the states
    // of their own slowest outcomes to their own queue pairs.
    const auto [f, pace, state, member] = paces_[i];
    Active& a = active_[f];
    carried_.clear();
    for (; i < paces_.size() && std::get<0>(paces_[i]) == f; ++i) {
      const auto& [g, p, st, m] = paces_[i];
      if (qpCc_ == nullptr || st.cc == nullptr ||
          std::find(carried_.begin(), carried_.end(), m) != carried_.end())
        continue;
      carried_.push_back(m);
      const uint64_t key = m == kNoMember ? queuePairKey(a.record, a.tc, a.qp)
                                          : queuePairKey(groups_[a.group].members[m].record, a.tc,
                                                         groups_[a.group].members[m].qp);
      const auto [slot, inserted] = qpSlots_.try_emplace(key, static_cast<uint32_t>(qpSlots_.size()));
      qpCc_->copyQueuePair(slot->second, *st.cc, st.qp, sim_.now() - Time::zero());
      if (m == member) {
        a.ccSlot = slot->second;
        a.holdMember = member;
      }
    }
    if (a.held) dropHeld(a);
    const double rest = left(a);
    a.paceUntil = rest - std::min(rest, static_cast<double>(a.burst));
    a.paced = true;
    a.pacedAt = sim_.now();
    a.pacedSlot = static_cast<uint32_t>(paced_.size());
    paced_.push_back(f);
    setPaceExpiry(f);  // at its current rate; the solve moves it with the rate
    solver_.setCapacity(a.pace, pace);
    ++held;
    ++pacesSet_;
  }
  return held;
}

double FlowFabric::left(const Active& a) const {
  return std::max(0.0, a.remaining - a.rate * static_cast<double>((sim_.now() - a.last).picos()));
}

double FlowFabric::offered(uint32_t f, const Crossing& c) {
  // What a flow brings to its first switch: its NIC's equal share if it takes part in episodes
  // on one path; a paced, lossless-class or sprayed flow brings its rate.
  const Active& a = active_[f];
  if (!episodic(a) || c.path[0].weight != 1.0f || !topo_.isHost(topo_.portNode(c.path[0].resource)))
    return solver_.rate(f) * c.share;
  const uint32_t nic = c.path[0].resource;
  if (shareStamp_[nic] != round_) {
    shareStamp_[nic] = round_;
    share_[nic] = nicShare(nic);
  }
  // A queue pair held by its carried congestion-control state brings no more than that rate.
  return a.held ? std::min(share_[nic], solver_.capacity(a.pace) * c.share) : share_[nic];
}

double FlowFabric::passFraction(uint32_t link) {
  if (passStamp_[link] == round_) return pass_[link];
  double load = 0;
  for (const MaxMinSolver::User& u : solver_.users(link))
    forEachCrossing(u, link, [&](const Crossing& c) { load += offered(u.flow, c) * c.path[c.hop].weight; });
  passStamp_[link] = round_;
  pass_[link] = load > solver_.capacity(link) ? solver_.capacity(link) / load : 1.0;
  return pass_[link];
}

double FlowFabric::nicShare(uint32_t nicPort) const {
  // A NIC serves its backlogged queue pairs in turn, whatever their paths' bottlenecks (it
  // does not know them): each gets an equal share of the port, except those held below it by
  // an episode's pace or their queue pair's carried state, which leave the rest to the others.
  double held = 0;
  uint32_t free = 0;
  for (const MaxMinSolver::User& u : solver_.users(nicPort)) {
    const Active& a = active_[u.flow];
    forEachCrossing(u, nicPort, [&](const Crossing& c) {
      if (c.hop != 0) return;  // not its NIC (a group member's path through this host's port)
      if (a.paced || a.held) {
        held += solver_.rate(u.flow) * c.share;
      } else {
        ++free;
      }
    });
  }
  return free == 0 ? 0.0 : std::max(0.0, nominal_[nicPort] - held) / free;
}

bool FlowFabric::episodeAt(uint32_t r, Shape& out) {
  // The episode's flows are all those crossing the link not held to the pace of an earlier
  // episode: those bottlenecked here and those limited elsewhere alike sit in its queue, whose
  // marks (or drops) cut any of them. The upstream port of each (the hop before this one) tells
  // how many ingress ports converge on this egress. The flows held to a pace bring their paces to the
  // link: the episode's background, whose senders the new queue cuts again (at packet level
  // they share its marks), and whose share the fluid leaves to the episode's flows.
  double link = nominal_[r];
  uint32_t backgroundFlows = 0;
  double nicRate = 0;  // bits/s
  arrivals_.clear();
  sizes_.clear();
  double bytes = 0;
  double latencyPs = 0;
  uint32_t n = 0;
  for (const MaxMinSolver::User& u : solver_.users(r)) {
    const Active& a = active_[u.flow];
    forEachCrossing(u, r, [&](const Crossing& c) {
      const auto hops = c.path;
      const uint32_t hop = c.hop;
      if (!episodic(a)) {
        link -= solver_.rate(u.flow) * c.share * hops[hop].weight;
        ++backgroundFlows;
        return;
      }
      // Its congestion control starts at its NIC's line rate, whatever share the NIC gives it.
      for (const MaxMinSolver::Hop& h : hops)
        if (topo_.isHost(topo_.portNode(h.resource))) {
          nicRate = std::max(nicRate, static_cast<double>(topo_.portRate(h.resource).bitsPerSecond()));
          break;
        }
      // Sprayed flows (fractional weights) have no single upstream port: each counts as its own.
      const bool single = hop > 0 && hops[hop].weight == 1.0f && hops[hop - 1].weight == 1.0f;
      // The most this flow could send here: what its NIC serves it, thinned on each switch link
      // before this one that is offered more than it carries (a FIFO passes each flow its share
      // of the capacity; such a link queues, an episode of its own).
      double thin = 1;
      for (uint32_t k = 0; k < hop; ++k)
        if (!topo_.isHost(topo_.portNode(hops[k].resource)))
          thin = std::min(thin, passFraction(hops[k].resource));
      const double rate = solver_.rate(u.flow) * c.share * hops[hop].weight;
      const double most = std::min(offered(u.flow, c) * thin * hops[hop].weight, nominal_[r]);
      const uint32_t own = c.member == kNoMember ? (0x80000000u | u.flow)
                                                 : (0xC0000000u | static_cast<uint32_t>(arrivals_.size()));
      const double start = std::min(offered(u.flow, c) * hops[hop].weight, nominal_[r]);
      arrivals_.push_back({single ? hops[hop - 1].resource : own, std::max(most, rate), std::max(start, rate)});
      // What it has left to bring through the episode (a pipelined ring's step at most).
      sizes_.push_back(std::min(left(a) * c.share, static_cast<double>(c.burst)));
      bytes += sizes_.back();
      latencyPs += static_cast<double>(c.latency.picos());
      ++n;
    });
  }
  // What each upstream port brings: its flows' arrivals added up (no more than the port
  // carries: the thinning above saw to it).
  std::sort(arrivals_.begin(), arrivals_.end(),
            [](const Arrival& x, const Arrival& y) { return x.port < y.port; });
  double arrival = 0;  // bytes/ps, over the ports
  double start = 0;    // the same at the senders' rates (each port at most its line rate)
  uint32_t fanIn = 0;
  for (size_t i = 0; i < arrivals_.size();) {
    const uint32_t port = arrivals_[i].port;
    double portStart = 0;
    for (; i < arrivals_.size() && arrivals_[i].port == port; ++i) {
      arrival += arrivals_[i].most;
      portStart += arrivals_[i].start;
    }
    start += std::min(portStart, nominal_[r]);
    ++fanIn;
  }
  // Whether a queue builds is what arrives (the thinned rates). How hard a congestion control
  // cuts in it is its senders' doing, which start at their NICs' shares: a queue before this one
  // under the same congestion control does not hand a flow on at a steady fair share (its flows
  // are cut unequally, and one passes at its own rate while its partner is cut). At packet level
  // a flow meeting a thinned one here is cut as deep as if that one arrived unthinned
  // (scripts/parking_lot.py). So the episode's ports arrive at their senders' rates. Without
  // congestion control an upstream queue holds what it cannot pass, and a FIFO passes each flow
  // its share.
  const double shaped = spec_.congestionControl.algorithm != "none" ? start : arrival;
  // No queue builds unless two ports feed it and the flows can arrive faster than it drains.
  if (fanIn < 2 || link <= kArrivalMargin * nominal_[r] || arrival <= link * (1 + kArrivalMargin)) return false;
  const double bitsPerByte = static_cast<double>(topo_.portRate(r).bitsPerSecond()) / nominal_[r];
  out.link = r;
  out.bytes = bytes;
  out.capacity = link;
  CongestionEpisode& e = out.episode;
  e = CongestionEpisode{};
  e.fanIn = fanIn;
  e.lineRate = topo_.portRate(r);
  e.background = BitRate::bps(static_cast<int64_t>((nominal_[r] - link) * bitsPerByte));
  e.backgroundFlows = e.background.bitsPerSecond() > 0 ? std::max(backgroundFlows, 1u) : 0;
  e.arrivalRate = BitRate::bps(static_cast<int64_t>(std::min(shaped / fanIn, nominal_[r]) * bitsPerByte));
  e.nicRate = BitRate::bps(
      static_cast<int64_t>(nicRate > 0 ? nicRate : static_cast<double>(e.lineRate.bitsPerSecond())));
  e.flows = n;
  // The flows' sizes: the largest, and each quartile's mean over it (an empty quartile, of fewer
  // than four flows, as the one below it).
  std::sort(sizes_.begin(), sizes_.end());
  e.bytesPerFlow = static_cast<Bytes>(sizes_.back());
  std::array<double, 4> sum{}, count{};
  for (uint32_t i = 0; i < n; ++i) {
    sum[4 * i / n] += sizes_[i];
    count[4 * i / n] += 1;
  }
  for (uint32_t q = 0; q < 4; ++q)
    e.sizeQuartiles[q] = count[q] > 0 ? std::min(1.0, sum[q] / count[q] / std::max(1.0, sizes_.back()))
                                      : e.sizeQuartiles[q - 1];
  e.pathLatency = Time::ps(static_cast<int64_t>(latencyPs / n));
  return true;
}

void FlowFabric::dropPaced(Active& a) {
  if (!a.paced) return;
  paceExpiries_.erase(paced_[a.pacedSlot]);
  const uint32_t moved = paced_.back();  // swap-remove from the list of paced flows
  paced_[a.pacedSlot] = moved;
  active_[moved].pacedSlot = a.pacedSlot;
  paced_.pop_back();
  a.paced = false;
}

void FlowFabric::dropHeld(Active& a) {
  if (!a.held) return;
  holdTimers_.erase(held_[a.heldSlot]);
  const uint32_t moved = held_.back();
  held_[a.heldSlot] = moved;
  active_[moved].heldSlot = a.heldSlot;
  held_.pop_back();
  a.held = false;
}

void FlowFabric::unpace(uint32_t f) {
  Active& a = active_[f];
  if (!a.paced) return;
  dropPaced(a);
  holdAtCarriedRate(f);
}

void FlowFabric::releasePace(Active& a) {
  if (a.pace == kNoPace) return;
  dropPaced(a);
  dropHeld(a);
  solver_.setCapacity(a.pace, kUnpaced);
  freePaces_.push_back(a.pace);
  a.pace = kNoPace;
}

uint64_t FlowFabric::queuePairKey(uint32_t record, uint8_t tc, uint16_t qp) const {
  const FlowRecord& rec = transfers_.record(record);
  const uint64_t srcNic = path_.sourceNic(rec.srcGpu, rec.dstGpu), dstNic = topo_.nicOfGpu(rec.dstGpu);
  return (srcNic << 40) | (dstNic << 19) | (static_cast<uint64_t>(tc & 7) << 16) | qp;
}

uint32_t FlowFabric::holdNic(uint32_t f) const {
  const Active& a = active_[f];
  if (a.group == kNoGroup || a.holdMember == kNoMember) return solver_.hops(f)[0].resource;
  const Group& g = groups_[a.group];
  return g.paths[g.members[a.holdMember].pathBegin].resource;
}

double FlowFabric::holdShare(uint32_t f) const {
  const Active& a = active_[f];
  return a.group == kNoGroup || a.holdMember == kNoMember ? 1.0 : groups_[a.group].members[a.holdMember].share;
}

double FlowFabric::carriedScale(uint32_t f) const {
  // Controller rates are line-rate bits per second; the solver's are payload bytes per ps, of
  // the whole flow (a group member's queue pair moves share x the group's rate).
  const Active& a = active_[f];
  if (qpCc_ == nullptr || a.ccSlot == kNoSlot) return 0;
  const uint32_t nic = holdNic(f);
  if (!topo_.isHost(topo_.portNode(nic))) return 0;
  return nominal_[nic] / static_cast<double>(topo_.portRate(nic).bitsPerSecond()) / holdShare(f);
}

void FlowFabric::holdGroupAtCarriedRate(uint32_t f) {
  // The member whose carried rate, over its share, is lowest now holds the group.
  Active& a = active_[f];
  const Group& g = groups_[a.group];
  double lowest = 0;
  for (uint32_t m = 0; m < g.members.size(); ++m) {
    const GroupMember& gm = g.members[m];
    const auto it = qpSlots_.find(queuePairKey(gm.record, a.tc, gm.qp));
    if (it == qpSlots_.end() || gm.pathEnd == gm.pathBegin) continue;
    const uint32_t nic = g.paths[gm.pathBegin].resource;
    const auto line = static_cast<double>(topo_.portRate(nic).bitsPerSecond());
    const auto rate = static_cast<double>(qpCc_->rate(it->second, sim_.now()).bitsPerSecond());
    if (rate >= line * (1 - 1e-6)) continue;
    const double perGroup = rate / line / gm.share;
    if (a.holdMember == kNoMember || perGroup < lowest) {
      lowest = perGroup;
      a.holdMember = m;
      a.ccSlot = it->second;
    }
  }
  if (a.holdMember == kNoMember) return;
  holdAtCarriedRate(f);
  if (a.held) ++carriedHolds_;
}

double FlowFabric::carriedRate(uint32_t f) {
  const double scale = carriedScale(f);
  if (scale <= 0) return 0;
  const uint32_t nic = holdNic(f);
  const auto line = static_cast<double>(topo_.portRate(nic).bitsPerSecond());
  const auto rate = static_cast<double>(qpCc_->rate(active_[f].ccSlot, sim_.now()).bitsPerSecond());
  return rate < line * (1 - 1e-6) ? rate * scale : 0.0;
}

void FlowFabric::holdAtCarriedRate(uint32_t f) {
  Active& a = active_[f];
  const double rate = carriedRate(f);
  if (rate <= 0) {
    dropHeld(a);
    holdTimers_.erase(f);
    solver_.setCapacity(a.pace, kUnpaced);
    return;
  }
  if (!a.held) {
    a.held = true;
    a.heldSlot = static_cast<uint32_t>(held_.size());
    held_.push_back(f);
  }
  // Held to the mean of its queue pair's rate until that rate has moved by more than the
  // episodes' tolerance from now (or reached line rate): the controller's own timers, stepped on
  // a copy. A DCQCN QP recovers in steps of 40 Mb/s every 55 us (paper preset): re-solving at
  // every step cost more than all the rest of an 8K-GPU run, and the mean carries the same bytes
  // by the interval's end as the steps do.
  const double scale = carriedScale(f);
  const auto line = static_cast<double>(topo_.portRate(holdNic(f)).bitsPerSecond());
  const Time now = sim_.now();
  scratchCc_->copyQueuePair(0, *qpCc_, a.ccSlot, Time::zero());
  const double r0 = rate / scale;
  const double tolerance = spec_.episodes.tolerance;
  double r = r0, area = 0;  // bits per second; bits per second x ps
  Time t = now;
  for (int step = 0; step < kMaxHoldSteps; ++step) {
    const Time next = scratchCc_->nextRateChange(0, t);
    if (next == Time::max()) break;
    area += r * static_cast<double>((next - t).picos());
    t = next;
    r = static_cast<double>(scratchCc_->rate(0, t).bitsPerSecond());
    if (std::abs(r - r0) > tolerance * r0 || r >= line * (1 - 1e-6)) break;
  }
  ++holdRefreshes_;
  if (t == now) {  // never changes on its own
    holdTimers_.erase(f);
    solver_.setCapacity(a.pace, rate);
    return;
  }
  holdTimers_.set(f, t);
  solver_.setCapacity(a.pace, area / static_cast<double>((t - now).picos()) * scale);
}

void FlowFabric::refreshHolds() {
  // Only the held flows whose hold interval has ended (their rate has moved by the tolerance).
  const Time now = sim_.now();
  while (!holdTimers_.empty() && holdTimers_.top().at <= now) holdAtCarriedRate(holdTimers_.top().flow);
}

void FlowFabric::setPaceExpiry(uint32_t f) {
  // When the flow's bytes left reach its pace's end (within half a byte: rounding in the fluid),
  // at its current rate; held to its end, or not moving, it has none.
  const Active& a = active_[f];
  if (a.paceUntil <= 0 || a.rate <= 0) {
    paceExpiries_.erase(f);
    return;
  }
  const double ps = std::max(0.0, a.remaining - a.paceUntil - 0.5) / a.rate;
  paceExpiries_.set(f, a.last + Time::ps(static_cast<int64_t>(std::ceil(ps))));
}

void FlowFabric::expirePaces(Time now) {
  // Only the flows whose pace ends by now (the heap's earliest), not every paced flow.
  while (!paceExpiries_.empty() && paceExpiries_.top().at <= now) {
    const uint32_t f = paceExpiries_.top().flow;
    settle(f, now);
    const Active& a = active_[f];
    if (a.remaining > a.paceUntil + 0.5)
      setPaceExpiry(f);  // not yet (rounding): later
    else
      unpace(f);  // leaves the heap
  }
}

void FlowFabric::schedulePaceExpiry() {
  if (paceExpiries_.empty()) return;
  const Time next = paceExpiries_.top().at;
  if (next < nextPaceExpiry_) {
    nextPaceExpiry_ = next;
    sim_.schedule(next, this, kPaceExpiry);
  }
}

}  // namespace fabricsim
