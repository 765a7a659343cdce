// Nic: a RoCEv2 network interface: the sender and receiver ends of reliable connections.
//
// Models: segmentation of messages into MTU-sized packets with RoCEv2 framing, transmission
// at line rate with per-packet round-robin among active QPs (ACK/NACK replies first), PSN
// checking, ACKs (one per `ackEvery` in-order packets and at every message end), go-back-N on
// NACK or timeout, optional per-QP window, and message completion when the last byte arrives.
// Congestion control hooks in at pullData() (a rate limiter decides whether a QP may send).
// Leaves out: DCQCN and PFC (later issues), PCIe and host memory, multiple ports per NIC.
// Units: bytes, Time (ps).
#pragma once

#include <cstdint>
#include <deque>

#include "sim/core/Simulator.h"
#include "sim/packet/EgressPort.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"

namespace fabricsim {

class PacketFabric;

class Nic final : public EventHandler {
 public:
  void init(uint32_t index, Simulator* sim, PacketFabric* fabric, PacketPool* pool, PacketCounters* counters,
            EgressPort* port, uint32_t mtu, int ackEvery, uint32_t windowPackets, Time rto);

  /// A packet's last bit has arrived from the fabric.
  void receive(uint32_t pkt);
  /// Next data packet to transmit, or kNoPacket. Called by the port when it is idle.
  uint32_t pullData();
  bool hasPendingData() const { return !active_.empty(); }
  /// Puts a QP with data to send into the round-robin list and wakes the port.
  void activate(uint32_t qp);

  /// Retransmission timer of QP `tag`.
  void onEvent(uint32_t tag) override;

  uint32_t index() const { return index_; }

 private:
  void onData(Packet& p);
  void onAck(const Packet& p);
  void onNack(const Packet& p);
  void sendControl(PacketType type, uint32_t qp, uint32_t psn);
  void goBackTo(uint32_t qp, uint32_t psn);
  bool windowOpen(uint32_t sndNxt, uint32_t sndUna) const {
    return windowPackets_ == 0 || sndNxt - sndUna < windowPackets_;
  }

  uint32_t index_ = 0;
  Simulator* sim_ = nullptr;
  PacketFabric* fabric_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  EgressPort* port_ = nullptr;
  uint32_t mtu_ = 4096;
  int ackEvery_ = 1;
  uint32_t windowPackets_ = 0;
  Time rto_;
  std::deque<uint32_t> active_;
};

}  // namespace fabricsim
