// CalibrationFit: least-squares fit of the collective model's free parameters to measurements.
//
// Models: the residual of each measured point (size >= minSizeBytes, a positive time) is
// ln(simulated time / measured time), so every size weighs by its relative error (the busbw
// error and the time error of a point are the same up to sign) and the latency-bound and
// bandwidth-bound sizes both count. The simulated time comes from CollectiveSimulator, i.e. from
// the simulator itself, so the calibrated simulation reproduces the fitted points as closely as
// its model can. The parameters are fitted as logarithms (they stay positive), within physical
// bounds, by LeastSquares (Ceres), which also gives each fitted parameter's standard error. Which parameters
// are free follows from the data and the tuning: without NVLS, the NVLink bandwidth and NVLink step latency
// when a single-host measurement is present, the NIC bandwidth and network step latency when a multi-host one
// is; with NVLS (tuning.nvls, NCCL's default all-reduce on H100-class hosts), the NVLS efficiency, latency
// and pipeline for a single-host measurement and the NVLS tree's inter-host hop latency (and its NVLS
// part's efficiency, with a single-host table beside) for a multi-host one (the NVLink and NIC
// bandwidths stay at the testbed's line rates, the ring's network step at NCCL's figure). The others
// stay at the testbed's and tuning's values. Every free parameter has physical bounds (bounds():
// value and source); a start outside them is an input error.
// Leaves out: compute efficiencies (ComputeFit), per-protocol parameters (LL/LL128 latency
// scales and efficiencies stay at the tuning's NCCL-derived values; the fitted sizes >= 1 MiB
// run Simple almost everywhere, so they are not identifiable from them).
// Units: microseconds, GB/s, as ModelParameters.
#pragma once

#include <string>
#include <vector>

#include "sim/calibrate/CollectiveSimulator.h"
#include "sim/calibrate/Measurement.h"
#include "sim/calibrate/ModelParameters.h"

namespace fabricsim {

class CalibrationFit {
 public:
  struct Options {
    int64_t minSizeBytes = 1 << 20;  ///< points below are not fitted (NCCL's LL/LL128 range)
    int maxIterations = 60;
    /// Parameters (ModelParameters::names()) held at their starting values though the tables
    /// could move them: a value known from elsewhere (a datasheet, NCCL's constants).
    std::vector<std::string> held;
  };

  /// One fitted point.
  struct Point {
    std::string measurement;  ///< Measurement::label
    int64_t sizeBytes = 0;
    double measuredUs = 0;
    double fittedUs = 0;
    double errorPct = 0;  ///< 100 (fitted / measured - 1)
  };

  struct Result {
    ModelParameters parameters;       ///< every figure (fitted or held)
    CollectiveTuning tuning;          ///< the simulator's tuning with the fitted figures applied
    std::vector<std::string> fitted;  ///< names (ModelParameters::names()) of the free ones
    /// Standard error of each fitted parameter (its units; same order as `fitted`), from the
    /// fit's covariance; empty when the data do not determine them all.
    std::vector<double> standardErrors;
    std::vector<Point> points;
    double rmsLogTime = 0;   ///< root mean square of ln(fitted / measured)
    double rmsErrorPct = 0;  ///< root mean square of errorPct
    double maxAbsErrorPct = 0;
    int iterations = 0;
    int simulations = 0;  ///< residual evaluations (each simulates every point)
    bool converged = false;
  };

  /// One table left out of a leave-one-table-out cross-validation.
  struct HeldOut {
    std::string measurement;  ///< the table left out (Measurement::label)
    size_t points = 0;
    double medianAbsErrorPct = 0;  ///< |busbw error| = |measured time / predicted time - 1|
    double maxAbsErrorPct = 0;
    std::vector<std::string> fitted;  ///< what the fit without it could fit
  };
  /// For each measurement with qualifying points (when there are at least two): the fit on all
  /// the others, and that fit's busbw error on the one left out; empty with fewer than two.
  /// Parameters only the left-out table determines stay at their starting values, as they would
  /// for a cluster whose kind of table was never measured.
  static std::vector<HeldOut> crossValidate(const std::vector<Measurement>& measurements,
                                            const CollectiveSimulator& simulator, const Options& options);

  /// Fits the free parameters to `measurements` on `simulator`'s testbed, starting from its
  /// testbed's and tuning's values. Throws InputError when no point qualifies or there are
  /// fewer points than free parameters.
  /// Physical bounds of parameter `parameter` (a ModelParameters index) in its unit, with
  /// their source; `start` gives the testbed's figures that some bounds scale with.
  struct Bounds {
    double lower = 0;
    double upper = 0;
    const char* source = "";
  };
  static Bounds bounds(size_t parameter, const ModelParameters& start);

  static Result fit(const std::vector<Measurement>& measurements, const CollectiveSimulator& simulator,
                    const Options& options);
};

}  // namespace fabricsim
