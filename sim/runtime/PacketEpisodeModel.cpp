#include "sim/runtime/PacketEpisodeModel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iterator>
#include <limits>
#include <thread>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "sim/cc/CongestionControl.h"
#include "sim/core/Error.h"
#include "sim/core/EventHandler.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/LinkFraming.h"
#include "sim/packet/PacketFabric.h"
#include "sim/packet/QueueHistogram.h"
#include "sim/report/MeanInterval.h"
#include "sim/routing/EcmpFib.h"
#include "sim/routing/FlowHash.h"
#include "sim/topology/TopologyBuilder.h"

namespace fabricsim {
namespace {

constexpr uint32_t kMaxCount = 128;  // upstream ports and flows
constexpr uint32_t kMaxPerPort = 8;
constexpr Bytes kMinBytes = 4096;
constexpr Bytes kMaxEpisodeBytes = Bytes{1} << 30;
constexpr Bytes kHeldSteps = 32;     // what other queues hold: in 32nds of the switch's buffer
constexpr uint32_t kMaxHeldStep = 28;  // at most: the episode keeps an eighth of the buffer

/// `held` bytes of a switch buffer of `buffer` bytes in its nearest 32nd, at most 28 (0 without a buffer).
uint32_t heldLevel(Bytes held, Bytes buffer) {
  if (buffer < kHeldSteps || held <= 0) return 0;
  const double steps = std::round(static_cast<double>(held) * kHeldSteps / static_cast<double>(buffer));
  return static_cast<uint32_t>(std::min<double>(steps, kMaxHeldStep));
}

/// x exact up to 16, then the nearest of four steps per octave (16, 20, 24, 28, 32, 40, ...).
uint32_t quantizeCount(uint32_t x) {
  if (x <= 16) return x;
  const int octave = static_cast<int>(std::floor(std::log2(static_cast<double>(x))));
  const double step = std::ldexp(1.0, octave - 2);
  return static_cast<uint32_t>(std::lround(std::round(x / step) * step));
}

/// Counts deliveries and stops the simulation at the last one.
class Countdown final : public TransferObserver {
 public:
  Countdown(Simulator& sim, uint32_t n) : sim_(sim), left_(n), times_(n) {}
  void onTransferDelivered(uint64_t tag, Time when) override {
    last_ = when;
    if (tag < times_.size()) times_[tag] = when;
    if (--left_ == 0) sim_.stop();
  }
  uint32_t left() const { return left_; }
  Time last() const { return last_; }
  /// Delivery time of the transfer tagged i (0..n-1).
  const std::vector<Time>& times() const { return times_; }

 private:
  Simulator& sim_;
  uint32_t left_;
  Time last_;
  std::vector<Time> times_;
};

/// Keeps a queue pair backlogged, as a sender whose data is all there: posts a message of one
/// size every `interval` (faster than the queue pair can send them, so that it never waits for
/// data, whatever the queueing delay), and counts the bytes delivered.
class Backlog final : public TransferObserver, public EventHandler {
 public:
  Backlog(Simulator& sim, Fabric& fabric, const TransferRequest& message, Time interval)
      : sim_(sim), fabric_(fabric), message_(message), interval_(interval) {}
  void start() { onEvent(0); }
  void onEvent(uint32_t) override {
    fabric_.send(message_, this);
    sim_.scheduleIn(interval_, this, 0);
  }
  void onTransferDelivered(uint64_t, Time) override { delivered_ += static_cast<double>(message_.bytes); }
  double delivered() const { return delivered_; }

 private:
  Simulator& sim_;
  Fabric& fabric_;
  TransferRequest message_;
  Time interval_;
  double delivered_ = 0;
};

}  // namespace

PacketEpisodeModel::PacketEpisodeModel(const TopologySpec& spec, uint64_t seed)
    : spec_(spec),
      seed_(seed),
      seeds_(spec.episodes.seeds),
      replicas_(spec.episodes.replicas),
      threads_(static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u))) {
  SIM_CHECK(seeds_ >= 1 && replicas_ >= 1 && replicas_ <= seeds_,
            "episodes need at least one seed and one replica, and no more replicas than seeds");
}

