// PacketBench: shared scaffolding for tests that run the packet backend directly: a small
// leaf-spine spec, a bench owning topology, simulator, forwarding tables and fabric, and a
// completion log.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "sim/config/TopologySpec.h"
#include "sim/core/Simulator.h"
#include "sim/fabric/Fabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"

namespace fabricsim::testsupport {

/// Leaf-spine with 100 Gb/s links, 1 us propagation, MTU 4096, and every other setting at its
/// TopologySpec default (32 MiB buffers, no ECN, PFC or congestion control).
inline TopologySpec leafSpineSpec(int leaves, int spines, int hostsPerLeaf, const std::string& technology = "roce") {
  TopologySpec s;
  s.name = "test";
  s.kind = TopologyKind::LeafSpine;
  s.leafSpine.leaves = leaves;
  s.leafSpine.spines = spines;
  s.leafSpine.hostsPerLeaf = hostsPerLeaf;
  s.links.technology = technology;
  s.links.hostSpeed = BitRate::gbps(100);
  s.links.fabricSpeed = BitRate::gbps(100);
  s.links.latency = Time::us(1);
  s.links.mtu = 4096;
  return s;
}

/// Everything a packet-level run needs, built from one spec and seed. The fabric keeps a record
/// of every transfer (flowRecords()), which the tests inspect.
struct PacketBench {
  explicit PacketBench(const TopologySpec& s, uint64_t seed = 1)
      : spec(s), topo(buildTopology(spec)), sim(seed), fib(*topo, seed), fabric(sim, *topo, spec, fib) {
    fabric.keepFlowRecords(true);
  }
  TopologySpec spec;
  std::unique_ptr<Topology> topo;
  Simulator sim;
  EcmpFib fib;
  PacketFabric fabric;
};

/// Records each transfer's delivery time by tag.
struct DeliveryLog : TransferObserver {
  std::map<uint64_t, Time> at;
  void onTransferDelivered(uint64_t tag, Time when) override { at[tag] = when; }
};

}  // namespace fabricsim::testsupport
