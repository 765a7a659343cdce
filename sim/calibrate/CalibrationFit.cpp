#include "sim/calibrate/CalibrationFit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/calibrate/LeastSquares.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

/// A copy of `m` holding only the points the fit uses: a size of at least minSizeBytes and a
/// positive time.
Measurement fittable(const Measurement& m, int64_t minSizeBytes) {
  Measurement u = m;
  u.points.clear();
  for (const auto& p : m.points) {
    const double t = p.timeUs(m.op, m.ranks);
    if (p.sizeBytes >= minSizeBytes && std::isfinite(t) && t > 0) u.points.push_back(p);
  }
  return u;
}

}  // namespace

CalibrationFit::Bounds CalibrationFit::bounds(size_t parameter, const ModelParameters& start) {
  using P = ModelParameters;
  switch (parameter) {
    case P::kNvlinkBandwidth:  // per GPU and direction
      return {100, 450,
              "NVLink 4 line rate 450 GB/s per direction (18 links x 25 GB/s); NCCL reaches 370 of it "
              "(sjeaugey, nccl-tests#212); 100 for a host of fewer links"};
    case P::kStepLatencyNvlink:
      return {0.2, 10,
              "NCCL 2.30.7 hwLat NVLink 0.6 (LL) to 4.0 us (Tree Simple), less the path's ~1 us, "
              "to a few kernel-launch times"};
    case P::kNicBandwidth:  // achievable payload rate of one NIC, GB/s
      return {0.5 * start.nicBandwidthGBps, start.nicBandwidthGBps,
              "at most the testbed NIC's line rate; at least half of it (NDR reaches 46-49 of 50 GB/s, "
              "NVIDIA's maintainers in nccl-tests#290, #319, #267)"};
    case P::kStepLatencyNetwork:
      return {1, 40,
              "NCCL 2.30.7 hwLat NET 2.7 (Ring LL) to 31 us (CollNet): NIC doorbell, switch hops and "
              "the proxy thread's post and poll"};
    case P::kNvlsEfficiency:
      return {0.6, 1.0,
              "the fraction of the NVLink rate an NVLS reduction reaches: at most 1; NCCL's tuner "
              "0.85 on Hopper, 0.74 on Blackwell (nvlsEfficiency)"};
    case P::kNvlsLatency:
      return {5, 50,
              "NCCL 2.30.7 hwLat NVLink NVLS 25 us; at least a kernel launch and the switch's "
              "multicast barrier (~5 us)"};
    case P::kNvlsPipeline:  // MiB in flight
      return {1, 64,
              "NVLS channels (16 to 32 on H100) x their chunk (64 KiB to 2 MiB, NCCL_BUFFSIZE / "
              "steps)"};
    case P::kNvlsTreeEfficiency:
      return {0.5, 1.0,
              "the NVLS part of NVLSTree at most as fast as a lone NVLS all-reduce; at least half "
              "(it gives SMs to the network part)"};
    case P::kNvlsTreeHop:
      return {5, 40,
              "NCCL 2.30.7 hwLat NET NVLSTree 20.9 us with the path, ~19.6 us of step; at least a "
              "NIC-switch-NIC round of the proxy (~5 us), at most twice NCCL's figure"};
  }
  SIM_CHECK(false, "parameter index out of range");
  return {};
}

