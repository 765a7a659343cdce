// NetworkCounters: the totals a backend reports for the results' `network` section.
//
// Models: conservation counters over data payload bytes (sent by NICs including
// retransmissions = delivered to destination NICs + dropped in the fabric, once the network has
// drained), drops, queue maxima and link utilisation per tier.
// Each backend also says which of these it computes (CounterCoverage): a counter whose quantity
// the backend does not model is left out of the results (null, listed under `unmodelled`),
// because a 0 there would claim that nothing of the kind happened.
// Units: bytes; utilisation as a fraction of link capacity over the simulated time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

struct TierCounters {
  std::string name;    ///< e.g. "host-leaf up", "leaf-spine down"
  uint64_t links = 0;  ///< directed links in this tier
  double utilMean = 0;
  double utilMax = 0;
  Bytes maxQueueBytes = 0;
  uint64_t packetsDropped = 0;
  Bytes wireBytes = 0;  ///< bytes (with all overheads) transmitted
  /// Class-queue length seen by arriving packets, over all queues of the tier (switch ports).
  Bytes queueP50 = 0, queueP90 = 0, queueP99 = 0;
  double pfcPausedUs = 0;  ///< time the tier's ports spent paused, summed over ports
  uint64_t ecnMarks = 0;   ///< ECN CE (RoCEv2) / FECN (InfiniBand) marks set at the tier's switch ports
};

/// One port's time paused by PFC, for the most-paused list.
struct PausedPort {
  std::string node;
  uint32_t port = 0;
  std::string peer;
  double pausedUs = 0;
  uint64_t pauseFrames = 0;  ///< PAUSE frames it received (quanta > 0 and resumes)
};

/// One switch egress port's occupancy, for the busiest-queue list.
struct QueueStat {
  std::string node;
  uint32_t port = 0;
  std::string peer;
  Bytes p50 = 0, p99 = 0, max = 0;
  uint64_t samples = 0;
};

/// One traffic class's queue lengths as seen by its arriving data packets, over all switch ports.
struct ClassQueueStat {
  uint32_t tc = 0;
  Bytes p50 = 0, p90 = 0, p99 = 0, max = 0;
  uint64_t samples = 0;
};

/// One switch ingress port's PFC headroom: the most any of its lossless classes held at once.
struct HeadroomStat {
  std::string node;
  uint32_t port = 0;
  std::string peer;
  Bytes peak = 0;
  Bytes headroom = 0;  ///< what each lossless class of the port has
};

/// Lossless packets dropped at one (ingress port, class): an invariant violation (headroom set
/// too small by the user, or a model bug).
struct LosslessViolation {
  std::string node;
  uint32_t port = 0;
  std::string peer;
  uint32_t tc = 0;
  uint64_t drops = 0;
  Time first;
};

/// The quantities a backend models, one flag per group of counters (all true: the packet
/// backend, which sees every packet). Bytes sent, delivered and dropped at failures,
/// retransmissions, timeouts, NIC failovers, link utilisation and wire bytes are always computed.
struct CounterCoverage {
  bool packets = true;                  ///< packet counts (sent, dropped, link transmissions, in flight)
  bool nacks = true;                    ///< NAKs sent by receivers
  bool reordering = true;               ///< packets arriving out of order
  bool ecnMarks = true;                 ///< ECN CE / FECN marks
  bool congestionNotifications = true;  ///< CNPs and BECNs
  bool pfcFrames = true;                ///< PAUSE and resume frames, pauses propagated upstream
  bool pfcPausedTime = true;            ///< time and ports paused by PFC
  bool buffers = true;  ///< switch buffer admission: lossless drops, PFC headroom, the storm watchdog
  bool credits = true;  ///< InfiniBand credit balances
  bool queues = true;   ///< switch queue lengths

  /// None of the groups: only the counters every backend computes (a fluid backend's coverage).
  static CounterCoverage none() {
    CounterCoverage c;
    c.packets = c.nacks = c.reordering = c.ecnMarks = c.congestionNotifications = c.pfcFrames =
        c.pfcPausedTime = c.buffers = c.credits = c.queues = false;
    return c;
  }
};

