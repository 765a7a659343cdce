// MeanInterval: the mean of a small sample of independent runs and its two-sided 95% confidence
// interval, from Student's t distribution (the runs' spread is estimated from the sample).
//
// Models: x_bar +- t(0.975, n - 1) s / sqrt(n), with s the sample standard deviation (n - 1 in
// the denominator). Used for the hybrid backend's replicas (results differing only in which
// seed's packet-level measurement each congestion episode uses).
// Leaves out: any distributional check (the interval assumes roughly normal run-to-run
// variation), and intervals of a single run (n = 1 gives a zero-width interval, flagged by n).
// Units: those of the sample.
#pragma once

#include <cstddef>
#include <vector>

namespace fabricsim {

struct MeanInterval {
  size_t n = 0;
  double mean = 0;
  double stddev = 0;     ///< sample standard deviation (0 when n < 2)
  double halfWidth = 0;  ///< t(0.975, n-1) x stddev / sqrt(n) (0 when n < 2)
  double low() const { return mean - halfWidth; }
  double high() const { return mean + halfWidth; }

  static MeanInterval of(const std::vector<double>& sample);
  /// The 0.975 quantile of Student's t distribution with `df` >= 1 degrees of freedom.
  static double t975(size_t df);
};

}  // namespace fabricsim
