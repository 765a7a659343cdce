// ValidationReport: measured against simulated bus bandwidth, per size and per measurement, for
// `fabricsim validate`.
//
// Models: for each measurement, the simulator's time for the same collective sweep on the
// testbed with the calibration applied (CollectiveSimulator), turned into busbw with the
// nccl-tests factor, and error_pct = 100 (simulated / measured - 1) per size. The summary is the
// median and maximum absolute error over the points of at least minSizeBytes (1 MiB by default:
// below, NCCL's latency-bound LL/LL128 protocols dominate), overall and per measurement.
// JSON keys (a contract, DESIGN.md section 7 style): points[] {file, measurement, op, ranks,
// size_bytes, measured_busbw_GBps, simulated_busbw_GBps, error_pct, in_summary,
// simulated_algorithm, simulated_protocol, nccl_model_busbw_GBps (NCCL's own cost-model estimate
// for what was simulated, null where NCCL has none: a reference, never fitted)}, summary
// {median_abs_error_pct, max_abs_error_pct, points, min_size_bytes}, measurements[] {file,
// measurement, op, ranks, hosts, algorithm, median_abs_error_pct, max_abs_error_pct, points},
// calibration, topology, backend.
// Leaves out: plotting (scripts/plot_validation.py reads the JSON).
// Units: bytes, GB/s, percent.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/calibrate/CollectiveSimulator.h"
#include "sim/calibrate/Measurement.h"

namespace fabricsim {

class ValidationReport {
 public:
  struct Point {
    std::string file;
    std::string measurement;
    CollectiveOp op = CollectiveOp::AllReduce;
    uint32_t ranks = 0;
    int64_t sizeBytes = 0;
    double measuredBusbwGBps = 0;
    double simulatedBusbwGBps = 0;
    double errorPct = 0;
    bool inSummary = false;                                     ///< size >= minSizeBytes
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;  ///< what the model ran
    CollectiveProtocol protocol = CollectiveProtocol::Simple;
    /// busbw NCCL's own cost model expects for the same algorithm and protocol (0: none).
    double ncclModelBusbwGBps = 0;
  };
  struct Summary {
    double medianAbsErrorPct = 0;
    double maxAbsErrorPct = 0;
    size_t points = 0;
  };

  /// Simulates every measurement with `params` applied and compares.
  static ValidationReport run(const std::vector<Measurement>& measurements,
                              const CollectiveSimulator& simulator, const ModelParameters& params,
                              int64_t minSizeBytes);

  const std::vector<Point>& points() const { return points_; }
  /// Over all points of at least minSizeBytes.
  const Summary& summary() const { return summary_; }
  /// Over the summary points of one measurement (by label).
  Summary summaryOf(const std::string& measurement) const;

  /// The report document; `calibration`, `topology`, `backend` are recorded as given.
  nlohmann::json json(const std::string& calibration, const std::string& topology,
                      const std::string& backend) const;
  /// A markdown report: one summary row per measurement, then one table per measurement.
  std::string markdown() const;

 private:
  static Summary summarise(const std::vector<double>& absErrors);
  struct Info {
    std::string label, file, algorithm, protocol;  ///< NCCL_ALGO / NCCL_PROTO of the run, or "default"
    CollectiveOp op;
    uint32_t ranks, hosts;
  };
  std::vector<Point> points_;
  std::vector<Info> measurements_;
  Summary summary_;
  int64_t minSizeBytes_ = 0;
};

}  // namespace fabricsim
