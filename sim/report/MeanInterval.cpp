#include "sim/report/MeanInterval.h"

#include <cmath>

namespace fabricsim {

double MeanInterval::t975(size_t df) {
  // Two-sided 95% critical values of Student's t (any statistics table, e.g. NIST/SEMATECH
  // e-Handbook 1.3.6.7.2) for 1..30 degrees of freedom; beyond, the series in 1/df about the
  // normal quantile 1.959964 (Abramowitz & Stegun 26.7.5), within 1e-4 of the table from 30 on.
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return 0;
  if (df <= 30) return kTable[df - 1];
  const double z = 1.959964, n = static_cast<double>(df);
  const double g1 = (z * z * z + z) / 4;
  const double g2 = (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / 96;
  const double g3 = (3 * std::pow(z, 7) + 19 * std::pow(z, 5) + 17 * z * z * z - 15 * z) / 384;
  return z + g1 / n + g2 / (n * n) + g3 / (n * n * n);
}

MeanInterval MeanInterval::of(const std::vector<double>& sample) {
  MeanInterval m;
  m.n = sample.size();
  if (m.n == 0) return m;
  double sum = 0;
  for (double x : sample) sum += x;
  m.mean = sum / static_cast<double>(m.n);
  if (m.n < 2) return m;
  double ss = 0;
  for (double x : sample) ss += (x - m.mean) * (x - m.mean);
  m.stddev = std::sqrt(ss / static_cast<double>(m.n - 1));
  m.halfWidth = t975(m.n - 1) * m.stddev / std::sqrt(static_cast<double>(m.n));
  return m;
}

}  // namespace fabricsim
