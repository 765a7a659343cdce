// `fabricsim calibrate`: fit the collective model's free parameters (and compute efficiencies)
// to measurements and write calibration.yaml.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "sim/app/CommandLine.h"
#include "sim/app/Commands.h"
#include "sim/calibrate/CalibrationFit.h"
#include "sim/calibrate/CalibrationWriter.h"
#include "sim/calibrate/ComputeFit.h"
#include "sim/calibrate/KernelFit.h"
#include "sim/calibrate/MeasurementReader.h"
#include "sim/config/CalibrationLoader.h"
#include "sim/config/GpuPresets.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/core/Units.h"
#include "sim/report/ResultsFile.h"

namespace po = boost::program_options;

namespace fabricsim {
namespace {

/// A testbed for measurements without --topology: `hosts` H100-class hosts (NVLink 4 at
/// 450 GB/s, one 400 Gb/s InfiniBand NIC per GPU) on one switch.
std::string defaultTestbed(uint32_t hosts, uint32_t gpusPerHost) {
  return "name: default-h100-testbed\n"
         "topology: {kind: leaf-spine, leaves: 1, spines: 1, hosts_per_leaf: " +
         std::to_string(hosts) +
         "}\n"
         "hosts: {gpus_per_host: " +
         std::to_string(gpusPerHost) +
         ", nvlink: {bandwidth: 450GBps, latency: 1us}}\n"
         "links: {technology: infiniband, host_speed: 400Gbps, fabric_speed: 400Gbps, latency: 500ns, mtu: "
         "4096}\n"
         "switch: {buffer: 64MiB, latency: 200ns, pfc: {enabled: false}}\n";
}

}  // namespace

int calibrateCommand(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string out, topology, backend, minSize, op, compute, peak, start, attention, overlap;
  uint32_t ranks = 0, gpusPerHost = 0;
  std::vector<std::string> held;
  bool quiet = false;
  po::options_description desc(
      "usage: fabricsim calibrate MEASUREMENTS... --out calibration.yaml [options]\n\n"
      "Fits the simulator's collective model (NVLink and NIC bandwidth and per-step latencies; with\n"
      "collectives.nvls the NVLS efficiency, latency and pipeline, the NVLS-tree factor and the network hop\n"
      "latency) (and, with --compute, GEMM efficiencies) to nccl-tests logs, gpu/ harness JSON or published "
      "CSV/YAML\n"
      "tables, by least squares with the simulator in the loop; writes the calibration YAML with its "
      "residuals");
  desc.add_options()("help,h", "show this help")("out,o", po::value<std::string>(&out),
                                                 "calibration YAML to write")(
      "topology,t", po::value<std::string>(&topology),
      "testbed topology YAML (default: H100 hosts with 450 GB/s NVLink and 400 Gb/s NICs, one switch)")(
      "calibration", po::value<std::string>(&start),
      "start from this calibration (its collectives tuning, e.g. channels or algorithm, and its fabric "
      "block are kept)")("backend", po::value<std::string>(&backend)->default_value("flow"), "flow | packet")(
      "min-size", po::value<std::string>(&minSize)->default_value("1MiB"),
      "fit only sizes of at least this (NCCL's LL/LL128 protocols rule below ~1 MiB; their latencies are "
      "not fitted)")("op", po::value<std::string>(&op),
                     "operation of files that do not say (all_reduce, all_gather, ...)")(
      "ranks", po::value<uint32_t>(&ranks), "ranks of files that do not say")(
      "gpus-per-host", po::value<uint32_t>(&gpusPerHost), "GPUs per host of files that do not say")(
      "hold", po::value<std::vector<std::string>>(&held),
      "parameters to hold at their starting values (names as in the fit table, e.g. nvls_pipeline_MiB)")(
      "compute", po::value<std::string>(&compute),
      "gpu/ harness compute JSON: fits gpu.efficiency {gemm, fp8_gemm} and the HBM bandwidth")(
      "attention", po::value<std::string>(&attention),
      "gpu/ harness attention JSON (with --compute): fits gpu.efficiency {attention, memory}")(
      "overlap", po::value<std::string>(&overlap),
      "gpu/ harness overlap JSON (with --compute): fits gpu.comm_sm_share")(
      "peak", po::value<std::string>(&peak)->default_value("989TFLOPS"),
      "GPU peak when the compute JSON gives none")("quiet,q", po::bool_switch(&quiet), "no fit table");
  po::variables_map vm;
  if (const int status = parseCommandLine(args, desc, files, "calibrate", vm); status >= 0) return status;
  if (files.empty() || out.empty()) {
    std::fprintf(stderr, "error: fabricsim calibrate: expected MEASUREMENTS... and --out calibration.yaml\n");
    return 2;
  }
  ResultsFile::checkOutputPath(out, "--out");
  const auto min = parseBytes(minSize);
  if (!min.value) throw InputError("", 0, 0, "--min-size", min.error);
  const std::vector<Measurement> ms = MeasurementReader::readAll(files, op, ranks, gpusPerHost);

  TopologySpec testbed;
  std::string testbedName = topology;
  if (!topology.empty()) {
    // A starting calibration's fabric block (e.g. an effective NVLink bandwidth) applies to the
    // testbed as it does in `validate`.
    testbed = loadTopologyFile(topology,
                               start.empty() ? std::vector<std::string>{} : calibrationTopologySets(start));
  } else {
    uint32_t hosts = 1, gph = 1;
    for (const auto& m : ms) {
      hosts = std::max(hosts, m.hosts);
      gph = std::max(gph, m.gpusPerHost);
    }
    testbed = parseTopologyYaml(defaultTestbed(hosts, gph), "<default H100 testbed>");
    testbedName =
        "default H100 testbed (" + std::to_string(hosts) + " hosts x " + std::to_string(gph) + " GPUs)";
  }
  CollectiveTuning tuning;
  if (!start.empty()) {
    GpuSpec gpu;
    applyCalibrationFile(start, gpu, tuning);
  }
  const CollectiveSimulator sim(testbed, tuning, backend);
  CalibrationFit::Options fo;
  fo.minSizeBytes = *min.value;
  for (const std::string& h : held) {  // --hold a,b as well as --hold a --hold b
    size_t from = 0;
    while (from <= h.size()) {
      const size_t comma = std::min(h.find(',', from), h.size());
      if (comma > from) fo.held.push_back(h.substr(from, comma - from));
      from = comma + 1;
    }
  }
  const auto fit = [&] {
    try {
      return CalibrationFit::fit(ms, sim, fo);
    } catch (const InputError& e) {
      // A starting value outside its physical bounds comes from the starting calibration (or
      // the testbed): name that file and the line of its key.
      std::vector<Diagnostic> d = e.diagnostics();
      for (Diagnostic& x : d) {
        if (!x.file.empty() || x.key.empty()) continue;
        x.file = !start.empty() ? start : topology;
        std::string key = x.key;
        for (const char* unit : {"_us", "_GBps", "_MiB"})
          if (key.size() > std::string(unit).size() && key.ends_with(unit))
            key.resize(key.size() - std::string(unit).size());
        std::ifstream in(x.file);
        std::string line;
        for (int n = 1; std::getline(in, line); ++n)
          if (line.find(key + ":") != std::string::npos) {
            x.line = n;
            break;
          }
      }
      throw InputError(std::move(d));
    }
  }();
  const auto cv = CalibrationFit::crossValidate(ms, sim, fo);
  std::optional<ComputeFit::Result> cf;
  if (!compute.empty()) {
    const auto pk = parseFlops(peak);
    if (!pk.value) throw InputError("", 0, 0, "--peak", pk.error);
    cf = ComputeFit::fitFile(compute, *pk.value);
    if (!attention.empty()) {
      // Memory efficiencies relative to the HBM rate the calibration writes (the fastest copy),
      // or the datasheet's when the compute result measured none.
      const double hbm = cf->hbmBytesPerSecond.value_or(GpuSpec{}.hbmBytesPerSecond);
      const KernelFit::Attention a = KernelFit::fitAttentionFile(attention, cf->peakFlops, hbm);
      cf->attentionEfficiency = a.efficiency;
      cf->memoryEfficiency = a.memoryEfficiency;
    }
    if (!overlap.empty()) cf->commSmShare = KernelFit::fitOverlapFile(overlap).commSmShare;
  } else if (!attention.empty() || !overlap.empty()) {
    throw InputError("", 0, 0, attention.empty() ? "--overlap" : "--attention",
                     "needs --compute (the compute result gives the peak and HBM rate it is relative to)");
  }
  std::vector<std::string> sources = files;
  if (!compute.empty()) sources.push_back(compute);
  if (!attention.empty()) sources.push_back(attention);
  if (!overlap.empty()) sources.push_back(overlap);
  const std::string text =
      CalibrationWriter::yaml(fit, sources, testbedName, backend, fo.minSizeBytes, cf, cv);
  ResultsFile::writeBytes(out, text);
  // What was written must read back (as a workload's `calibration:` and as validate's).
  GpuSpec gcheck;
  CollectiveTuning tcheck;
  applyCalibrationFile(out, gcheck, tcheck);
  calibrationTopologySets(out);
  if (!quiet) {
    std::printf(
        "fit of %zu points from %zu measurements (sizes >= %lld B, %s backend, %d iterations, %d "
        "simulations%s)\n",
        fit.points.size(), ms.size(), static_cast<long long>(fo.minSizeBytes), backend.c_str(),
        fit.iterations, fit.simulations, fit.converged ? "" : ", NOT converged");
    for (size_t i = 0; i < ModelParameters::names().size(); ++i) {
      const auto at = std::find(fit.fitted.begin(), fit.fitted.end(), ModelParameters::names()[i]);
      if (at == fit.fitted.end()) {
        std::printf("  %-24s %10.3f  held (testbed/tuning)\n", ModelParameters::names()[i].c_str(),
                    fit.parameters.get(i));
      } else if (fit.standardErrors.empty()) {
        std::printf("  %-24s %10.3f  fitted\n", ModelParameters::names()[i].c_str(), fit.parameters.get(i));
      } else {
        std::printf("  %-24s %10.3f  fitted, +- %.3f (one standard error)\n",
                    ModelParameters::names()[i].c_str(), fit.parameters.get(i),
                    fit.standardErrors[static_cast<size_t>(at - fit.fitted.begin())]);
      }
    }
    if (cf) {
      if (cf->gemmEfficiency)
        std::printf("  %-24s %10.4f  fitted (%d GEMMs)\n", "gpu.efficiency.gemm", *cf->gemmEfficiency,
                    cf->gemms);
      if (cf->fp8GemmEfficiency)
        std::printf("  %-24s %10.4f  fitted (%d fp8 GEMMs)\n", "gpu.efficiency.fp8_gemm", *cf->fp8GemmEfficiency,
                    cf->fp8Gemms);
      if (cf->attentionEfficiency)
        std::printf("  %-24s %10.4f  fitted (fused attention, causal FLOPs)\n", "gpu.efficiency.attention",
                    *cf->attentionEfficiency);
      if (cf->memoryEfficiency)
        std::printf("  %-24s %10.4f  fitted (memory-bound kernels)\n", "gpu.efficiency.memory",
                    *cf->memoryEfficiency);
      if (cf->commSmShare)
        std::printf("  %-24s %10.4f  fitted (GEMMs beside copy kernels)\n", "gpu.comm_sm_share", *cf->commSmShare);
      if (cf->unfusedAttentionEfficiency)
        std::printf(
            "  %-24s %10.4f  measured, not written: unfused score/value GEMMs, a lower bound of "
            "gpu.efficiency.attention (FlashAttention)\n",
            "unfused attention", *cf->unfusedAttentionEfficiency);
    }
    std::printf("residuals: rms %.2f%% of time, max |error| %.2f%%\n", fit.rmsErrorPct, fit.maxAbsErrorPct);
    for (const auto& h : cv)
      std::printf(
          "leave one table out: %s predicted by a fit on the others: median |busbw error| %.2f%%, max "
          "%.2f%% (%zu points)\n",
          h.measurement.c_str(), h.medianAbsErrorPct, h.maxAbsErrorPct, h.points);
    std::printf("%-60s %14s %12s %12s %8s\n", "measurement", "size (B)", "measured us", "fitted us",
                "error %");
    for (const auto& p : fit.points)
      std::printf("%-60s %14lld %12.2f %12.2f %+8.2f\n", p.measurement.c_str(),
                  static_cast<long long>(p.sizeBytes), p.measuredUs, p.fittedUs, p.errorPct);
    std::printf("calibration written to %s\n", out.c_str());
  }
  return 0;
}

}  // namespace fabricsim
