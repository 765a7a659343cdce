// LeastSquares: bounded nonlinear least squares, min_x sum_i r_i(x)^2 with lo <= x <= hi, and
// the covariance of the solution, by Ceres Solver (Debian's libceres-dev), which runs in a module
// of its own (sim/calibrate/plugin, libfabricsim_ceres.so) that solve() loads on first use.
//
// Models: Levenberg-Marquardt (Ceres' trust region, dense QR, one thread: the same inputs give
// the same solution bit for bit) on a residual function without derivatives (the calibration's
// residuals are simulations), differentiated numerically (central differences, relative step
// `relativeStep`). Ceres projects its steps onto the bounds, which can stall the other unknowns
// once one sits on its bound: those on a bound are then held there and the rest solved again. The covariance
// of x is s^2 (J^T J)^-1 at the solution (J the residuals' Jacobian, s^2 = sum r^2 / (m - n), the residuals'
// variance: the usual estimate when the residuals are independent with equal variance), computed by Ceres'
// Covariance (dense SVD, so a parameter the data do not determine gives no covariance rather than a huge
// one); the standard errors are the square roots of its diagonal. Leaves out: weights (scale the residuals),
// robust losses, sparse problems. Units: the caller's.
#pragma once

#include <functional>
#include <optional>
#include <vector>

namespace fabricsim {

class LeastSquares {
 public:
  /// r(x): the same number of residuals (at least x.size()) for every x.
  using Residuals = std::function<std::vector<double>(const std::vector<double>& x)>;

  struct Options {
    int maxIterations = 100;
    double functionTolerance = 1e-12;   ///< relative decrease of the cost that stops
    double parameterTolerance = 1e-12;  ///< relative step that stops
    double relativeStep = 1e-6;         ///< numerical differentiation step, relative to |x_j|
  };

  struct Result {
    std::vector<double> x;
    std::vector<double> residuals;  ///< r(x)
    double cost = 0;                ///< sum of squared residuals
    int iterations = 0;
    int evaluations = 0;     ///< calls of r (the Jacobian's included)
    bool converged = false;  ///< a tolerance was met
    /// s^2 (J^T J)^-1, row-major n x n; empty when it cannot be computed (rank-deficient J, or
    /// no more residuals than unknowns).
    std::vector<double> covariance;
    /// Square roots of its diagonal; empty with it.
    std::vector<double> standardErrors;
  };

  /// Minimises from x0 (clamped into the bounds); `lower` and `upper` have x0.size() entries
  /// (use +-infinity for none).
  static Result solve(const Residuals& r, std::vector<double> x0, const std::vector<double>& lower,
                      const std::vector<double>& upper, const Options& options);
};

}  // namespace fabricsim