CalibrationFit::Result CalibrationFit::fit(const std::vector<Measurement>& measurements,
                                           const CollectiveSimulator& simulator, const Options& options) {
  // The points each measurement contributes (a copy holding only them) and their times.
  std::vector<Measurement> used;
  std::vector<double> measuredUs;
  bool singleHost = false, multiHost = false;
  for (const auto& m : measurements) {
    Measurement u = fittable(m, options.minSizeBytes);
    if (u.points.empty()) continue;
    for (const auto& p : u.points) measuredUs.push_back(p.timeUs(m.op, m.ranks));
    // One size cannot tell a latency from a bandwidth.
    if (u.points.size() < 2)
      throw InputError(m.file, u.points[0].line, 0, "",
                       "'" + m.label + "' has one size to fit (" + std::to_string(u.points[0].sizeBytes) +
                           " B): a table needs at least two sizes of at least --min-size (" +
                           std::to_string(options.minSizeBytes) + " B) to separate latency from bandwidth");
    (m.hosts > 1 ? multiHost : singleHost) = true;
    used.push_back(std::move(u));
  }
  if (used.empty())
    throw InputError("", 0, 0, "",
                     "no measured point to fit: every point is below --min-size (" +
                         std::to_string(options.minSizeBytes) + " bytes) or has no time or busbw");

  const ModelParameters start = ModelParameters::from(simulator.testbed(), simulator.tuning());
  using P = ModelParameters;
  std::vector<size_t> free;
  const bool nvls = simulator.tuning().nvls;
  // With NVLS (NCCL's default all-reduce on NVSwitch hosts) a single-host table measures the NVLS
  // efficiency and latency; the NVLink bandwidth they scale is held at the testbed's line rate
  // (the two multiply, so they are not separately identifiable). A multi-host NVLS table then
  // measures the network hop latency; its NIC bandwidth is held (the pipelined NVLS tree is
  // bound by NVLink, not the NICs, at two hosts).
  if (singleHost) {
    if (nvls)
      free.insert(free.end(), {P::kNvlsEfficiency, P::kNvlsLatency, P::kNvlsPipeline});
    else
      free.insert(free.end(), {P::kNvlinkBandwidth, P::kStepLatencyNvlink});
  }
  if (multiHost) {
    // With NVLS a multi-host all-reduce is NCCL's NVLSTree: its inter-host hop latency (its own
    // in NCCL's tuner too) is fitted; the ring's and tree's network step stays at its prior.
    if (nvls) {
      free.push_back(P::kNvlsTreeHop);
      if (singleHost) free.push_back(P::kNvlsTreeEfficiency);
    } else {
      free.insert(free.end(), {P::kNicBandwidth, P::kStepLatencyNetwork});
    }
  }
  for (const std::string& h : options.held) {
    const auto& names = P::names();
    const auto it = std::find(names.begin(), names.end(), h);
    if (it == names.end()) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      throw InputError("", 0, 0, "--hold", "expected parameter names (" + all + "), found '" + h + "'");
    }
    std::erase(free, static_cast<size_t>(it - names.begin()));
  }
  if (measuredUs.size() < free.size())
    throw InputError("", 0, 0, "",
                     "expected at least " + std::to_string(free.size()) + " points to fit " +
                         std::to_string(free.size()) + " parameters, found " +
                         std::to_string(measuredUs.size()));

  // Each free parameter within its physical bounds (bounds(): a datasheet or a measurement);
  // the parameters are fitted as logarithms, so the bounds are their logarithms.
  std::vector<double> lower, upper;
  for (size_t j : free) {
    const Bounds b = bounds(j, start);
    lower.push_back(std::log(b.lower));
    upper.push_back(std::log(b.upper));
    if (!(start.get(j) >= b.lower && start.get(j) <= b.upper)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "the starting value %g is outside its physical bounds [%g, %g] (",
                    start.get(j), b.lower, b.upper);
      throw InputError("", 0, 0, ModelParameters::names()[j], buf + std::string(b.source) + ")");
    }
  }
  auto paramsAt = [&](const std::vector<double>& x) {
    ModelParameters p = start;
    for (size_t j = 0; j < free.size(); ++j) p.set(free[j], std::exp(std::clamp(x[j], lower[j], upper[j])));
    return p;
  };
  auto simulateAll = [&](const ModelParameters& p) {
    std::vector<double> out;
    for (const auto& m : used) {
      const auto t = simulator.simulate(m, p);
      out.insert(out.end(), t.begin(), t.end());
    }
    return out;
  };
  auto residuals = [&](const std::vector<double>& x) {
    const std::vector<double> t = simulateAll(paramsAt(x));
    std::vector<double> r(t.size());
    for (size_t i = 0; i < t.size(); ++i) r[i] = std::log(t[i] / measuredUs[i]);
    return r;
  };
  std::vector<double> x0;
  for (size_t j : free) x0.push_back(std::log(start.get(j)));
  {
    // A point the model cannot time (zero or non-finite: e.g. a collective it reduces to nothing)
    // would stop the solver without a fit; name it instead.
    const std::vector<double> t = simulateAll(paramsAt(x0));
    size_t i = 0;
    for (const auto& m : used)
      for (const auto& p : m.points) {
        if (!(t[i] > 0) || !std::isfinite(t[i]))
          throw InputError(m.file, p.line, 0, "size",
                           "the model gives no positive time for " + m.label + " at " +
                               std::to_string(p.sizeBytes) + " bytes (" + std::to_string(m.ranks) +
                               " ranks): expected a collective with data to move between at least 2 ranks");
        ++i;
      }
  }
  LeastSquares::Options lso;
  lso.maxIterations = options.maxIterations;
  lso.relativeStep = 1e-4;
  // Every parameter these tables could move held (Options::held): the starting values, evaluated.
  const auto sol = [&] {
    if (!free.empty()) return LeastSquares::solve(residuals, x0, lower, upper, lso);
    LeastSquares::Result none;
    none.residuals = residuals(x0);
    for (double r : none.residuals) none.cost += r * r;
    none.evaluations = 1;
    none.converged = true;
    return none;
  }();

  Result res;
  res.parameters = paramsAt(sol.x);
  res.tuning = simulator.tuning();
  {
    TopologySpec unused = simulator.testbed();
    res.parameters.apply(unused, res.tuning);
  }
  for (size_t j : free) res.fitted.push_back(ModelParameters::names()[j]);
  // Standard errors in the parameters' units (p = e^x: sigma_p = p sigma_x).
  if (!sol.standardErrors.empty())
    for (size_t j = 0; j < free.size(); ++j)
      res.standardErrors.push_back(res.parameters.get(free[j]) * sol.standardErrors[j]);
  res.iterations = sol.iterations;
  res.simulations = sol.evaluations;
  res.converged = sol.converged;
  size_t i = 0;
  double sumPct2 = 0;
  for (const auto& m : used)
    for (const auto& p : m.points) {
      Point q;
      q.measurement = m.label;
      q.sizeBytes = p.sizeBytes;
      q.measuredUs = measuredUs[i];
      q.fittedUs = measuredUs[i] * std::exp(sol.residuals[i]);
      q.errorPct = 100 * (q.fittedUs / q.measuredUs - 1);
      sumPct2 += q.errorPct * q.errorPct;
      res.maxAbsErrorPct = std::max(res.maxAbsErrorPct, std::abs(q.errorPct));
      res.points.push_back(q);
      ++i;
    }
  res.rmsLogTime = std::sqrt(sol.cost / static_cast<double>(sol.residuals.size()));
  res.rmsErrorPct = std::sqrt(sumPct2 / static_cast<double>(res.points.size()));
  return res;
}

