// Nic: a network interface running reliable connections (RoCEv2 RC, or InfiniBand RC): the
// sender and receiver ends.
//
// Models: segmentation of messages into MTU-sized packets with the link technology's framing,
// transmission with per-packet round-robin among active QPs (ACK/NACK/CNP replies first), PSN
// checking, ACKs (one per `ackEvery` in-order packets and at every message end), go-back-N on
// NACK or timeout, an optional per-QP window, and message completion when the last byte arrives.
// Retransmission timer (NicParams::retransmit): started by a packet sent with nothing
// outstanding, restarted at the initial RTO by every ACK that advances the oldest unacknowledged
// PSN (which also resets the retry counter), and on expiry go-back-N from that PSN with the next
// RTO of the schedule (RoCEv2: exponential backoff to a cap; InfiniBand: 4.096 us x 2^N each
// time). The timeout after `retryLimit` retries without progress fails the QP (PacketFabric::
// queuePairFailed), as a NIC completes its work requests with "retry counter exceeded". A NACK
// is not a timeout: it uses up no retry. The timer runs while the NIC is paused (PFC, credits).
// Receivers are strict (a gap triggers one NACK; out-of-order packets are discarded) or tolerant
// (out-of-order packets are placed and remembered in a ReorderBuffer, no NACK; losses are then
// recovered by the sender's timeout).
// Congestion control: before each data packet the QP's allowed rate (CongestionControl) spaces
// its packets (a QP waits in a pacing heap until its next packet may start); the receiver
// answers ECN-marked (FECN) packets with at most one CNP (BECN) per QP per interval; the
// sender feeds CNPs/BECNs to the controller. PFC PAUSE frames from the leaf stop the NIC's
// paused classes. InfiniBand credits are enforced by the NIC's EgressPort.
// A QP that fails over to another NIC (PacketFabric::failOver) is served by that NIC from then
// on; whatever still reaches the old one for it (an ACK, a timer) is handed to the new one.
// Leaves out: PCIe and host memory, multiple ports per NIC, the NIC sending PFC itself
// (its receive buffer is assumed to drain at line rate); the randomised initial timeout and
// partial backoff decrease of ConnectX adaptive retransmission profiles, and the IBTA's allowance
// for a timer that expires up to 4x after the local ACK timeout (the lower bound is used); RNR
// NAK retries.
// Units: bytes, Time (ps).
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/Simulator.h"
#include "sim/packet/EgressPort.h"
#include "sim/packet/NicParams.h"
#include "sim/packet/PacketCounters.h"
#include "sim/packet/PacketPool.h"
#include "sim/packet/PacketRing.h"

namespace fabricsim {

class PacketFabric;

class Nic final : public EventHandler {
 public:
  void init(uint32_t index, Simulator* sim, PacketFabric* fabric, PacketPool* pool, PacketCounters* counters,
            EgressPort* port, const NicParams* params);

  /// A packet's last bit has arrived from the fabric.
  void receive(uint32_t pkt);
  /// Next data packet to transmit in one of the `allowed` classes, or kNoPacket. Called by the
  /// port when it is idle.
  uint32_t pullData(uint8_t allowed);
  bool hasPendingData() const { return !active_.empty(); }
  /// Puts a QP with data to send into the round-robin list and wakes the port.
  void activate(uint32_t qp);

  /// Retransmission timer of QP `tag`, or (tag == kPaceWake) the pacing heap's wake-up.
  void onEvent(uint32_t tag) override;

  /// Failover: QP `qp` leaves this NIC (out of its round-robin list and pacing heap).
  void detach(uint32_t qp);
  /// Failover: QP `qp`, just moved to this NIC, resends from its oldest unacknowledged PSN, with
  /// its retransmission timer at the initial RTO.
  void resendAll(uint32_t qp);

  uint32_t index() const { return index_; }

  /// Starts or stops a PFC storm: the NIC sends PAUSE frames for every lossless class without a
  /// break, as one whose receive path has hung does (its own receiving is not affected here).
  void setPfcStorm(bool on);

 private:
  static constexpr uint32_t kPaceWake = 0x80000000u;
  static constexpr uint32_t kStormTick = 0x80000001u;

  void stormTick();
  void onData(Packet& p);
  void onDataTolerant(Packet& p);
  void onAck(const Packet& p);
  void onNack(const Packet& p);
  void sendControl(PacketType type, uint32_t qp, uint32_t psn);
  void goBackTo(uint32_t qp, uint32_t psn);
  /// Makes sure a timer event is live at or before the QP's deadline (no-op without a timer).
  void armTimer(uint32_t qp);
  void park(uint32_t qp, Time at);
  void wakeParked();
  bool windowOpen(uint32_t sndNxt, uint32_t sndUna) const {
    return params_->windowPackets == 0 || sndNxt - sndUna < params_->windowPackets;
  }

  uint32_t index_ = 0;
  Simulator* sim_ = nullptr;
  PacketFabric* fabric_ = nullptr;
  PacketPool* pool_ = nullptr;
  PacketCounters* counters_ = nullptr;
  EgressPort* port_ = nullptr;
  const NicParams* params_ = nullptr;
  PacketRing<uint32_t> active_;  // QPs with data to send, in turn (a ring: no allocation per turn)
  using Parked = std::pair<Time, uint32_t>;
  std::priority_queue<Parked, std::vector<Parked>, std::greater<>> parked_;
  Time wakeAt_ = Time::max();
  TimerId paceTimer_ = kNoTimer;
  TimerId stormTimer_ = kNoTimer;
  bool storming_ = false;
  std::vector<uint32_t> completedScratch_;
};

}  // namespace fabricsim
