// Switch: an output-queued packet switch with a shared buffer.
//
// Models: a packet arriving on any port is looked up in the ECMP forwarding table (O(1)) and
// admitted to its egress queue if the switch's shared buffer has room and the queue is below
// the dynamic threshold (Choudhury-Hahne): queue bytes + packet <= alpha x (buffer - used).
// Otherwise it is tail-dropped and counted. Buffer is held from admission until the packet
// starts transmission. The forwarding latency is applied by the upstream link (see EgressPort).
// Leaves out: ECN marking, PFC, ingress queues and cut-through (later issues), multicast.
// Units: bytes.
#pragma once

#include <cstdint>

#include "sim/packet/EgressPort.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"
#include "sim/routing/EcmpFib.h"

namespace fabricsim {

class Switch {
 public:
  void init(NodeId id, const EcmpFib* fib, PacketPool* pool, PacketCounters* counters, EgressPort* ports,
            PortId firstPort, uint64_t bufferBytes, double alpha);

  /// A packet's last bit has arrived on local port `inPort`.
  void receive(uint32_t pkt, uint32_t inPort);
  /// Called by an egress port when a packet leaves its queue for the wire.
  void onDequeue(uint32_t wireBytes) { used_ -= wireBytes; }

  NodeId id() const { return id_; }
  uint64_t bufferUsed() const { return used_; }
  uint64_t maxBufferUsed() const { return maxUsed_; }
  uint64_t drops() const { return drops_; }

 private:
  NodeId id_ = kInvalid;
  const EcmpFib* fib_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  EgressPort* ports_ = nullptr;  // this switch's ports, indexed by local port
  PortId firstPort_ = 0;
  uint64_t buffer_ = 0;
  uint64_t used_ = 0;
  uint64_t maxUsed_ = 0;
  double alpha_ = 1.0;
  uint64_t drops_ = 0;
};

}  // namespace fabricsim