std::vector<CalibrationFit::HeldOut> CalibrationFit::crossValidate(
    const std::vector<Measurement>& measurements, const CollectiveSimulator& simulator,
    const Options& options) {
  // The tables that have points to fit, each with only those points.
  std::vector<Measurement> tables;
  for (const auto& m : measurements) {
    Measurement u = fittable(m, options.minSizeBytes);
    if (!u.points.empty()) tables.push_back(std::move(u));
  }
  std::vector<HeldOut> out;
  if (tables.size() < 2) return out;
  for (size_t k = 0; k < tables.size(); ++k) {
    std::vector<Measurement> rest;
    for (size_t i = 0; i < tables.size(); ++i)
      if (i != k) rest.push_back(tables[i]);
    const Result fitted = fit(rest, simulator, options);
    const Measurement& m = tables[k];
    const std::vector<double> predicted = simulator.simulate(m, fitted.parameters);
    std::vector<double> errors;
    for (size_t i = 0; i < m.points.size(); ++i)
      errors.push_back(100 * std::abs(m.points[i].timeUs(m.op, m.ranks) / predicted[i] - 1));
    HeldOut h;
    h.measurement = m.label;
    h.points = errors.size();
    h.fitted = fitted.fitted;
    std::sort(errors.begin(), errors.end());
    const size_t e = errors.size();
    h.medianAbsErrorPct = e % 2 ? errors[e / 2] : (errors[e / 2 - 1] + errors[e / 2]) / 2;
    h.maxAbsErrorPct = errors.back();
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace fabricsim
