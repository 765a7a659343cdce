// ComputeFit: compute efficiency per GEMM class from the gpu/ harness's compute results.
//
// Models: each measured GEMM i of class c achieved a_i FLOP/s against the GPU's peak P; the
// model time is flops_i / (e_c P), and the least-squares fit of ln(time) gives
// e_c = exp(mean_i ln(a_i / P)) (the geometric mean of the achieved fractions), per class
// ("gemm": the layers' matrix multiplies; "attention": the score and value products). The input
// is the harness's compute JSON: {"gpu": {"model", "peak_tflops"?}, "gemms": [{"name", "class",
// "m", "n", "k", "time_us", "tflops"}], "hbm_copy": {"bandwidth_GBps"}?}; a GEMM's FLOP/s is
// its `tflops`, else 2 m n k / time.
// Leaves out: shape-dependent efficiency (one figure per class, as GpuSpec has).
// Units: FLOP/s as double, fractions of peak, HBM bytes/s.
#pragma once

#include <optional>
#include <string>

namespace fabricsim {

class ComputeFit {
 public:
  struct Result {
    double peakFlops = 0;
    std::optional<double> gemmEfficiency;       ///< fraction of peak
    std::optional<double> attentionEfficiency;  ///< fraction of peak
    std::optional<double> hbmBytesPerSecond;
    int gemms = 0;          ///< results used
    double rmsLogTime = 0;  ///< of the fitted classes' GEMMs
  };

  /// Reads and fits the compute JSON at `path`; `peakFlops` applies when the file gives no
  /// peak_tflops. Throws InputError naming the file and key on bad input.
  static Result fitFile(const std::string& path, double peakFlops);
  static Result fit(const std::string& jsonText, const std::string& fileName, double peakFlops);
};

}  // namespace fabricsim