double PacketEpisodeModel::ratio(const std::vector<Measured>& runs, int group, int groups,
                                 double Measured::*num, double Measured::*den) {
  // Over the runs of the group (k % groups == group): sums, not a mean of ratios (times add,
  // efficiencies do not).
  double n = 0, d = 0;
  for (size_t k = static_cast<size_t>(group); k < runs.size(); k += static_cast<size_t>(groups)) {
    n += runs[k].*num;
    d += runs[k].*den;
  }
  return d > 0 ? std::clamp(n / d, 1e-3, 1.0) : 1.0;
}

double PacketEpisodeModel::harmonic(const std::vector<Measured>& runs, int group, int groups) {
  // The fluid time over the mean packet time: the capacity that gives the expected drain time.
  return ratio(runs, group, groups, &Measured::fluidTimeS, &Measured::packetTimeS);
}

double PacketEpisodeModel::backgroundKept(const std::vector<Measured>& runs, int group, int groups) {
  // What the background delivered over what it would have at its rate.
  return ratio(runs, group, groups, &Measured::backgroundBytes, &Measured::backgroundIdeal);
}

uint64_t PacketEpisodeModel::episodeSeed(int k) const {
  return k == 0 ? seed_ : FlowHash::mix(seed_ ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k)));
}

void PacketEpisodeModel::setReplica(int replica) {
  SIM_CHECK(replica >= 0 && replica <= replicas_,
            "an episode replica is 0 (every seed) or one of the groups");
  replica_ = replica;
}

