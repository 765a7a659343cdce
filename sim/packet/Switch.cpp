#include "sim/packet/Switch.h"

namespace fabricsim {

void Switch::init(NodeId id, const EcmpFib* fib, PacketPool* pool, PacketCounters* counters, EgressPort* ports,
                  PortId firstPort, uint64_t bufferBytes, double alpha) {
  id_ = id;
  fib_ = fib;
  pool_ = pool;
  counters_ = counters;
  ports_ = ports;
  firstPort_ = firstPort;
  buffer_ = bufferBytes;
  alpha_ = alpha;
}

void Switch::receive(uint32_t pkt, uint32_t /*inPort*/) {
  Packet& p = pool_->get(pkt);
  const PortId out = fib_->nextHop(id_, p.dstNic, p.tuple);
  EgressPort& port = ports_[out - firstPort_];
  const uint64_t freeBytes = buffer_ - used_;
  const uint64_t threshold = static_cast<uint64_t>(alpha_ * static_cast<double>(freeBytes));
  if (p.wireBytes > freeBytes || port.queueBytes(p.tc) + p.wireBytes > threshold) {
    ++drops_;
    port.countDrop();
    ++counters_->packetsDropped;
    if (p.type == PacketType::Data) counters_->dataBytesDropped += p.payload;
    pool_->release(pkt);
    return;
  }
  used_ += p.wireBytes;
  if (used_ > maxUsed_) maxUsed_ = used_;
  port.enqueue(pkt);
}

}  // namespace fabricsim
