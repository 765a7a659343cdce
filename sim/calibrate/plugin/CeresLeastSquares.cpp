// The Ceres half of LeastSquares (see LeastSquares.h): a module of its own, loaded by
// LeastSquares::solve on first use, so that only `fabricsim calibrate` maps Ceres and the BLAS,
// LAPACK and SuiteSparse libraries it needs (about 2.3 MiB of resident memory every other run
// would pay for at start-up).
#include <ceres/ceres.h>

#include <algorithm>
#include <cmath>

#include "sim/calibrate/LeastSquares.h"

namespace fabricsim {
namespace {

/// The caller's residual function as Ceres' dynamic cost functor, counting its calls.
struct Functor {
  const LeastSquares::Residuals* r;
  size_t n, m;
  int* calls;
  bool operator()(double const* const* params, double* out) const {
    ++*calls;
    const std::vector<double> x(params[0], params[0] + n);
    const std::vector<double> v = (*r)(x);
    if (v.size() != m) return false;
    for (size_t i = 0; i < m; ++i) {
      if (!std::isfinite(v[i])) return false;  // Ceres rejects the step
      out[i] = v[i];
    }
    return true;
  }
};

}  // namespace

}  // namespace fabricsim

/// Solves from `x` (already clamped into the bounds; `m` residuals, m >= x.size() >= 1) into `out`.
extern "C" void fabricsim_ceres_solve(const fabricsim::LeastSquares::Residuals& r, std::vector<double>& x,
                                      const std::vector<double>& lower, const std::vector<double>& upper,
                                      size_t m, const fabricsim::LeastSquares::Options& o,
                                      fabricsim::LeastSquares::Result* out) {
  using namespace fabricsim;
  const size_t n = x.size();
  LeastSquares::Result& res = *out;
  int calls = 1;
  ceres::NumericDiffOptions diff;
  diff.relative_step_size = o.relativeStep;
  auto* cost = new ceres::DynamicNumericDiffCostFunction<Functor, ceres::CENTRAL>(
      new Functor{&r, n, m, &calls}, ceres::TAKE_OWNERSHIP, diff);
  cost->AddParameterBlock(static_cast<int>(n));
  cost->SetNumResiduals(static_cast<int>(m));
  ceres::Problem problem;
  problem.AddResidualBlock(cost, nullptr, x.data());
  for (size_t j = 0; j < n; ++j) {
    if (std::isfinite(lower[j])) problem.SetParameterLowerBound(x.data(), static_cast<int>(j), lower[j]);
    if (std::isfinite(upper[j])) problem.SetParameterUpperBound(x.data(), static_cast<int>(j), upper[j]);
  }
  ceres::Solver::Options so;
  so.minimizer_type = ceres::TRUST_REGION;
  so.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  so.linear_solver_type = ceres::DENSE_QR;
  so.max_num_iterations = o.maxIterations;
  so.function_tolerance = o.functionTolerance;
  so.parameter_tolerance = o.parameterTolerance;
  so.gradient_tolerance = 1e-16;
  so.num_threads = 1;
  so.logging_type = ceres::SILENT;
  so.minimizer_progress_to_stdout = false;
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);
  int iterations = static_cast<int>(summary.iterations.size()) - 1;
  // Ceres projects its steps onto the bounds: once a bound is active the other unknowns can
  // stall short of their optimum. The unknowns on a bound are then held there and the rest
  // solved again (an active-set polish).
  std::vector<int> held;
  for (size_t j = 0; j < n; ++j) {
    const double tol = 1e-9 * std::max(1.0, std::abs(x[j]));
    if ((std::isfinite(lower[j]) && x[j] <= lower[j] + tol) ||
        (std::isfinite(upper[j]) && x[j] >= upper[j] - tol))
      held.push_back(static_cast<int>(j));
  }
  if (!held.empty() && held.size() < n) {
    problem.SetManifold(x.data(), new ceres::SubsetManifold(static_cast<int>(n), held));
    ceres::Solver::Summary polish;
    ceres::Solve(so, &problem, &polish);
    iterations += static_cast<int>(polish.iterations.size()) - 1;
    summary = polish;
  }
  res.x = x;
  res.residuals = r(x);
  ++calls;
  for (double v : res.residuals) res.cost += v * v;
  res.iterations = iterations;
  res.converged = summary.termination_type == ceres::CONVERGENCE;
  // Covariance: Ceres gives (J^T J)^-1 for its cost 1/2 sum r^2; scaled by the residuals' variance.
  bool finiteResiduals = true;
  for (double v : res.residuals) finiteResiduals = finiteResiduals && std::isfinite(v);
  // No covariance where the solver could not evaluate the model (Ceres' covariance of a failed
  // problem reads a Jacobian it never computed).
  if (m > n && finiteResiduals && summary.termination_type != ceres::FAILURE) {
    ceres::Covariance::Options co;
    co.algorithm_type = ceres::DENSE_SVD;
    co.num_threads = 1;
    ceres::Covariance covariance(co);
    std::vector<std::pair<const double*, const double*>> blocks{{x.data(), x.data()}};
    if (covariance.Compute(blocks, &problem)) {
      std::vector<double> c(n * n);
      if (covariance.GetCovarianceBlock(x.data(), x.data(), c.data())) {
        const double s2 = res.cost / static_cast<double>(m - n);
        bool finite = true;
        for (double& v : c) {
          v *= s2;
          finite = finite && std::isfinite(v);
        }
        if (finite) {
          res.covariance = c;
          for (size_t j = 0; j < n; ++j) res.standardErrors.push_back(std::sqrt(std::max(0.0, c[j * n + j])));
        }
      }
    }
  }
  res.evaluations = calls;
}
