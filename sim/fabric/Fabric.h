// Fabric: the seam between workloads and the backends that carry their bytes (DESIGN.md s.4).
//
// Models: a request to move `bytes` from one GPU to another (by global GPU rank) in a traffic
// class, over a given queue pair index (entropy), and a notification when the last byte has been
// delivered to the destination; connections that fail (transport retries exhausted) end the run.
// Workloads never know which backend they run on.
// Leaves out: the data itself (only sizes move), and any ordering between different QPs.
// Units: Bytes, Time (ps).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"
#include "sim/fabric/FlowRecord.h"
#include "sim/fabric/NetworkCounters.h"
#include "sim/fabric/TransferFailure.h"
#include "sim/fabric/TransferTable.h"

namespace fabricsim {

struct TransferRequest {
  uint32_t srcGpu = 0;
  uint32_t dstGpu = 0;
  Bytes bytes = 0;
  uint8_t trafficClass = 0;  ///< 0..6 for data; 7 is reserved for control packets
  uint16_t qp = 0;           ///< queue pair index between this pair (selects UDP source-port entropy)
  uint64_t tag = 0;          ///< returned unchanged in the completion
  /// The transfer stands for back-to-back bursts of this many bytes, each sent when the previous
  /// one has arrived upstream (a pipelined ring's steps); 0: one burst. Backends that see every
  /// packet ignore it; the hybrid backend sizes its congestion episodes by it.
  Bytes burst = 0;
  /// The transfer is a message on a connection whose earlier messages (the same source and
  /// destination GPU, traffic class and qp, also marked in order) go first: it starts moving
  /// when the one before it has left the sender, as an RC queue pair sends its posted messages
  /// in turn. The packet backend's queue pairs always do; the flow backend queues such
  /// transfers (unmarked ones share the path's rate with everything else in flight).
  bool inOrder = false;
};

/// Receives completions. Called from inside the simulation, at the delivery time.
class TransferObserver {
 public:
  virtual ~TransferObserver() = default;
  virtual void onTransferDelivered(uint64_t tag, Time when) = 0;
};

class Fabric {
 public:
  virtual ~Fabric() = default;
  /// Starts moving the bytes now (Simulator::now()). `observer` must outlive the transfer.
  virtual void send(const TransferRequest& request, TransferObserver* observer) = 0;
  /// Fixed latency from one GPU to another on an idle fabric, not counting the serialization of
  /// the data at the bottleneck: propagation, switch latency and one full frame's
  /// store-and-forward per switch hop; the NVLink latency inside a host.
  virtual Time pathLatency(uint32_t srcGpu, uint32_t dstGpu) const = 0;
  /// Payload rate of the path from one GPU to another on an idle fabric (its slowest link's
  /// line rate less framing, or the NVLink bandwidth inside a host), in bytes per second.
  virtual double pathRate(uint32_t srcGpu, uint32_t dstGpu) const = 0;
  /// "packet" or "flow".
  virtual std::string backendName() const = 0;
  /// The transfers: those in flight, counts, and the FCT statistics of the delivered ones.
  virtual const TransferTable& transfers() const = 0;
  /// Keep a record of every transfer for flowRecords() (memory grows with every transfer made);
  /// only before the first transfer. Off by default: a backend keeps only the transfers in
  /// flight, and statistics (transfers().stats()) of the delivered ones.
  virtual void keepFlowRecords(bool keep) = 0;
  /// With keepFlowRecords(true): one record per transfer, in the order the transfers were
  /// requested (a SimError without it).
  const std::vector<FlowRecord>& flowRecords() const { return transfers().records(); }
  /// Counters for the results' `network` section; call after the run.
  virtual NetworkCounters networkCounters() const = 0;
  /// Connections that gave up, in the order they failed (their transfers are counted in
  /// transfers().failed() and marked failed in flowRecords()). A backend that fails a connection
  /// also stops the simulator: the run ends.
  /// Backends without transport timeouts never fail one.
  virtual std::vector<TransferFailure> failures() const { return {}; }
  /// A link (both directions) goes down or comes back up now (failures during the run; the
  /// routing tables are the caller's business). Both backends model it.
  virtual void setLinkUp(uint32_t link, bool up) = 0;
  /// Transfers that are the edges of one pipeline (a pipelined ring's channel, a pipelined
  /// tree's instance), all starting now. Where couplesGroups(), the backend moves them as one:
  /// in the steady state of a pipeline no edge runs ahead of the edge feeding it, so every
  /// member moves at the same fraction of its bytes per second, the rate its most loaded link
  /// allows, and they finish together (each delivered after its own path latency). Otherwise
  /// (the default, and a backend that sees every packet) each is sent on its own.
  virtual void sendGroup(std::span<const TransferRequest> members, TransferObserver* observer) {
    for (const TransferRequest& r : members) send(r, observer);
  }
  /// True when sendGroup couples its members now (callers then start a pipeline's edges
  /// together, when its last edge could start).
  virtual bool couplesGroups() const { return false; }
};

}  // namespace fabricsim
