// MemoryEstimate: the memory a run will take, estimated from the sizes in its specs before
// anything is built, so that a run that cannot fit is refused up front with the estimate and the
// limit instead of being killed half way by the OOM killer.
//
// Models: peak resident memory as a base (the program, its libraries and fixed tables) plus a cost
// per cable of the fabric (both ends' ports, queues, routing and forwarding state; the backends
// differ: the packet backend keeps egress queues and per-class flow-control state per port, the
// flow backend a 24-byte record per link direction plus paths) plus a cost per rank of every job
// whose ranks run programs (a training job's trace, communicators, transfers in flight). The coefficients are
// peak RSS measured on fabrics from 128 to 65,536 hosts and jobs up to 8,192 ranks and fitted by least
// squares (scripts/memory_model.py, which also reports the error on the runs it did not fit).
// Leaves out: traffic-dependent state beyond a job's ranks (packets queued in a deep incast, a
// trace's length: the estimate takes the validation workloads' sizes per rank), the hybrid
// backend's episode simulations and their cache (small fabrics of their own), and --timeline's
// and --probe's buffers.
// Units: bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/TopologySize.h"
#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

struct MemoryEstimate {
  double fabricBytes = 0;    ///< base plus the fabric's cables
  double workloadBytes = 0;  ///< the jobs' ranks
  double total() const { return fabricBytes + workloadBytes; }
};

/// Ranks `w` runs on, from its spec (a training job's tp*cp*ep*dp*pp, a collective's or
/// pattern's GPU count), at most the fabric's GPUs; where the spec does not say (a trace or
/// Chakra job before its files are read, "every GPU"), the fabric's GPUs.
int64_t estimatedRanks(const WorkloadSpec& w, const TopologySize& fabric);

/// Whether `w`'s ranks each run a program of their own (training, collective, trace, Chakra),
/// whose memory the estimate counts per rank; a pattern's per-GPU state is small and counted in
/// the fabric's per-cable cost (every GPU has a NIC cable).
bool runsPrograms(const WorkloadSpec& w);

/// Peak memory of a run of `backend` ("packet", "flow" or "hybrid") on a fabric of `size` with
/// `ranks` ranks running programs in total, `copies` of it at once (the hybrid backend's main run and its
/// replicas, each a flow-level run of its own).
MemoryEstimate estimateMemory(const TopologySize& size, std::string_view backend, int64_t ranks,
                              int copies = 1);

/// "1.2 TiB", "850 MiB": a byte count for messages, three significant digits.
std::string formatMemory(double bytes);

}  // namespace fabricsim
