// PathLatency: the fixed latency of a routed path through the fabric, independent of size.
//
// Models: what a transfer pays on an idle path besides the serialization of its own bytes at
// the bottleneck: every link's propagation delay, every switch's forwarding latency, and one
// frame's store-and-forward at every hop after the first (each switch receives a whole frame
// before it sends it on). The path is the one the ECMP tables give the five-tuple `tuple`.
// Leaves out: queueing (an idle path) and NVLink (the caller handles intra-host transfers).
// Units: Time (ps); frameBytes on the wire (payload plus framing).
#pragma once

#include <cstdint>

#include "sim/core/Time.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

/// Fixed latency from NIC `srcNic` to NIC `dstNic` (which must be reachable from srcNic's switch).
Time pathFixedLatency(const Topology& topo, const EcmpFib& fib, uint32_t srcNic, uint32_t dstNic, uint64_t tuple,
                      uint32_t frameBytes, Time switchLatency);

}  // namespace fabricsim
