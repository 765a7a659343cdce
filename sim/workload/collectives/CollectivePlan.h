// CollectivePlan: one collective in flight: its lanes (what the builders made of the call) and
// the per-algorithm bookkeeping that decides when a lane's data have arrived.
//
// Models: a collective is done when every send of every lane has been delivered (`remaining`
// counts them down). The members are the participant GPUs in ascending order (hosts are then
// contiguous). Sends move user bytes / `eff` on the wire (the protocol's efficiency; NVLS lanes
// `nvlsEff`), each after its step latency (`stepNv` inside a host, `stepNet` across hosts).
// Plans are reused by the engine (their vectors keep their capacity).
// Leaves out: anything timed (the engine and the fabric).
// Units: Bytes; Time (ps).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"
#include "sim/workload/collectives/Lane.h"

namespace fabricsim {

class CollectiveListener;

/// What a plan's deliveries feed besides its lanes' own flows.
enum class PlanAlgo : uint8_t { Lanes, Tree, Hierarchical, NvlsTree };

struct CollectivePlan {
  bool inUse = false;
  bool pipelined = false;  ///< rings use the pipelined model (one send per edge)
  uint64_t id = 0;
  CollectiveListener* listener = nullptr;
  PlanAlgo algo = PlanAlgo::Lanes;
  uint64_t remaining = 0;  ///< sends not yet delivered
  Bytes chunk = 0;         ///< Pipelined lanes
  // The call's protocol: wire efficiency and per-step latencies (NVLink, network).
  double eff = 1.0;
  double nvlsEff = 1.0;  ///< NVLS lanes' wire efficiency
  Time stepNv, stepNet;
  /// The protocol's throughput ceiling per lane (LL, LL128), user bytes per ps; 0: none. A
  /// lane's send waits until the protocol has passed the previous one's data, and its delivery
  /// counts no earlier than the protocol passing its own (Lane::paceEnd).
  double protoRate = 0;
  std::vector<Lane> lanes;
  std::vector<uint32_t> members;  ///< participant GPUs in ring order
  // Hierarchical and NVLS tree
  uint32_t hosts = 0, perHost = 0, channels = 0, nvChannels = 0;
  uint32_t base2 = 0;                  ///< first lane of phase 2
  std::vector<uint32_t> railFirst;     ///< per local index: first lane of its phase-1 ring
  std::vector<uint32_t> railChannels;  ///< per local index: channels of its phase-1 ring
  std::vector<uint32_t> received;      ///< per member: phase-0 receipts, then phase-1 receipts
  std::vector<uint32_t> expected;      ///< NVLS tree, per member: its inter-host receipts
  // Tree (per tree t: 0..1, per rank)
  uint32_t ranks = 0;
  std::vector<uint32_t> parent;    ///< [t * N + r]
  std::vector<uint32_t> children;  ///< [(t * N + r) * 3 + i], kNoLane when absent

  /// Sets hosts and perHost from the members (equal GPUs per host, at least two hosts and two
  /// GPUs each: what `algorithm` needs; anything else is a bug: SimError).
  void splitByHost(uint32_t gpusPerHost, const char* algorithm);
};

}  // namespace fabricsim
