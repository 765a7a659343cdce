#include "sim/runtime/PacketEpisodeModel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "sim/core/Error.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/LinkFraming.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"

namespace fabricsim {
namespace {

constexpr uint32_t kMaxCount = 128;  // upstream ports and flows
constexpr uint32_t kMaxPerPort = 8;
constexpr Bytes kMinBytes = 4096;
constexpr Bytes kMaxEpisodeBytes = Bytes{1} << 30;

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
  Countdown(Simulator& sim, uint32_t n) : sim_(sim), left_(n) {}
  void onTransferDelivered(uint64_t /*tag*/, Time when) override {
    last_ = when;
    if (--left_ == 0) sim_.stop();
  }
  uint32_t left() const { return left_; }
  Time last() const { return last_; }

 private:
  Simulator& sim_;
  uint32_t left_;
  Time last_;
};

}  // namespace

PacketEpisodeModel::PacketEpisodeModel(const TopologySpec& spec, uint64_t seed) : spec_(spec), seed_(seed) {}

CongestionEpisode PacketEpisodeModel::quantize(const CongestionEpisode& e) {
  SIM_CHECK(e.fanIn >= 2 && e.flows >= e.fanIn, "an episode needs two upstream ports and a flow from each");
  CongestionEpisode q = e;
  q.fanIn = quantizeCount(std::min(e.fanIn, kMaxCount));
  // Flows per upstream port are kept (up to kMaxPerPort), and so is the total where it can be.
  const double perPort = std::min<double>(double(e.flows) / e.fanIn, kMaxPerPort);
  q.flows = std::min(kMaxCount,
                     std::max(q.fanIn, quantizeCount(static_cast<uint32_t>(std::lround(perPort * q.fanIn)))));
  // The arrival rate in eighths of the line rate (at least one eighth).
  const double eighths = std::clamp(std::round(8.0 * static_cast<double>(e.arrivalRate.bitsPerSecond()) /
                                               static_cast<double>(e.lineRate.bitsPerSecond())),
                                    1.0, 8.0);
  q.arrivalRate = BitRate::bps(static_cast<int64_t>(eighths) * (e.lineRate.bitsPerSecond() / 8));
  const double s = std::max<double>(static_cast<double>(e.bytesPerFlow), kMinBytes);
  Bytes bytes = static_cast<Bytes>(std::llround(std::exp2(std::round(2 * std::log2(s)) / 2)));
  bytes = std::min<Bytes>(bytes, kMaxEpisodeBytes / q.flows);
  q.bytesPerFlow = std::max<Bytes>(kMinBytes, bytes / 64 * 64);
  q.flows = std::min<uint32_t>(q.flows, static_cast<uint32_t>(kMaxEpisodeBytes / q.bytesPerFlow));
  q.flows = std::max(q.flows, q.fanIn);
  q.pathLatency = Time::ps((e.pathLatency.picos() + 125'000) / 250'000 * 250'000);
  return q;
}

double PacketEpisodeModel::efficiency(const CongestionEpisode& episode) {
  ++queries_;
  const CongestionEpisode q = quantize(episode);
  const Key key{q.fanIn,
                q.flows,
                q.arrivalRate.bitsPerSecond(),
                q.bytesPerFlow,
                q.lineRate.bitsPerSecond(),
                q.pathLatency.picos()};
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const auto t0 = std::chrono::steady_clock::now();
    it = cache_.emplace(key, simulate(q)).first;
    wallSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  ++it->second.uses;
  return it->second.efficiency;
}

PacketEpisodeModel::Measured PacketEpisodeModel::simulate(const CongestionEpisode& e) const {
  // Two levels, as traffic converges in a fabric: K upstream switches (leaves 1..K of a
  // one-spine leaf-spine) hold the F senders (sender i on leaf 1 + i % K); their uplinks merge at
  // the spine, whose egress towards leaf 0 is the episode's link. Each flow goes to its own
  // receiver on leaf 0, so nothing after the episode's link holds it back. Host links run at
  // the arrival rate, switch links at the line rate.
  const uint32_t perLeaf = e.flows;
  TopologySpec s = spec_;
  s.file.clear();
  s.name = "congestion-episode";
  s.kind = TopologyKind::LeafSpine;
  s.leafSpine = LeafSpineShape{};
  s.leafSpine.leaves = static_cast<int>(e.fanIn) + 1;
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

  const auto topo = buildTopology(s);
  Simulator sim(seed_);
  EcmpFib fib(*topo, s.routing.hashSeed ^ seed_, EcmpFib::optionsFor(s.routing));
  PacketFabric fabric(sim, *topo, s, fib);
  Countdown countdown(sim, e.flows);
  // At full arrival rate one receiver is no bottleneck (its link runs at C like the episode's).
  const bool fanOut = s.links.hostSpeed != s.links.fabricSpeed;
  const auto sender = [&](uint32_t i) { return (1 + i % e.fanIn) * perLeaf + i / e.fanIn; };
  for (uint32_t i = 0; i < e.flows; ++i) {
    TransferRequest r;
    r.srcGpu = sender(i);
    r.dstGpu = fanOut ? i : 0;
    r.bytes = e.bytesPerFlow;
    r.tag = i;
    fabric.send(r, &countdown);
  }
  sim.run(Time::s(60));
  if (const auto failed = fabric.failures(); !failed.empty())
    throw std::runtime_error("a congestion episode simulated at packet level failed: " +
                             failed.front().message);
  SIM_CHECK(countdown.left() == 0, "a congestion episode did not finish within 60 s of simulated time");

  const LinkFraming framing = s.links.technology == "infiniband" ? LinkFraming::ib() : LinkFraming::roce();
  const auto mtu = static_cast<uint32_t>(s.links.mtu);
  const double payloadBytesPerS =
      static_cast<double>(e.lineRate.bitsPerSecond()) / 8 * mtu / framing.dataWireBytes(mtu);
  Measured m;
  m.fluidTimeS = static_cast<double>(e.flows) * static_cast<double>(e.bytesPerFlow) / payloadBytesPerS;
  m.packetTimeS = static_cast<double>((countdown.last() - fabric.pathLatency(sender(0), 0)).picos()) * 1e-12;
  m.efficiency = std::clamp(m.fluidTimeS / m.packetTimeS, 1e-3, 1.0);
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
      "starts)",
      "queueing delay outside the episodes, and per-packet counters (ECN marks, drops, pauses) of the fabric "
      "(the simulated episodes' counters are in summary.hybrid_model.episodes)",
      "packet reordering",
      "link and switch failures during the run",
      "connections failing after exhausted transport retries (a failed episode is an error)"};
}

nlohmann::json PacketEpisodeModel::episodesJson(size_t limit) const {
  std::vector<std::pair<Key, Measured>> all(cache_.begin(), cache_.end());
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.second.uses > b.second.uses; });
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < all.size() && i < limit; ++i) {
    const auto& [k, m] = all[i];
    out.push_back({{"fan_in", std::get<0>(k)},
                   {"flows", std::get<1>(k)},
                   {"arrival_rate_gbps", static_cast<double>(std::get<2>(k)) * 1e-9},
                   {"bytes_per_flow", std::get<3>(k)},
                   {"line_rate_gbps", static_cast<double>(std::get<4>(k)) * 1e-9},
                   {"path_latency_us", static_cast<double>(std::get<5>(k)) * 1e-6},
                   {"efficiency", m.efficiency},
                   {"packet_time_us", m.packetTimeS * 1e6},
                   {"fluid_time_us", m.fluidTimeS * 1e6},
                   {"ecn_marks", m.ecnMarks},
                   {"packets_dropped", m.packetsDropped},
                   {"pfc_pause_frames", m.pfcPauseFrames},
                   {"uses", m.uses}});
  }
  return out;
}

}  // namespace fabricsim
