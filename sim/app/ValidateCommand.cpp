// `fabricsim validate`: simulate each measured collective sweep on the testbed with a
// calibration applied and report measured vs simulated busbw (JSON, markdown, PNG).
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "sim/app/CommandLine.h"
#include "sim/app/Commands.h"
#include "sim/calibrate/MeasurementReader.h"
#include "sim/calibrate/ValidationReport.h"
#include "sim/config/CalibrationLoader.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/core/Units.h"
#include "sim/report/ResultsFile.h"

namespace po = boost::program_options;

namespace fabricsim {
namespace {

/// scripts/plot_validation.py: $FABRICSIM_SCRIPTS, else next to the source tree the executable
/// was built in (build/<dir>/fabricsim -> scripts/), else ./scripts.
std::string plotScript() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("FABRICSIM_SCRIPTS"))
    return (fs::path(env) / "plot_validation.py").string();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (fs::path d = exe.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path())
      if (fs::is_regular_file(d / "scripts" / "plot_validation.py", ec))
        return (d / "scripts" / "plot_validation.py").string();
  return "scripts/plot_validation.py";
}

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

int validateCommand(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string calibration, topology, out, markdown, plot, backend, minSize, op;
  uint32_t ranks = 0, gpusPerHost = 0;
  bool quiet = false;
  po::options_description desc(
      "usage: fabricsim validate --calibration C.yaml --topology TESTBED.yaml MEASUREMENTS... [options]\n\n"
      "Simulates each measurement's collective sweep (its op, ranks and GPUs per host) on the testbed with "
      "the\n"
      "calibration applied and reports measured vs simulated busbw per size, with the median and maximum "
      "absolute\n"
      "error over sizes >= --min-size");
  desc.add_options()("help,h", "show this help")("calibration,c", po::value<std::string>(&calibration),
                                                 "calibration YAML (from fabricsim calibrate)")(
      "topology,t", po::value<std::string>(&topology), "testbed topology YAML (the measured cluster)")(
      "out,o", po::value<std::string>(&out), "write the report JSON here")(
      "markdown", po::value<std::string>(&markdown), "write a markdown report here")(
      "plot", po::value<std::string>(&plot),
      "write a PNG of measured vs simulated busbw (python3-matplotlib)")(
      "backend", po::value<std::string>(&backend)->default_value("flow"), "flow | packet")(
      "min-size", po::value<std::string>(&minSize)->default_value("1MiB"), "smallest size in the summary")(
      "op", po::value<std::string>(&op), "operation of files that do not say")(
      "ranks", po::value<uint32_t>(&ranks), "ranks of files that do not say")(
      "gpus-per-host", po::value<uint32_t>(&gpusPerHost), "GPUs per host of files that do not say")(
      "quiet,q", po::bool_switch(&quiet), "no table on stdout");
  po::variables_map vm;
  if (const int status = parseCommandLine(args, desc, files, "validate", vm); status >= 0) return status;
  if (files.empty() || calibration.empty() || topology.empty()) {
    std::fprintf(
        stderr,
        "error: fabricsim validate: expected --calibration C.yaml --topology TESTBED.yaml MEASUREMENTS...\n");
    return 2;
  }
  const auto min = parseBytes(minSize);
  if (!min.value) throw InputError("", 0, 0, "--min-size", min.error);
  ResultsFile::checkOutputPath(out, "--out");
  ResultsFile::checkOutputPath(markdown, "--markdown");
  ResultsFile::checkOutputPath(plot, "--plot");
  if (out.empty()) ResultsFile::checkOutputPath(plot.empty() ? "" : plot + ".json", "--plot");
  const std::vector<Measurement> ms = MeasurementReader::readAll(files, op, ranks, gpusPerHost);

  const TopologySpec testbed = loadTopologyFile(topology, calibrationTopologySets(calibration));
  GpuSpec gpu;
  CollectiveTuning tuning;
  applyCalibrationFile(calibration, gpu, tuning);
  const CollectiveSimulator sim(testbed, tuning, backend);
  const auto report = ValidationReport::run(ms, sim, ModelParameters{}, *min.value);
  const auto json = report.json(calibration, topology, backend);

  std::string jsonPath = out;
  if (jsonPath.empty() && !plot.empty()) jsonPath = plot + ".json";
  if (!jsonPath.empty()) ResultsFile::writeJson(jsonPath, json);
  if (!markdown.empty()) ResultsFile::writeBytes(markdown, report.markdown());
  if (!quiet) {
    std::printf("%-64s %-14s %5s %14s %10s %10s %8s\n", "measurement", "op", "ranks", "size (B)", "measured",
                "simulated", "error %");
    for (const auto& p : report.points())
      if (p.inSummary)
        std::printf("%-64s %-14s %5u %14lld %10.2f %10.2f %+8.1f\n", p.measurement.c_str(), toString(p.op),
                    p.ranks, static_cast<long long>(p.sizeBytes), p.measuredBusbwGBps, p.simulatedBusbwGBps,
                    p.errorPct);
    std::printf("\nper measurement (sizes >= %lld B):\n", static_cast<long long>(*min.value));
    for (const auto& m : json["measurements"])
      std::printf("  %-64s median |error| %5.1f%%  max %5.1f%%  (%d points)\n",
                  m["measurement"].get<std::string>().c_str(), m["median_abs_error_pct"].get<double>(),
                  m["max_abs_error_pct"].get<double>(), m["points"].get<int>());
    std::printf("overall: median |error| %.1f%%, max |error| %.1f%% over %zu points\n",
                report.summary().medianAbsErrorPct, report.summary().maxAbsErrorPct, report.summary().points);
  }
  if (!plot.empty()) {
    // Debian's interpreter, where python3-matplotlib is installed, ahead of any python3 on PATH.
    const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string cmd =
        python + " " + shellQuote(plotScript()) + " " + shellQuote(jsonPath) + " " + shellQuote(plot);
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr, "fabricsim validate: the plot failed (%s); the JSON report is %s\n", cmd.c_str(),
                   jsonPath.c_str());
      return 1;
    }
    if (!quiet) std::printf("plot written to %s\n", plot.c_str());
  }
  if (!out.empty() && !quiet) std::printf("report written to %s\n", out.c_str());
  return 0;
}

}  // namespace fabricsim
