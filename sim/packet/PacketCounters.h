// PacketCounters: run-wide totals the packet backend's components increment as events happen.
// Units: bytes and counts.
#pragma once

#include <cstdint>

#include "sim/core/Time.h"

namespace fabricsim {

struct PacketCounters {
  uint64_t dataBytesSent = 0;       ///< payload put on the wire by NICs (incl. retransmissions)
  uint64_t dataBytesDelivered = 0;  ///< payload arriving at destination NICs
  uint64_t dataBytesDropped = 0;    ///< payload dropped in switches
  uint64_t goodputBytes = 0;        ///< payload accepted in order
  uint64_t packetsSent = 0;         ///< packets injected by NICs (data + control)
  uint64_t packetsDropped = 0;
  uint64_t retransmittedBytes = 0;
  uint64_t timeouts = 0;
  uint64_t nacks = 0;
  uint64_t outOfOrder = 0;
  uint64_t linkTransmissions = 0;
  uint64_t ecnMarks = 0;              ///< ECN CE (RoCEv2) or FECN (InfiniBand) marks
  uint64_t cnps = 0;                  ///< CNPs sent by RoCEv2 receivers
  uint64_t becns = 0;                 ///< BECNs sent by InfiniBand receivers
  uint64_t pfcPauseFrames = 0;        ///< PAUSE frames with quanta > 0 (first pauses and refreshes)
  uint64_t pfcResumeFrames = 0;       ///< PAUSE frames with quanta 0
  uint64_t pfcPausePropagated = 0;    ///< pauses sent while the sender was itself paused downstream
  uint64_t pfcStorms = 0;             ///< times the PFC storm watchdog took a class out of PFC
  uint64_t pfcStormDrops = 0;         ///< packets it dropped
  uint64_t losslessDrops = 0;         ///< lossless-class packets dropped (headroom exhausted: a violation)
  uint64_t blackholedPackets = 0;     ///< dropped for lack of a route
  uint64_t blackholedBytes = 0;       ///< data payload of those
  uint64_t ttlExpiredPackets = 0;     ///< dropped with no hops left (a forwarding loop)
  uint64_t deadLinkPackets = 0;       ///< lost on a link that was down
  uint64_t deadLinkBytes = 0;         ///< data payload of those
  Time lastRouteLoss = Time::ps(-1);  ///< when the last packet was black-holed or lost on a dead link
  Time lastDelivery;                  ///< when the last packet reached a NIC (or NVLink delivered)
};

}  // namespace fabricsim
