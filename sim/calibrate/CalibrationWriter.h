// CalibrationWriter: writes the calibration YAML that `fabricsim calibrate` produces, in the
// format sim/config/CalibrationLoader reads (workloads' `calibration:`, validate's
// --calibration): `fabric:` (the fitted NVLink and NIC bandwidths), `collectives:` (the fitted
// step latencies), `gpu:` (compute efficiencies when compute results were given), `fit:`
// (backend, minimum size, points, rms and max error, iterations, each parameter's value and
// whether it was fitted, the residual of every point) and `source:`.
// Leaves out: reading it back (CalibrationLoader).
// Units: rates written as GBps/Gbps strings, latencies as ns strings, errors in percent.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/calibrate/CalibrationFit.h"
#include "sim/calibrate/ComputeFit.h"

namespace fabricsim {

class CalibrationWriter {
 public:
  /// The YAML text. `sources` names the measurement files; `backend` and `minSizeBytes` are the
  /// fit's settings; `compute` adds the gpu block.
  static std::string yaml(const CalibrationFit::Result& fit, const std::vector<std::string>& sources,
                          const std::string& testbed, const std::string& backend, int64_t minSizeBytes,
                          const std::optional<ComputeFit::Result>& compute,
                          const std::vector<CalibrationFit::HeldOut>& crossValidation = {});
};

}  // namespace fabricsim
