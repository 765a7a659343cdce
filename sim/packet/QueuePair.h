// QueuePair: the state of one RoCEv2 reliable connection (RC QP), sender and receiver halves.
//
// Models: go-back-N reliability as RoCEv2 NICs implement it: the sender keeps the next PSN to
// send and the oldest unacknowledged PSN; the receiver accepts only the expected PSN, answers a
// gap with one NACK (until the gap is filled) and duplicates with a repeated ACK. A
// retransmission timer recovers a lost tail; it counts consecutive timeouts without progress
// (the IBTA retry counter, which also indexes the RTO backoff) and the QP fails when they run out.
// The timer is lazy: one pending event at or before the deadline, re-armed at the deadline when it
// fires early; a deadline moved earlier (backoff reset) schedules a new event and the old one is
// recognised as stale by its time (timerAt).
// Both halves live in one record because the simulator owns both ends.
// Leaves out: 24-bit PSN wrap-around, RNR NAKs, selective repeat (a later issue), atomics.
// Units: PSNs (packets), Time (ps).
#pragma once

#include <cstdint>

#include "sim/core/Time.h"

namespace fabricsim {

struct QueuePair {
  uint64_t tuple = 0;         ///< five-tuple digest, data direction
  uint64_t reverseTuple = 0;  ///< five-tuple digest, ACK direction
  uint32_t srcNic = 0;
  uint32_t dstNic = 0;
  // sender
  uint32_t sndNxt = 0;       ///< next PSN to transmit
  uint32_t sndUna = 0;       ///< oldest unacknowledged PSN
  uint32_t psnEnd = 0;       ///< one past the last PSN of posted messages
  uint32_t highestSent = 0;  ///< one past the highest PSN ever transmitted
  uint32_t msgHead = 0xFFFFFFFFu;  ///< oldest message not fully acknowledged
  uint32_t msgTail = 0xFFFFFFFFu;
  uint32_t sendMsg = 0xFFFFFFFFu;  ///< message containing sndNxt
  Time rtoDeadline;                ///< when the retransmission timer expires (data outstanding)
  Time timerAt = Time::max();      ///< time of its live timer event; Time::max(): none
  Time lastSend;    ///< when its last data packet started transmission (pacing)
  Time nextSend;    ///< earliest start of its next data packet under its allowed rate
  uint32_t lastWire = 0;
  Time lastNotify;  ///< receiver: when it last sent a CNP/BECN for this QP
  // receiver
  uint32_t ePsn = 0;               ///< expected PSN
  uint32_t rcvMsg = 0xFFFFFFFFu;   ///< message being received
  uint32_t reorder = 0xFFFFFFFFu;  ///< tolerant receiver: its ReorderBuffer slot, once it needs one
  uint16_t ackCount = 0;           ///< in-order packets since the last ACK
  uint16_t timeouts = 0;           ///< sender: consecutive timeouts without progress (retries used)
  uint16_t qpIndex = 0;            ///< the workload's QP index between its NICs (source-port entropy)
  uint8_t tc = 0;
  bool active = false;             ///< in its NIC's round-robin list
  bool nackSent = false;
  bool failed = false;             ///< sender gave up (retries exhausted or stalled): sends nothing more
  bool parked = false;             ///< waiting in its NIC's pacing heap
  bool notified = false;           ///< receiver: has sent a CNP/BECN before
};

}  // namespace fabricsim
