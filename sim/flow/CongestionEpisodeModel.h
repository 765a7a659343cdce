// CongestionEpisodeModel: how much of a congested link's fluid capacity a congestion-control scheme
// delivers, and to which flows, for the flow backend's hybrid mode (--backend hybrid).
//
// Models: a congestion episode is a switch egress link that max-min fairness has saturated, crossed
// by flows from different upstream ports (all of them, those bottlenecked elsewhere too: they share
// its queue), whose arrival rates (what each could send: its NIC's share for it, bounded by what
// the other flows leave it on the switch links before this one, and at most what their upstream
// port carries) add up to more than what the link leaves them (its rate less what flows held to an
// earlier episode's pace bring to it, the episode's background): a queue builds there when they
// start. The flows need not have the same bytes left: those that were already sending when the
// others came have less, and at packet level they end while the newcomers, cut as deep, carry on at
// their cut rates (the episode keeps the sizes' quartiles). An episode is one congestion point:
// where flows sharing an upstream port would queue there too, that link is an episode of its own.
// Flows that merely fill the link (for example QPs already held to their share by their own NIC) do
// not build one. Under a real scheme the flows do not drain the link at the fluid rate at once:
// DCQCN starts at line rate, builds a queue, cuts on CNPs and recovers on timers; IB CC throttles
// on BECNs; with no congestion control a lossy switch drops once its buffer is full and go-back-N
// resends, and a lossless one pauses its senders. The model answers with the efficiency: the fluid
// drain time of the episode's bytes (through what the background leaves of the link) over the time
// the scheme takes, in (0, 1]; flow by flow, the time its bytes take at the starting fluid share
// over the time it took (schemes are not fair: some flows finish early, some are cut hard), for the
// flows of each size; and what the background kept of its rate meanwhile (the new queue cuts the
// paced flows too). The flow backend holds each flow of the episode to its fluid rate times one of
// those, and the flows of the background to their paces times what it kept. A model may also say in
// which state each flow left its queue pair's congestion control (a DCQCN QP cut hard recovers over
// milliseconds), for the flow's next message on the same queue pair.
// The episodes of one switch share its packet buffer: each is told what the others' queues hold
// (CongestionEpisode::bufferHeld), from the queues the model says they build (queueBytes()).
// Leaves out: everything else that couples episodes (PFC pauses spreading upstream, victim flows,
// CNP traffic), which an implementation states in its own header.
// Units: Bytes, BitRate (line rate), Time (ps).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

class CongestionControl;

struct CongestionEpisode {
  uint32_t fanIn = 0;  ///< distinct upstream ports feeding the episode's flows (>= 2)
  uint32_t flows = 0;  ///< flows crossing the link, not held to a pace (>= fanIn)
  /// Mean over the upstream ports of the rate their flows arrive at together: under a congestion
  /// control, the rates their senders start at (each flow its NIC's share, a port's flows
  /// together at most its line rate); without one, what the links before leave them (each flow
  /// thinned on a link offered more than it carries). <= lineRate; the thinned rates overload
  /// the link (the episode exists), so fanIn x arrivalRate + background > lineRate.
  BitRate arrivalRate;
  /// What the flow with the most left brings through the episode (its bytes left, at most its
  /// TransferRequest::burst).
  Bytes bytesPerFlow = 0;
  /// The flows' bytes left, sorted and cut in quartiles: each quartile's mean over bytesPerFlow,
  /// in (0, 1], ascending. Flows that were already sending when the others arrived have less
  /// left: all 1 when the flows start together.
  std::array<double, 4> sizeQuartiles{1.0, 1.0, 1.0, 1.0};
  BitRate lineRate;  ///< the congested link's line rate
  /// What flows held to an earlier episode's pace bring to the link (their paces added up):
  /// senders already cut by their congestion control, which the new queue cuts again. < lineRate.
  BitRate background;
  uint32_t backgroundFlows = 0;  ///< how many flows make up the background (each its own CC)
  BitRate nicRate;   ///< the senders' NIC line rate, where their congestion control starts (0: lineRate)
  Time pathLatency;  ///< mean fixed one-way latency of those flows' paths
  /// Bytes of the switch's shared packet buffer that the queues of its other congested egress
  /// ports (episodes of the same instant) hold while this one builds: what its queue may grow
  /// into is the rest (0: the whole buffer; InfiniBand credits each port a buffer of its own).
  Bytes bufferHeld = 0;
};

class CongestionEpisodeModel {
 public:
  virtual ~CongestionEpisodeModel() = default;
  /// The fraction in (0, 1] of the link's fluid payload capacity the episode's flows get.
  virtual double efficiency(const CongestionEpisode& episode) = 0;
  /// The episode last passed to efficiency(), flow by flow: the time each flow's bytes take at
  /// the episode's starting fluid share over the time the flow took (a sample of the flows'
  /// distribution; values above 1 are flows that finished sooner). Ascending within each size
  /// quartile's range (flowQuartiles()). Empty: every flow at efficiency().
  virtual std::span<const double> flowEfficiencies() const { return {}; }
  /// Where the outcomes of the flows of each size quartile (CongestionEpisode::sizeQuartiles)
  /// lie in flowEfficiencies(): [begin, end) of quartile q at 2q and 2q + 1 (quartiles of equal
  /// size share one range). Empty: the whole list, for every quartile.
  virtual std::span<const uint32_t> flowQuartiles() const { return {}; }
  /// The episode last passed to efficiency(): the fraction of its rate the background kept while
  /// the episode lasted, in (0, 1] (the new queue marks the paced flows too, and their congestion
  /// control cuts them again). 1: the background is not slowed.
  virtual double backgroundEfficiency() const { return 1.0; }
  /// Where a flow's queue pair was left at the end of a simulated episode: QP `qp` of `cc`, on a
  /// clock whose 0 is the instant the episode's flows started.
  struct QueuePairState {
    const CongestionControl* cc = nullptr;  ///< null: nothing kept (no congestion control)
    uint32_t qp = 0;
  };
  /// The episode last passed to efficiency(): the congestion-control state each flow of
  /// flowEfficiencies() left its queue pair in (same order; pointers valid for the model's
  /// lifetime), which a flow's next message starts from. Empty: none kept.
  virtual std::span<const QueuePairState> flowStates() const { return {}; }
  /// The episode last passed to efficiency(): the mean length of its link's queue as the
  /// episode's arriving packets found it (bytes; the switch's shared buffer it held). 0: not known.
  virtual double queueBytes() const { return 0.0; }
};

}  // namespace fabricsim
