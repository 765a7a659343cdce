#include "sim/calibrate/ValidationReport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/config/WorkloadLoader.h"

namespace fabricsim {

ValidationReport::Summary ValidationReport::summarise(const std::vector<double>& absErrors) {
  Summary s;
  s.points = absErrors.size();
  if (absErrors.empty()) return s;
  std::vector<double> v = absErrors;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.medianAbsErrorPct = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.maxAbsErrorPct = v.back();
  return s;
}

ValidationReport ValidationReport::run(const std::vector<Measurement>& measurements,
                                       const CollectiveSimulator& simulator, const ModelParameters& params,
                                       int64_t minSizeBytes) {
  ValidationReport r;
  r.minSizeBytes_ = minSizeBytes;
  std::vector<double> all;
  for (const auto& m : measurements) {
    r.measurements_.push_back({m.label, m.file, m.algorithm.empty() ? "default" : m.algorithm,
                               m.protocol.empty() ? "default" : m.protocol, m.op, m.ranks, m.hosts});
    Measurement usable = m;
    usable.points.clear();
    for (const auto& p : m.points) {
      const double bw = p.busbwGBps(m.op, m.ranks);
      if (std::isfinite(bw) && bw > 0) usable.points.push_back(p);
    }
    if (usable.points.empty()) continue;
    const std::vector<CollectiveSimulator::Run> t = simulator.simulateRuns(usable, params);
    const double factor = busbwFactor(m.op, m.ranks);
    for (size_t i = 0; i < usable.points.size(); ++i) {
      const auto& p = usable.points[i];
      Point q;
      q.file = m.file;
      q.measurement = m.label;
      q.op = m.op;
      q.ranks = m.ranks;
      q.sizeBytes = p.sizeBytes;
      q.measuredBusbwGBps = p.busbwGBps(m.op, m.ranks);
      q.simulatedBusbwGBps = factor * static_cast<double>(p.sizeBytes) / (t[i].timeUs * 1e3);
      q.algorithm = t[i].algorithm;
      q.protocol = t[i].protocol;
      if (t[i].ncclModelUs > 0)
        q.ncclModelBusbwGBps = factor * static_cast<double>(p.sizeBytes) / (t[i].ncclModelUs * 1e3);
      q.errorPct = 100 * (q.simulatedBusbwGBps / q.measuredBusbwGBps - 1);
      q.inSummary = p.sizeBytes >= minSizeBytes;
      if (q.inSummary) all.push_back(std::abs(q.errorPct));
      r.points_.push_back(q);
    }
  }
  r.summary_ = summarise(all);
  return r;
}

ValidationReport::Summary ValidationReport::summaryOf(const std::string& measurement) const {
  std::vector<double> v;
  for (const auto& p : points_)
    if (p.measurement == measurement && p.inSummary) v.push_back(std::abs(p.errorPct));
  return summarise(v);
}

nlohmann::json ValidationReport::json(const std::string& calibration, const std::string& topology,
                                      const std::string& backend) const {
  nlohmann::json j;
  j["calibration"] = calibration;
  j["topology"] = topology;
  j["backend"] = backend;
  auto& pts = j["points"] = nlohmann::json::array();
  for (const auto& p : points_)
    pts.push_back({{"file", p.file},
                   {"measurement", p.measurement},
                   {"op", toString(p.op)},
                   {"ranks", p.ranks},
                   {"size_bytes", p.sizeBytes},
                   {"measured_busbw_GBps", p.measuredBusbwGBps},
                   {"simulated_busbw_GBps", p.simulatedBusbwGBps},
                   {"error_pct", p.errorPct},
                   {"in_summary", p.inSummary},
                   {"simulated_algorithm", toString(p.algorithm)},
                   {"simulated_protocol", toString(p.protocol)},
                   {"nccl_model_busbw_GBps",
                    p.ncclModelBusbwGBps > 0 ? nlohmann::json(p.ncclModelBusbwGBps) : nlohmann::json(nullptr)}});
  j["summary"] = {{"median_abs_error_pct", summary_.medianAbsErrorPct},
                  {"max_abs_error_pct", summary_.maxAbsErrorPct},
                  {"points", summary_.points},
                  {"min_size_bytes", minSizeBytes_}};
  auto& ms = j["measurements"] = nlohmann::json::array();
  for (const auto& m : measurements_) {
    const Summary s = summaryOf(m.label);
    ms.push_back({{"file", m.file},
                  {"measurement", m.label},
                  {"op", toString(m.op)},
                  {"ranks", m.ranks},
                  {"hosts", m.hosts},
                  {"algorithm", m.algorithm},
                  {"protocol", m.protocol},
                  {"median_abs_error_pct", s.medianAbsErrorPct},
                  {"max_abs_error_pct", s.maxAbsErrorPct},
                  {"points", s.points}});
  }
  return j;
}

std::string ValidationReport::markdown() const {
  std::string out;
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "# fabricsim validation\n\nOver sizes >= %lld bytes: median |error| %.1f%%, max |error| %.1f%%, %zu "
      "points.\n\n| measurement | op | ranks | hosts | NCCL algorithm | NCCL protocol | points | median abs "
      "error %% | max abs error %% |\n|---|---|---:|---:|---|---|---:|---:|---:|\n",
      static_cast<long long>(minSizeBytes_), summary_.medianAbsErrorPct, summary_.maxAbsErrorPct,
      summary_.points);
  out += buf;
  for (const auto& m : measurements_) {
    const Summary s = summaryOf(m.label);
    std::snprintf(buf, sizeof buf, "| %s | %s | %u | %u | %s | %s | %zu | %.1f | %.1f |\n", m.label.c_str(),
                  toString(m.op), m.ranks, m.hosts, m.algorithm.c_str(), m.protocol.c_str(), s.points,
                  s.medianAbsErrorPct, s.maxAbsErrorPct);
    out += buf;
  }
  for (const auto& m : measurements_) {
    out += "\n## " + m.label +
           "\n\n| size (B) | measured busbw (GB/s) | simulated busbw (GB/s) | error % | simulated as | NCCL's "
           "model (GB/s) |\n|---:|---:|---:|---:|---|---:|\n";
    for (const auto& p : points_) {
      if (p.measurement != m.label) continue;
      char model[32] = "-";
      if (p.ncclModelBusbwGBps > 0) std::snprintf(model, sizeof model, "%.2f", p.ncclModelBusbwGBps);
      std::snprintf(buf, sizeof buf, "| %lld%s | %.2f | %.2f | %+.1f | %s %s | %s |\n",
                    static_cast<long long>(p.sizeBytes), p.inSummary ? "" : " (not in summary)",
                    p.measuredBusbwGBps, p.simulatedBusbwGBps, p.errorPct, toString(p.algorithm),
                    toString(p.protocol), model);
      out += buf;
    }
  }
  return out;
}

}  // namespace fabricsim