CongestionEpisode PacketEpisodeModel::quantize(const CongestionEpisode& e, Bytes buffer) {
  SIM_CHECK(e.fanIn >= 2 && e.flows >= e.fanIn, "an episode needs two upstream ports and a flow from each");
  CongestionEpisode q = e;
  q.fanIn = quantizeCount(std::min(e.fanIn, kMaxCount));
  // Flows per upstream port are kept (up to kMaxPerPort), and so is the total where it can be.
  const double perPort = std::min<double>(double(e.flows) / e.fanIn, kMaxPerPort);
  q.flows = std::min(kMaxCount,
                     std::max(q.fanIn, quantizeCount(static_cast<uint32_t>(std::lround(perPort * q.fanIn)))));
  const double s = std::max<double>(static_cast<double>(e.bytesPerFlow), kMinBytes);
  Bytes bytes = static_cast<Bytes>(std::llround(std::exp2(std::round(2 * std::log2(s)) / 2)));
  bytes = std::min<Bytes>(bytes, kMaxEpisodeBytes / q.flows);
  q.bytesPerFlow = std::max<Bytes>(kMinBytes, bytes / 64 * 64);
  q.flows = std::min<uint32_t>(q.flows, static_cast<uint32_t>(kMaxEpisodeBytes / q.bytesPerFlow));
  q.flows = std::max(q.flows, q.fanIn);
  // The link's rate to the nearest eighth of the NIC's line rate (at least one eighth); the
  // background (what paced flows bring) to the nearest eighth of that, at most seven; the ports'
  // arrival rate likewise (at least one eighth, at most C). Where the episode overloads its link
  // (K A + B > C) and the quantized one would not, A is raised by eighths until it does (K >= 2
  // ports at C always do): quantizing must not turn a queue into no queue.
  const int64_t nic = e.nicRate.bitsPerSecond() > 0 ? e.nicRate.bitsPerSecond() : e.lineRate.bitsPerSecond();
  q.nicRate = BitRate::bps(nic);
  const double linkEighths = std::max(
      1.0, std::round(8.0 * static_cast<double>(e.lineRate.bitsPerSecond()) / static_cast<double>(nic)));
  q.lineRate = BitRate::bps(static_cast<int64_t>(linkEighths) * (nic / 8));
  const double line = static_cast<double>(e.lineRate.bitsPerSecond());
  const int64_t eighth = q.lineRate.bitsPerSecond() / 8;
  const double background =
      std::clamp(std::round(8.0 * static_cast<double>(e.background.bitsPerSecond()) / line), 0.0, 7.0);
  q.background = BitRate::bps(static_cast<int64_t>(background) * eighth);
  q.backgroundFlows = q.background.bitsPerSecond() > 0 ? std::clamp<uint32_t>(e.backgroundFlows, 1, 8) : 0;
  const double arrival = static_cast<double>(e.arrivalRate.bitsPerSecond());
  double eighths =
      std::clamp(std::round(8.0 * arrival / static_cast<double>(q.lineRate.bitsPerSecond())), 1.0, 8.0);
  const bool overload =
      (static_cast<double>(e.fanIn) * arrival + static_cast<double>(e.background.bitsPerSecond())) / line >
      1.0;
  while (overload && eighths < 8 && static_cast<double>(q.fanIn) * eighths + background <= 8.0) eighths += 1;
  q.arrivalRate = BitRate::bps(static_cast<int64_t>(eighths) * eighth);
  q.pathLatency = Time::ps((e.pathLatency.picos() + 125'000) / 250'000 * 250'000);
  // The flows' sizes: each quartile's to the nearest quarter of the largest (at least one; eighths
  // made 3.5 times as many distinct episodes on an 8K training job).
  for (double& f : q.sizeQuartiles) f = std::clamp(std::round(4.0 * f), 1.0, 4.0) / 4.0;
  // What the switch's other queues hold of its buffer: to the nearest 32nd of the buffer, at most
  // 28 (the episode keeps an eighth of it).
  q.bufferHeld = buffer > 0 ? heldLevel(e.bufferHeld, buffer) * (buffer / kHeldSteps) : 0;
  return q;
}

uint32_t PacketEpisodeModel::sizeLevel(const CongestionEpisode& q, uint32_t quartile) {
  return static_cast<uint32_t>(std::lround(4.0 * q.sizeQuartiles[quartile]));
}

double PacketEpisodeModel::efficiency(const CongestionEpisode& episode) {
  return answer(episode, replica_, last_);
}

PacketEpisodeModel::Key PacketEpisodeModel::keyOf(const CongestionEpisode& q, Bytes buffer) {
  return Key{q.fanIn,
             q.flows,
             q.arrivalRate.bitsPerSecond(),
             q.bytesPerFlow,
             q.lineRate.bitsPerSecond(),
             q.pathLatency.picos(),
             q.nicRate.bitsPerSecond(),
             q.background.bitsPerSecond(),
             q.backgroundFlows,
             sizeLevel(q, 0) | sizeLevel(q, 1) << 4 | sizeLevel(q, 2) << 8 | sizeLevel(q, 3) << 12,
             heldLevel(q.bufferHeld, buffer)};
}

PacketEpisodeModel::Entry& PacketEpisodeModel::entry(const Key& key, const CongestionEpisode& q,
                                                      std::unique_lock<std::mutex>& lock) {
  auto it = cache_.find(key);
  while (it == cache_.end() && inFlight_.count(key) > 0) {
    simulated_.wait(lock);
    it = cache_.find(key);
  }
  if (it != cache_.end()) return it->second;
  inFlight_.insert(key);
  lock.unlock();
  Entry fresh;
  try {
    fresh = measure(q);
  } catch (...) {
    lock.lock();
    inFlight_.erase(key);
    simulated_.notify_all();
    throw;
  }
  lock.lock();
  inFlight_.erase(key);
  wallSeconds_ += fresh.wallS;
  if (!fresh.seedIndependent) ++seedDependent_;
  it = cache_.emplace(key, std::move(fresh)).first;
  simulated_.notify_all();
  return it->second;
}

double PacketEpisodeModel::answer(const CongestionEpisode& episode, int replica, Answer& out) {
  // The cache and its counters are under one lock; an episode is simulated outside it, by the
  // first thread to ask, while others asking for the same one wait for it and those asking for
  // others go on (each answer is a function of the quantized episode alone, so which thread
  // simulates it first changes nothing).
  std::unique_lock<std::mutex> lock(mutex_);
  ++queries_;
  // InfiniBand switches give each input port its own credited buffer: nothing is shared.
  const Bytes buffer = spec_.links.technology == "infiniband" ? 0 : spec_.sw.buffer;
  const CongestionEpisode q = quantize(episode, buffer);
  // With part of the buffer held by other queues, the episode alone is simulated first: where
  // its runs left more room under every threshold than the others hold, the held buffer changes
  // no admission, and the runs would be the same: it answers.
  Entry* found = nullptr;
  if (q.bufferHeld > 0) {
    CongestionEpisode alone = q;
    alone.bufferHeld = 0;
    Entry& e = entry(keyOf(alone, buffer), alone, lock);
    if (static_cast<double>(q.bufferHeld) <= e.bufferSlack) found = &e;
  }
  Entry& e = found != nullptr ? *found : entry(keyOf(q, buffer), q, lock);
  ++e.uses;
  // Spans into the entry, which never changes once in the cache (std::map nodes stay put).
  const auto r = static_cast<size_t>(replica);
  out.flows = e.flows[r];
  out.states = e.states[r];
  out.quartiles = e.quartiles[r];
  out.background = e.background[r];
  out.queue = e.queue[r];
  return replica == 0 ? e.mean : e.groups[r - 1];
}

PacketEpisodeModel::Entry PacketEpisodeModel::measure(const CongestionEpisode& q) const {
  const auto t0 = std::chrono::steady_clock::now();
  Entry entry;
  // An episode whose first runs (one per replica group, at least three where there are that
  // many seeds) came out identical flow by flow, with no congestion-control state to carry,
  // does not depend on the seed (no congestion control acts and nothing random decides a drop
  // or a path): the other seeds would repeat it. Each seed's run is independent of the others:
  // they run on the model's threads, each into its own slot, so the runs (and everything
  // below) are the same on any number of them.
  const int first = std::min(seeds_, std::max(replicas_, 3));
  entry.runs = runSeeds(q, 0, first);
  if (identical(entry.runs)) {
    entry.seedIndependent = true;
  } else {
    std::vector<Measured> rest = runSeeds(q, first, seeds_);
    std::move(rest.begin(), rest.end(), std::back_inserter(entry.runs));
  }
  entry.mean = harmonic(entry.runs, 0, 1);
  std::vector<double> groups;
  for (int g = 0; g < replicas_; ++g)
    groups.push_back(entry.seedIndependent ? entry.mean : harmonic(entry.runs, g, replicas_));
  entry.groups = groups;
  entry.halfWidth = replicas_ >= 2 ? MeanInterval::of(groups).halfWidth : 0.0;
  // Each flow's efficiency (its bytes' time at the starting fluid share over its time) with
  // the state its queue pair ended in, by the size of its quartile, then by efficiency (ties
  // by run and flow: deterministic).
  std::vector<std::vector<std::tuple<uint32_t, double, size_t, uint32_t>>> pooled(
      static_cast<size_t>(replicas_) + 1);
  for (size_t k = 0; k < entry.runs.size(); ++k) {
    const Measured& m = entry.runs[k];
    for (uint32_t i = 0; i < m.flowTimesS.size(); ++i) {
      const double eff = std::max(m.flowFluidS[i] / std::max(m.flowTimesS[i], 1e-12), 1e-3);
      const uint32_t level = sizeLevel(q, quartileOf(i, q.flows));
      pooled[0].emplace_back(level, eff, k, i);
      pooled[1 + k % static_cast<size_t>(replicas_)].emplace_back(level, eff, k, i);
    }
  }
  for (auto& p : pooled) {
    std::sort(p.begin(), p.end());
    entry.flows.emplace_back();
    entry.states.emplace_back();
    entry.quartiles.emplace_back();
    for (const auto& [level, eff, k, i] : p) {
      entry.flows.back().push_back(eff);
      if (entry.runs[k].queuePairs) entry.states.back().push_back({entry.runs[k].queuePairs.get(), i});
    }
    // Quartile q's outcomes: those of every flow of its size.
    for (uint32_t quartile = 0; quartile < 4; ++quartile) {
      const uint32_t level = sizeLevel(q, quartile);
      const auto lo = std::lower_bound(p.begin(), p.end(), std::make_tuple(level, 0.0, size_t{0}, 0u));
      const auto hi = std::lower_bound(p.begin(), p.end(), std::make_tuple(level + 1, 0.0, size_t{0}, 0u));
      entry.quartiles.back()[2 * quartile] = static_cast<uint32_t>(lo - p.begin());
      entry.quartiles.back()[2 * quartile + 1] = static_cast<uint32_t>(hi - p.begin());
    }
  }
  entry.background.push_back(backgroundKept(entry.runs, 0, 1));
  for (int g = 0; g < replicas_; ++g) entry.background.push_back(backgroundKept(entry.runs, g, replicas_));
  const auto meanQueue = [&](int group, int groups) {
    double sum = 0, n = 0;
    for (size_t k = static_cast<size_t>(group); k < entry.runs.size(); k += static_cast<size_t>(groups), ++n)
      sum += entry.runs[k].queueBytes;
    return n > 0 ? sum / n : 0.0;
  };
  entry.queue.push_back(meanQueue(0, 1));
  entry.bufferSlack = entry.runs.front().bufferSlack;
  for (const Measured& m : entry.runs) entry.bufferSlack = std::min(entry.bufferSlack, m.bufferSlack);
  for (int g = 0; g < replicas_; ++g) entry.queue.push_back(meanQueue(g, replicas_));
  if (entry.seedIndependent) {
    // Every replica answers exactly as replica 0 does (a replica's rerun is then this run).
    for (size_t r = 1; r < entry.flows.size(); ++r) {
      entry.flows[r] = entry.flows[0];
      entry.states[r] = entry.states[0];
      entry.quartiles[r] = entry.quartiles[0];
      entry.background[r] = entry.background[0];
      entry.queue[r] = entry.queue[0];
    }
  }
  entry.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return entry;
}

std::vector<PacketEpisodeModel::Measured> PacketEpisodeModel::runSeeds(const CongestionEpisode& q, int from,
                                                                      int to) const {
  std::vector<Measured> runs(static_cast<size_t>(std::max(to - from, 0)));
  const int workers = std::min(threads_, static_cast<int>(runs.size()));
  if (workers <= 1) {
    for (size_t i = 0; i < runs.size(); ++i) runs[i] = simulate(q, episodeSeed(from + static_cast<int>(i)));
    return runs;
  }
  // Workers take the next seed until none is left; the first error (an invalid episode) is
  // rethrown here once every worker has stopped.
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex errorMutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < runs.size();) {
      try {
        runs[i] = simulate(q, episodeSeed(from + static_cast<int>(i)));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(errorMutex);
        if (!error) error = std::current_exception();
        next = runs.size();
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (int w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
  }
  if (error) std::rethrow_exception(error);
  return runs;
}

void PacketEpisodeModel::setThreads(int threads) {
  SIM_CHECK(threads >= 1, "an episode's seeds run on at least one thread");
  threads_ = threads;
}

PacketEpisodeModel::View::View(PacketEpisodeModel& model, int replica) : model_(model), replica_(replica) {
  SIM_CHECK(replica >= 0 && replica <= model.replicas(), "an episode replica is 0 (every seed) or one of the groups");
}

std::unique_ptr<PacketEpisodeModel::View> PacketEpisodeModel::view(int replica) {
  return std::make_unique<View>(*this, replica);
}

bool PacketEpisodeModel::identical(const std::vector<Measured>& runs) {
  for (const Measured& m : runs)
    if (m.queuePairs || m.flowTimesS != runs.front().flowTimesS || m.flowFluidS != runs.front().flowFluidS ||
        m.backgroundBytes != runs.front().backgroundBytes || m.backgroundIdeal != runs.front().backgroundIdeal)
      return false;
  return true;
}

PacketEpisodeModel::Measured PacketEpisodeModel::simulate(const CongestionEpisode& e, uint64_t seed) const {
  // Two levels, as traffic converges in a fabric: K upstream switches (leaves 1..K under one
  // spine, F hosts each) each hold one sender; their uplinks merge at the spine, whose egress
  // towards leaf 0 is the episode's link. Host links run at the ports' arrival rate A, switch
  // links at the line rate C. A background B adds leaf K+1, whose first host sends it at B to
  // host F of leaf 0.
  const bool background = e.background.bitsPerSecond() > 0;
  const uint32_t perLeaf = e.flows + (background ? 1 : 0);
  const uint32_t leaves = e.fanIn + 1 + (background ? 1 : 0);
  TopologySpec s = spec_;
  s.file.clear();
  s.name = "congestion-episode";
  s.kind = TopologyKind::LeafSpine;
  s.leafSpine = LeafSpineShape{};
  s.leafSpine.leaves = static_cast<int>(leaves);
  s.leafSpine.spines = 1;
  s.leafSpine.hostsPerLeaf = static_cast<int>(perLeaf);
  s.leafSpine.linksPerSpine = 1;
  s.rail = RailShape{};
  s.hosts.gpusPerHost = 1;
  s.hosts.nicsPerHost = 1;
  s.links.hostSpeed = e.arrivalRate.bitsPerSecond() > 0 ? e.arrivalRate : e.lineRate;
  s.links.fabricSpeed = e.lineRate;
  s.links.tierSpeeds.clear();
  s.links.latency = Time::ps(e.pathLatency.picos() / 4);  // four links from sender to receiver
  s.routing.algorithm = "ecmp";
  s.routing.controlPlane = "static";
  s.failures.clear();
  s.workload.clear();
  // What other queues of the switch hold of its shared buffer is not there for this one's.
  if (e.bufferHeld > 0) {
    SIM_CHECK(e.bufferHeld < s.sw.buffer, "a congestion episode's switch holds less than its whole buffer");
    s.sw.buffer -= e.bufferHeld;
  }
  // The shape LeafSpineBuilder would build from `s` (same nodes, links and order), except that
  // the background's sender is cabled at B and its receiver at C.
  const uint32_t backgroundSender = (leaves - 1) * perLeaf;
  const auto hostRate = [&](uint32_t h) {
    if (background && h == backgroundSender) return e.background;
    if (background && h == e.flows) return s.links.fabricSpeed;
    return s.links.hostSpeed;
  };
  Topology topo(1, 1);
  addHosts(topo, static_cast<size_t>(leaves) * perLeaf);
  std::vector<NodeId> leafNodes;
  for (uint32_t i = 0; i < leaves; ++i)
    leafNodes.push_back(topo.addSwitch(switchName("", "leaf", static_cast<int>(i)), 1));
  const NodeId spine = topo.addSwitch(switchName("", "spine", 0), 2);
  for (uint32_t h = 0; h < leaves * perLeaf; ++h)
    topo.addLink(h, leafNodes[h / perLeaf], hostRate(h), s.links.latency, 0);
  for (const NodeId leaf : leafNodes) topo.addLink(leaf, spine, s.links.fabricSpeed, s.links.latency, 1);
  topo.finalize();

  Simulator sim(seed);
  EcmpFib fib(topo, s.routing.hashSeed ^ seed, EcmpFib::optionsFor(s.routing));
  PacketFabric fabric(sim, topo, s, fib);
  const LinkFraming framing = s.links.technology == "infiniband" ? LinkFraming::ib() : LinkFraming::roce();
  const auto mtu = static_cast<uint32_t>(s.links.mtu);
  const double payloadPerBit = static_cast<double>(mtu) / framing.dataWireBytes(mtu) / 8;
  // The fluid makespan of the same shape: the episode's bytes through what the background
  // leaves of C, or the busiest upstream port's (ceil(F/K) flows) through its own rate A,
  // whichever is longer. What the shape's own rates impose is not the congestion control's
  // doing (the flow level has those limits already).
  const double linkPayload =
      static_cast<double>(e.lineRate.bitsPerSecond() - e.background.bitsPerSecond()) * payloadPerBit;
  const double portPayload = static_cast<double>(s.links.hostSpeed.bitsPerSecond()) * payloadPerBit;
  const auto sender = [&](uint32_t i) { return (1 + i % e.fanIn) * perLeaf; };
  // Flow i's bytes: its quartile's size (flows sorted by size, so the senders mix large and
  // small ones).
  std::vector<Bytes> sizes(e.flows);
  std::vector<double> perPort(e.fanIn, 0.0);
  double total = 0;
  for (uint32_t i = 0; i < e.flows; ++i) {
    const double size = static_cast<double>(e.bytesPerFlow) * e.sizeQuartiles[quartileOf(i, e.flows)];
    sizes[i] = std::max<Bytes>(64, static_cast<Bytes>(std::llround(size)) / 64 * 64);
    perPort[i % e.fanIn] += static_cast<double>(sizes[i]);
    total += static_cast<double>(sizes[i]);
  }
  const double busiestPort = std::ceil(static_cast<double>(e.flows) / e.fanIn);
  const double fluidTimeS =
      std::max(total / linkPayload, *std::max_element(perPort.begin(), perPort.end()) / portPayload);
  // Each flow's fluid share when they start: the link's or its busiest port's equal share.
  const double startShare = std::min(linkPayload / static_cast<double>(e.flows), portPayload / busiestPort);
  // The paced flows, one queue pair each whose congestion control starts at its share of B,
  // sending for as long as the episode lasts (the run stops at its last byte): 64 KiB messages
  // posted at twice that share.
  std::vector<std::unique_ptr<Backlog>> backlogs;
  if (background) {
    const uint32_t n = std::max(e.backgroundFlows, 1u);
    const BitRate share = BitRate::bps(e.background.bitsPerSecond() / n);
    fabric.setQueuePairLineRate(share);
    TransferRequest chunk;
    chunk.srcGpu = backgroundSender;
    chunk.dstGpu = e.flows;
    chunk.bytes = 64 << 10;
    chunk.tag = e.flows;
    const Time interval =
        Time::ps(static_cast<int64_t>(static_cast<double>(chunk.bytes) * 1e12 /
                                      (2.0 * static_cast<double>(share.bitsPerSecond()) * payloadPerBit)));
    for (uint32_t k = 0; k < n; ++k) {
      chunk.qp = static_cast<uint16_t>(k);
      backlogs.push_back(std::make_unique<Backlog>(sim, fabric, chunk, interval));
      backlogs.back()->start();
    }
  }
  fabric.setQueuePairLineRate(e.nicRate.bitsPerSecond() > 0 ? e.nicRate : e.lineRate);
  Countdown countdown(sim, e.flows);
  // One sender per upstream switch, with its share of the flows as queue pairs of its own (each
  // with its own congestion-control state), on a host link at the port's arrival rate: the
  // upstream ports bring what they bring without queueing themselves.
  for (uint32_t i = 0; i < e.flows; ++i) {
    TransferRequest r;
    r.srcGpu = sender(i);
    r.dstGpu = i;  // each to its own receiver: nothing after the episode's link holds it back
    r.bytes = sizes[i];
    r.tag = i;
    fabric.send(r, &countdown);
  }
  sim.run(Time::s(60));
  if (const auto failed = fabric.failures(); !failed.empty())
    throw std::runtime_error("a congestion episode simulated at packet level failed: " +
                             failed.front().message);
  SIM_CHECK(countdown.left() == 0, "a congestion episode did not finish within 60 s of simulated time");

  Measured m;
  m.fluidTimeS = fluidTimeS;
  const Time unloaded = fabric.pathLatency(sender(0), 0);
  m.packetTimeS = static_cast<double>((countdown.last() - unloaded).picos()) * 1e-12;
  for (uint32_t i = 0; i < e.flows; ++i) {
    m.flowTimesS.push_back(static_cast<double>((countdown.times()[i] - unloaded).picos()) * 1e-12);
    m.flowFluidS.push_back(static_cast<double>(sizes[i]) / startShare);
  }
  m.efficiency = std::clamp(m.fluidTimeS / m.packetTimeS, 1e-3, 1.0);
  for (const auto& b : backlogs) m.backgroundBytes += b->delivered();
  m.backgroundIdeal = static_cast<double>(e.background.bitsPerSecond()) * payloadPerBit * m.packetTimeS;
  // The flows' queue pairs as the run left them (the flows started at time 0).
  if (const CongestionControl* cc = fabric.congestionControl()) {
    std::shared_ptr<CongestionControl> copy = makeCongestionControl(s.congestionControl);
    for (uint32_t i = 0; i < e.flows; ++i) {
      const uint32_t qp = fabric.findQueuePair(topo.nicOfGpu(sender(i)), topo.nicOfGpu(i), 0, 0);
      SIM_CHECK(qp != kInvalid, "a congestion episode's flow has no queue pair");
      copy->copyQueuePair(i, *cc, qp, Time::zero());
    }
    m.queuePairs = std::move(copy);
  }
  // The queue at the episode's link: the spine's port to leaf 0, its receivers' leaf.
  const PortId congested = topo.port(spine, 0);
  SIM_CHECK(topo.peerNode(congested) == leafNodes[0], "a congestion episode's link is the spine's port to leaf 0");
  QueueHistogram queue;
  for (uint8_t tc = 0; tc < kTrafficClasses; ++tc)
    if (const auto h = fabric.port(congested).histogram(tc)) queue.merge(*h);
  m.queueBytes = queue.mean();
  // What the run's admissions left of every switch's shared pool: a lossy packet is admitted
  // while its queue stays within alpha x the free pool, and the pool has room. At no instant did
  // any switch hold more than its ports' peak queues added up (T), nor any queue more than its
  // peak (q, the packet included): a pool smaller by D admits every packet this run admitted
  // where q <= alpha (P - D - T) and T + a frame <= P - D.
  if (!s.sw.pfc.enabled && s.links.technology != "infiniband" && s.sw.dtAlpha > 0) {
    double slack = std::numeric_limits<double>::infinity();
    const double frame = framing.dataWireBytes(mtu);
    for (NodeId n = static_cast<NodeId>(topo.hostCount()); n < topo.nodeCount(); ++n) {
      double total = 0, top = 0;
      for (uint32_t l = 0; l < topo.degree(n); ++l) {
        const auto peak = static_cast<double>(fabric.port(topo.port(n, l)).maxQueuedBytes());
        total += peak;
        top = std::max(top, peak);
      }
      const auto pool = static_cast<double>(fabric.switchAt(n).mmu().sharedPool());
      slack = std::min({slack, pool - total - top / s.sw.dtAlpha, pool - total - frame});
    }
    m.bufferSlack = std::max(0.0, slack);
  }
  const NetworkCounters c = fabric.networkCounters();
  m.ecnMarks = c.ecnMarks;
  m.packetsDropped = c.packetsDropped;
  m.pfcPauseFrames = c.pfcPauseFrames;
  return m;
}

std::vector<std::string> PacketEpisodeModel::unmodelledEffects() {
  return {
      "coupling between congestion points under a congestion control: PFC pauses and credit stalls "
      "spreading upstream, victim flows (without one the fluid models them: flow-level PFC spreading)",
      "flows joining or leaving a congested link mid-episode (each episode is simulated with synchronous "
      "starts, each flow with its bytes left by size quartile; the flows a link already holds to a pace "
      "enter it as one background sender at their total pace)",
      "a queue pair's carried congestion-control state inside a new episode (the packet run starts every "
      "queue pair at line rate with fresh state; the held ones draw its lowest outcomes)",
      "queueing delay outside the episodes, and per-packet counters (ECN marks, drops, pauses) of the fabric "
      "(the simulated episodes' counters are in summary.hybrid_model.episodes)",
      "packet reordering",
      "link and switch failures inside congestion episodes (episodes run on an intact fabric; the flow level "
      "models failures as the flow backend does)",
      "connections failing after exhausted transport retries (a failed episode is an error)"};
}

nlohmann::json PacketEpisodeModel::episodesJson(size_t limit) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<Key, const Entry*>> all;
  for (const auto& [k, e] : cache_) all.emplace_back(k, &e);
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.second->uses > b.second->uses; });
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < all.size() && i < limit; ++i) {
    const auto& [k, e] = all[i];
    nlohmann::json runs = nlohmann::json::array();
    for (const Measured& m : e->runs)
      runs.push_back({{"efficiency", m.efficiency},
                      {"queue_bytes", m.queueBytes},
                      {"packet_time_us", m.packetTimeS * 1e6},
                      {"ecn_marks", m.ecnMarks},
                      {"packets_dropped", m.packetsDropped},
                      {"pfc_pause_frames", m.pfcPauseFrames}});
    out.push_back(
        {{"fan_in", std::get<0>(k)},
         {"flows", std::get<1>(k)},
         {"arrival_rate_gbps", static_cast<double>(std::get<2>(k)) * 1e-9},
         {"bytes_per_flow", std::get<3>(k)},
         {"line_rate_gbps", static_cast<double>(std::get<4>(k)) * 1e-9},
         {"path_latency_us", static_cast<double>(std::get<5>(k)) * 1e-6},
         {"nic_rate_gbps", static_cast<double>(std::get<6>(k)) * 1e-9},
         {"background_gbps", static_cast<double>(std::get<7>(k)) * 1e-9},
         {"background_flows", std::get<8>(k)},
         {"buffer_held_bytes", std::get<10>(k) * (spec_.sw.buffer / kHeldSteps)},
         {"queue_bytes", e->queue.front()},
         {"size_quartiles_quarters",
          {std::get<9>(k) & 15, std::get<9>(k) >> 4 & 15, std::get<9>(k) >> 8 & 15, std::get<9>(k) >> 12}},
         {"efficiency", e->mean},
         {"background_efficiency", e->background.front()},
         {"efficiency_ci95", {e->mean - e->halfWidth, e->mean + e->halfWidth}},
         {"fluid_time_us", e->runs.front().fluidTimeS * 1e6},
         {"seeds", runs},
         {"seed_independent", e->seedIndependent},
         {"uses", e->uses},
         {"wall_s", e->wallS}});
  }
  return out;
}

}  // namespace fabricsim