struct NetworkCounters {
  CounterCoverage modelled;     ///< which of the counters below the backend computes
  Bytes bytesSent = 0;          ///< data payload transmitted by NICs, retransmissions included
  Bytes bytesDelivered = 0;     ///< data payload arriving at destination NICs (incl. discarded)
  Bytes bytesDropped = 0;       ///< data payload dropped in switches
  Bytes goodputBytes = 0;       ///< payload accepted in order (each message byte once)
  uint64_t packetsSent = 0;     ///< all packets injected by NICs (data and control)
  uint64_t packetsDropped = 0;  ///< all packets dropped (data and control)
  Bytes retransmittedBytes = 0;
  uint64_t retransmitTimeouts = 0;
  uint64_t nicFailovers = 0;  ///< connections moved to another NIC of their host (nic.failover)
  uint64_t nacksSent = 0;
  uint64_t outOfOrderPackets = 0;
  uint64_t ecnMarks = 0;
  uint64_t cnps = 0;
  uint64_t becns = 0;
  uint64_t pfcPauseFrames = 0;
  uint64_t pfcResumeFrames = 0;
  uint64_t pfcPausePropagated = 0;
  double pfcPausedUs = 0;                   ///< summed over every port and class
  uint64_t losslessDrops = 0;               ///< lossless packets dropped (must stay 0 with PFC or credits)
  uint64_t pfcStorms = 0;                   ///< classes the PFC storm watchdog took out of PFC
  uint64_t pfcStormDrops = 0;               ///< packets it dropped (not lossless violations: its policy)
  Bytes pfcMaxHeadroomUsed = 0;             ///< most headroom bytes a (port, priority) held
  std::vector<HeadroomStat> headroomPeaks;  ///< every port that used headroom, most first
  std::vector<LosslessViolation> losslessViolations;  ///< where lossless drops happened
  uint64_t blackholedPackets = 0;     ///< dropped by switches without a route (e.g. during reconvergence)
  Bytes blackholedBytes = 0;          ///< data payload of those
  uint64_t ttlExpiredPackets = 0;     ///< dropped by a switch with no hops left (forwarding loops)
  uint64_t deadLinkPackets = 0;       ///< lost on links that were down
  Bytes deadLinkBytes = 0;            ///< data payload of those
  Time lastRouteLoss = Time::ps(-1);  ///< time of the last such loss (negative: none)
  int64_t minCreditBytes = 0;         ///< lowest credit balance any port reached (InfiniBand; never < 0)
  /// Credit bytes not returned when counted (InfiniBand): 0 after a drained run, unless credits
  /// leaked (e.g. lost with packets on a dead link and never re-initialised).
  int64_t creditsOutstanding = 0;
  /// Class-queue length seen by arriving data packets, over all switch queues (ACK, CNP and PAUSE
  /// frames are not samples).
  Bytes queueP50 = 0, queueP90 = 0, queueP99 = 0;
  std::vector<ClassQueueStat> queueByClass;  ///< the same per traffic class (classes that carried data)
  std::vector<QueueStat> topQueues;          ///< the busiest switch queues by p99
  std::vector<PausedPort> mostPausedPorts;   ///< the ports (switch or NIC) paused longest, up to 10
  uint64_t pausedPorts = 0;                  ///< ports paused at least once
  Bytes maxQueueBytes = 0;                   ///< largest switch egress queue seen
  uint64_t linkTransmissions = 0;            ///< packets put on any link (each hop counts)
  /// The end of network activity: the last delivery, or the end of the last transmission on any
  /// link where that is later (retransmissions after a failure; trailing retransmission timers
  /// that find nothing to send are not activity). Utilisation is measured over [0, activeTime].
  Time activeTime;
  double linkUtilMean = 0;
  double linkUtilMax = 0;
  std::vector<TierCounters> perTier;
};

}  // namespace fabricsim
