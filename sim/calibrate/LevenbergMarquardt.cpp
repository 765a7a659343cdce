#include "sim/calibrate/LevenbergMarquardt.h"

#include <algorithm>
#include <cmath>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

double sumSquares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return s;
}

}  // namespace

bool LevenbergMarquardt::choleskySolve(std::vector<double> a, std::vector<double> b, size_t n,
                                       std::vector<double>& x) {
  // a = L L^T, L stored in the lower triangle of a.
  for (size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0) || !std::isfinite(d)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (size_t k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  x.assign(n, 0);
  for (size_t ii = n; ii-- > 0;) {  // L^T x = y
    double s = b[ii];
    for (size_t k = ii + 1; k < n; ++k) s -= a[k * n + ii] * x[k];
    x[ii] = s / a[ii * n + ii];
  }
  return true;
}

LevenbergMarquardt::Result LevenbergMarquardt::solve(const Residuals& fn, std::vector<double> x0,
                                                     const Options& opt) {
  Result res;
  const size_t n = x0.size();
  res.x = std::move(x0);
  res.residuals = fn(res.x);
  ++res.evaluations;
  const size_t m = res.residuals.size();
  SIM_CHECK(m >= n, "least squares needs at least as many residuals as unknowns");
  res.cost = sumSquares(res.residuals);
  if (n == 0) {
    res.converged = true;
    return res;
  }
  double lambda = opt.initialLambda;
  std::vector<double> jac(m * n);
  for (res.iterations = 0; res.iterations < opt.maxIterations; ++res.iterations) {
    // Forward-difference Jacobian.
    for (size_t j = 0; j < n; ++j) {
      std::vector<double> xp = res.x;
      const double h = opt.jacobianStep * std::max(std::abs(res.x[j]), 1.0);
      xp[j] += h;
      const std::vector<double> rp = fn(xp);
      ++res.evaluations;
      SIM_CHECK(rp.size() == m, "the residual function changed its number of residuals");
      for (size_t i = 0; i < m; ++i) jac[i * n + j] = (rp[i] - res.residuals[i]) / h;
    }
    std::vector<double> jtj(n * n, 0), jtr(n, 0);
    for (size_t i = 0; i < m; ++i)
      for (size_t a = 0; a < n; ++a) {
        jtr[a] -= jac[i * n + a] * res.residuals[i];
        for (size_t b = 0; b < n; ++b) jtj[a * n + b] += jac[i * n + a] * jac[i * n + b];
      }
    bool improved = false;
    for (int attempt = 0; attempt < 30 && !improved; ++attempt) {
      std::vector<double> damped = jtj;
      for (size_t a = 0; a < n; ++a) damped[a * n + a] += lambda * std::max(jtj[a * n + a], 1e-12);
      std::vector<double> step;
      if (!choleskySolve(damped, jtr, n, step)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> xn = res.x;
      for (size_t a = 0; a < n; ++a) xn[a] += step[a];
      std::vector<double> rn = fn(xn);
      ++res.evaluations;
      const double cost = sumSquares(rn);
      if (std::isfinite(cost) && cost < res.cost) {
        const double decrease = (res.cost - cost) / std::max(res.cost, 1e-300);
        double stepNorm = 0, xNorm = 0;
        for (size_t a = 0; a < n; ++a) {
          stepNorm += step[a] * step[a];
          xNorm += res.x[a] * res.x[a];
        }
        res.x = std::move(xn);
        res.residuals = std::move(rn);
        res.cost = cost;
        lambda = std::max(lambda / 10, 1e-12);
        improved = true;
        if (decrease < opt.relativeTolerance ||
            std::sqrt(stepNorm) < opt.relativeTolerance * (std::sqrt(xNorm) + opt.relativeTolerance)) {
          res.converged = true;
          ++res.iterations;
          return res;
        }
      } else {
        lambda *= 10;
      }
    }
    if (!improved) {  // no damping makes progress: at a minimum (to the Jacobian's precision)
      res.converged = true;
      return res;
    }
  }
  return res;
}

}  // namespace fabricsim
