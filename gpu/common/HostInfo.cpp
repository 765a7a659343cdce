#include "gpu/common/HostInfo.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <regex>
#include <sstream>

extern char** environ;

namespace fabricsim::gpu {
namespace {

namespace fs = std::filesystem;

// First line of a small sysfs file, without the trailing newline; nullopt if unreadable.
std::optional<std::string> readLine(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::vector<fs::path> sortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string HostInfo::hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

nlohmann::json HostInfo::ncclEnvironment(char** envp) {
  nlohmann::json out = nlohmann::json::object();
  for (char** e = envp ? envp : environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = kv.substr(0, eq);
    if (name.starts_with("NCCL_") || name == "CUDA_VISIBLE_DEVICES") out[name] = kv.substr(eq + 1);
  }
  return out;
}

std::optional<double> HostInfo::parseRateGbps(const std::string& rate) {
  size_t i = 0;
  while (i < rate.size() && rate[i] == ' ') ++i;
  double v = 0;
  const auto [end, ec] = std::from_chars(rate.data() + i, rate.data() + rate.size(), v);
  if (ec != std::errc() || end == rate.data() + i) return std::nullopt;
  return v;
}

nlohmann::json HostInfo::infinibandNics(const fs::path& root) {
  nlohmann::json nics = nlohmann::json::array();
  for (const auto& dev : sortedEntries(root)) {
    nlohmann::json nic;
    nic["name"] = dev.filename().string();
    for (const char* key : {"fw_ver", "board_id", "hca_type", "node_guid", "node_type"})
      if (auto v = readLine(dev / key)) nic[key] = *v;
    if (auto numa = readLine(dev / "device" / "numa_node")) nic["numa_node"] = *numa;
    nlohmann::json netdevs = nlohmann::json::array();
    for (const auto& nd : sortedEntries(dev / "device" / "net")) netdevs.push_back(nd.filename().string());
    nic["netdevs"] = netdevs;
    nlohmann::json ports = nlohmann::json::array();
    for (const auto& port : sortedEntries(dev / "ports")) {
      nlohmann::json p;
      p["port"] = port.filename().string();
      if (auto v = readLine(port / "state")) p["state"] = *v;
      if (auto v = readLine(port / "phys_state")) p["phys_state"] = *v;
      if (auto v = readLine(port / "link_layer")) p["link_layer"] = *v;
      if (auto v = readLine(port / "rate")) {
        p["rate"] = *v;
        if (auto g = parseRateGbps(*v)) p["rate_Gbps"] = *g;
      }
      ports.push_back(p);
    }
    nic["ports"] = ports;
    nics.push_back(nic);
  }
  return nics;
}

std::optional<std::string> HostInfo::nvidiaDriverVersion(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:13 UTC 2025"
  static const std::regex kVersion(R"(Kernel Module(?: for [A-Za-z0-9_]+)?\s+([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  const std::string text = ss.str();
  if (std::regex_search(text, m, kVersion)) return m[1].str();
  return std::nullopt;
}

}  // namespace fabricsim::gpu
