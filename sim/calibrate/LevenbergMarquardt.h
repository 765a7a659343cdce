// LevenbergMarquardt: nonlinear least squares, min_x sum_i r_i(x)^2, for the handful of
// parameters a calibration fits.
//
// Models: Levenberg-Marquardt with Marquardt's diagonal scaling (damping lambda * diag(J^T J)),
// a forward-difference Jacobian (the residual function is a simulation, so there is no analytic
// one), and the normal equations solved by Cholesky (n <= ~10 unknowns, so J^T J is tiny and
// well conditioned after damping). Stops when the relative decrease of the cost, or the relative
// step, falls below tolerance, or after maxIterations.
// Leaves out: bounds (callers fit logarithms of positive parameters), sparse or large problems,
// second-order corrections (geodesic acceleration). Debian's Eigen has an LM in its unsupported
// modules; for at most ten unknowns this file is smaller than the dependency.
// Units: whatever the caller's residuals and parameters are.
#pragma once

#include <functional>
#include <vector>

namespace fabricsim {

class LevenbergMarquardt {
 public:
  using Residuals = std::function<std::vector<double>(const std::vector<double>& x)>;

  struct Options {
    int maxIterations = 100;
    double relativeTolerance = 1e-10;  ///< on the cost decrease and on the step
    double jacobianStep = 1e-6;        ///< forward-difference step, relative to max(|x_j|, 1)
    double initialLambda = 1e-3;
  };

  struct Result {
    std::vector<double> x;          ///< the solution
    std::vector<double> residuals;  ///< r(x)
    double cost = 0;                ///< sum of squared residuals
    int iterations = 0;
    int evaluations = 0;     ///< calls of the residual function
    bool converged = false;  ///< a tolerance was met (false: maxIterations)
  };

  /// Minimises the sum of squares of `r` from `x0`. `r` must return the same number of
  /// residuals (at least x0.size()) for every x.
  static Result solve(const Residuals& r, std::vector<double> x0, const Options& options);
  static Result solve(const Residuals& r, std::vector<double> x0) {
    return solve(r, std::move(x0), Options{});
  }

  /// Solves A x = b for a symmetric positive definite n x n `a` (row-major) by Cholesky; false
  /// when `a` is not positive definite.
  static bool choleskySolve(std::vector<double> a, std::vector<double> b, size_t n, std::vector<double>& x);
};

}  // namespace fabricsim
