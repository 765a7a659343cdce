// fabricsim-gpu-collectives: times one NCCL collective over a size sweep, prints nccl-tests'
// table on rank 0's stdout and optionally writes the JSON document (CollectiveReport).
// One process on one GPU without a launcher; N ranks under mpirun (one GPU per rank, or -g GPUs
// per process).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "gpu/common/CollectiveOptions.h"
#include "gpu/common/CollectiveReport.h"
#include "gpu/common/GpuTelemetry.h"
#include "gpu/common/HostInfo.h"
#include "gpu/common/NcclTestsTable.h"
#include "gpu/common/NcclTuningLog.h"
#include "gpu/cuda/CollectiveRunner.h"
#include "gpu/cuda/DeviceInfo.h"
#include "gpu/cuda/MpiContext.h"

using namespace fabricsim::gpu;

namespace {

std::string utcNow() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// This process's part of the system description: its host, GPUs and device lines.
nlohmann::json processInfo(const MpiContext& mpi, const CollectiveRunner& runner) {
  nlohmann::json gpus = nlohmann::json::array();
  nlohmann::json lines = nlohmann::json::array();
  for (int i = 0; i < runner.localGpus(); ++i) {
    auto g = DeviceInfo::describe(runner.device(i));
    g["rank"] = runner.firstRank() + i;
    g["telemetry"] = GpuTelemetry(g["pci_bus_id"].get<std::string>()).describe();
    gpus.push_back(g);
    const RankDevice d = DeviceInfo::rankDevice(runner.firstRank() + i, runner.device(i));
    lines.push_back({{"rank", d.rank},
                     {"pid", d.pid},
                     {"host", d.host},
                     {"device", d.device},
                     {"pci", d.pciBusId},
                     {"name", d.name}});
  }
  return {{"process", mpi.rank()},
          {"hostname", HostInfo::hostname()},
          {"local_rank", mpi.localRank()},
          {"gpus", gpus},
          {"device_lines", lines},
          {"nics", HostInfo::infinibandNics()},
          {"versions", DeviceInfo::versions(true)}};
}

// Rank 0: the per-process records grouped into hosts, plus versions and the NCCL environment.
nlohmann::json systemInfo(const std::vector<std::string>& records, std::vector<RankDevice>& devices) {
  nlohmann::json hosts = nlohmann::json::array();
  nlohmann::json allGpus = nlohmann::json::array();
  nlohmann::json versions;
  for (const auto& text : records) {
    const auto p = nlohmann::json::parse(text);
    if (versions.is_null()) versions = p["versions"];
    for (const auto& g : p["gpus"]) allGpus.push_back(g);
    for (const auto& l : p["device_lines"]) {
      RankDevice d;
      d.rank = l["rank"];
      d.pid = l["pid"];
      d.host = l["host"];
      d.device = l["device"];
      d.pciBusId = l["pci"];
      d.name = l["name"];
      devices.push_back(d);
    }
    auto host = std::find_if(hosts.begin(), hosts.end(),
                             [&](const nlohmann::json& h) { return h["hostname"] == p["hostname"]; });
    if (host == hosts.end()) {
      hosts.push_back({{"hostname", p["hostname"]},
                       {"processes", nlohmann::json::array()},
                       {"ranks", nlohmann::json::array()},
                       {"nics", p["nics"]}});
      host = hosts.end() - 1;
    }
    (*host)["processes"].push_back(p["process"]);
    for (const auto& g : p["gpus"]) (*host)["ranks"].push_back(g["rank"]);
  }
  for (auto& h : hosts) h["gpus"] = h["ranks"].size();
  nlohmann::json s = versions;
  s["timestamp"] = utcNow();
  s["gpu_model"] = allGpus.empty() ? nlohmann::json(nullptr) : allGpus[0]["name"];
  s["gpu_count"] = allGpus.size();
  s["host_count"] = hosts.size();
  s["gpus_per_host"] = hosts.empty() ? 0 : hosts[0]["gpus"].get<size_t>();
  s["gpus"] = allGpus;
  s["hosts"] = hosts;
  s["nccl_env"] = HostInfo::ncclEnvironment();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CollectiveOptions options;
  try {
    options = CollectiveOptions::parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "fabricsim-gpu-collectives: " << e.what() << "\n(--help lists the options)\n";
    return 2;
  }
  if (options.help) {
    std::cout << options.helpText;
    return 0;
  }
  // With --json, NCCL logs what it chose to a file of each process (unless the user set
  // NCCL_DEBUG or NCCL_DEBUG_FILE), and rank 0 records its choice for every size.
  std::optional<std::string> ncclLog;
  if (!options.jsonPath.empty()) {
    std::error_code ec;
    const auto dir = std::filesystem::temp_directory_path(ec);
    if (!ec)
      ncclLog = NcclTuningLog::captureTo(
          dir.string(), static_cast<long>(::getpid()), [](const char* k) { return std::getenv(k); },
          [](const char* k, const char* v) { ::setenv(k, v, 1); });
  }
  struct RemoveLog {
    const std::optional<std::string>& path;
    ~RemoveLog() {
      std::error_code ec;
      if (path) std::filesystem::remove(*path, ec);
    }
  } removeLog{ncclLog};
  try {
    MpiContext mpi(&argc, &argv);
    auto& params = options.params;
    CollectiveRunner runner(params, mpi, options.seed);
    const auto records = mpi.gather(processInfo(mpi, runner).dump());
    std::vector<RankDevice> devices;
    nlohmann::json system;
    const bool root = mpi.rank() == 0;
    if (root) {
      system = systemInfo(records, devices);
      NcclTestsTable::writePreamble(std::cout, params, devices);
      std::cout << std::flush;
    }
    std::vector<CollectiveRow> rows;
    for (size_t bytes : options.sizes()) {
      rows.push_back(runner.measure(bytes));
      if (root && ncclLog) {
        std::ifstream log(*ncclLog);
        std::stringstream text;
        text << log.rdbuf();
        const std::string op(collectiveName(params.collective));
        rows.back().nccl =
            NcclTuningLog::choiceFor(NcclTuningLog::parse(text.str()), NcclTuningLog::functionName(op),
                                     NcclTuningLog::ncclBytes(op, bytes, params.ranks));
      }
      if (root) {
        NcclTestsTable::writeRow(std::cout, params, rows.back());
        std::cout << std::flush;
      }
    }
    if (root) {
      NcclTestsTable::writeFooter(std::cout, rows);
      if (!options.jsonPath.empty()) {
        std::ofstream out(options.jsonPath);
        out << CollectiveReport::toJson(params, rows, system).dump(2) << "\n";
        if (!out) throw std::runtime_error("cannot write " + options.jsonPath);
      }
    }
    return NcclTestsTable::failedChecks(rows) ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim-gpu-collectives: " << e.what() << "\n";
    return 1;
  }
}
