// CollectiveSimulator: runs the simulator's own nccl-tests emulation for one Measurement on a
// testbed topology, so that the fit and the validation compare measurements with exactly what
// `fabricsim run` would compute for the same collective sweep.
//
// Models: the measurement's ranks placed as nccl-tests places them (gpusPerHost GPUs on each of
// `hosts` hosts, rank order = host order), the measurement's operation, and each measured size
// run as one CollectiveSweep row (warm-up then one timed call on the packet backend; one call on
// the flow backend, whose idle fabric makes a warm-up identical) on a fresh fabric built from the
// testbed with the calibration's parameters applied. What NCCL ran is pinned: the algorithm
// of a measurement that forced one (NCCL_ALGO=Ring -> ring, Tree -> tree, PAT -> pat; NVLS and
// NVLSTree -> nvls on one host, nvls_tree across hosts, when the tuning has NVLS; a list such as
// NCCL_ALGO=Ring,Tree: NCCL's cost model choosing among those), and per size
// the algorithm, protocol and channels NCCL chose where the measurement recorded them (the gpu/
// harness's `nccl` field, from NCCL_DEBUG=INFO), and the channels within the run's
// NCCL_MIN_CTAS / NCCL_MAX_CTAS (or _NCHANNELS); elsewhere the tuning's (auto: NCCL's cost
// model per size). An algorithm nothing simulated matches (CollNet; NVLS without nvls; tree for
// another operation than all-reduce) is an InputError, never silently another algorithm.
// Leaves out: other jobs on the fabric, failures, the measurement's data checks.
// Units: microseconds per point.
#pragma once

#include <string>
#include <vector>

#include "sim/calibrate/Measurement.h"
#include "sim/calibrate/ModelParameters.h"
#include "sim/config/TopologySpec.h"
#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

class CollectiveSimulator {
 public:
  /// `backend`: "flow" or "packet".
  CollectiveSimulator(TopologySpec testbed, CollectiveTuning tuning, std::string backend = "flow");

  /// Simulated time (us) of each point of `m`, with `p` applied to the testbed and tuning.
  /// Throws InputError (naming the measurement) when the testbed has too few hosts or GPUs per
  /// host for it.
  std::vector<double> simulate(const Measurement& m, const ModelParameters& p) const;
  /// One simulated point: its time and what the model ran it with.
  struct Run {
    double timeUs = 0;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
    CollectiveProtocol protocol = CollectiveProtocol::Simple;
    double ncclModelUs = 0;  ///< NCCL's own estimate for that algorithm and protocol; 0: none
  };
  /// As simulate(), with the algorithm and protocol of each point.
  std::vector<Run> simulateRuns(const Measurement& m, const ModelParameters& p) const;
  /// The algorithm the measurement's points are simulated with where a point recorded none.
  /// Throws InputError for an NCCL_ALGO nothing simulated matches.
  CollectiveAlgorithm algorithmFor(const Measurement& m) const;
  /// `base` with what NCCL ran point `pt` of `m` with pinned (see above). Throws InputError
  /// (the measurement's file and the point's line) for a recorded choice that cannot be simulated.
  CollectiveTuning tuningFor(const Measurement& m, const Measurement::Point& pt,
                             const CollectiveTuning& base) const;

  const TopologySpec& testbed() const { return testbed_; }
  const CollectiveTuning& tuning() const { return tuning_; }
  const std::string& backend() const { return backend_; }

 private:
  TopologySpec testbed_;
  CollectiveTuning tuning_;
  std::string backend_;
};

}  // namespace fabricsim
