// Probe: a time series sampled during a run, for plotting queue and rate dynamics
// (`fabricsim run --probe queue=leaf-0:3 --probe flow=0-17 --probe-interval 1us`).
//
// Models: periodic sampling, every `interval` of simulated time from 0 until every workload has
// finished, of either one switch egress port's queue (bytes queued, all classes) or one flow's
// allowed sending rate (the congestion controller's rate of the first QP from GPU a to GPU b;
// the NIC's line rate when no controller is configured; 0 before the QP exists).
// Leaves out: sub-interval peaks (use a smaller interval), per-class queues.
// Units: t in microseconds, bytes, Gb/s.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/Simulator.h"
#include "sim/packet/PacketFabric.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class Probe final : public EventHandler {
 public:
  /// Parses "queue=NODE:PORT" or "flow=SRC_GPU-DST_GPU"; throws InputError (key "--probe").
  Probe(const std::string& text, Time interval, Simulator& sim, const Topology& topo, PacketFabric& fabric,
        std::function<bool()> done);

  void start() { sim_.schedule(Time::zero(), this, 0); }
  void onEvent(uint32_t tag) override;
  nlohmann::json toJson() const;

 private:
  enum class Kind { Queue, Flow };
  Kind kind_ = Kind::Queue;
  std::string text_;
  Time interval_;
  Simulator& sim_;
  const Topology& topo_;
  PacketFabric& fabric_;
  std::function<bool()> done_;
  PortId port_ = kInvalid;
  uint32_t srcGpu_ = 0, dstGpu_ = 0;
  std::vector<double> t_;
  std::vector<double> v_;
};

}  // namespace fabricsim
