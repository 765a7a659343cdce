#include "gpu/common/NcclTuningLog.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <tuple>

namespace fabricsim::gpu {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// NCCL's algorithm names (ncclAlgoStr) in fabricsim's spelling.
std::string algorithmName(const std::string& nccl) {
  const std::string a = lower(nccl);
  if (a == "nvlstree") return "nvls_tree";
  if (a == "collnetdirect") return "collnet_direct";
  if (a == "collnetchain") return "collnet_chain";
  return a;
}

bool parseUnsigned(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 19 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  out = std::stoull(s);
  return true;
}

/// One tuning line, from the text after "NCCL INFO ".
std::optional<NcclChoice> parseLine(const std::string& rest) {
  // "<Function>: <bytes> Bytes -> Algo <ALGO> proto <PROTO> channel{Lo..Hi}={lo..hi}"
  std::istringstream in(rest);
  std::string func, bytes, unit, arrow, algoKey, algo, protoKey, proto, channels;
  if (!(in >> func >> bytes >> unit >> arrow >> algoKey >> algo >> protoKey >> proto >> channels)) return {};
  if (func.size() < 2 || func.back() != ':' || unit != "Bytes" || arrow != "->" || algoKey != "Algo" ||
      protoKey != "proto")
    return {};
  NcclChoice c;
  c.function = func.substr(0, func.size() - 1);
  if (!parseUnsigned(bytes, c.bytes)) return {};
  c.algorithm = algorithmName(algo);
  c.protocol = lower(proto);
  const std::string prefix = "channel{Lo..Hi}={";
  if (channels.rfind(prefix, 0) != 0 || channels.back() != '}') return {};
  const std::string range = channels.substr(prefix.size(), channels.size() - prefix.size() - 1);
  const size_t dots = range.find("..");
  uint64_t lo = 0, hi = 0;
  if (dots == std::string::npos || !parseUnsigned(range.substr(0, dots), lo) ||
      !parseUnsigned(range.substr(dots + 2), hi) || hi < lo || hi - lo >= 1024)
    return {};
  c.channels = static_cast<int>(hi - lo + 1);
  return c;
}

}  // namespace

std::vector<NcclChoice> NcclTuningLog::parse(const std::string& text) {
  std::vector<NcclChoice> out;
  std::istringstream in(text);
  std::string line;
  const std::string tag = "NCCL INFO ";
  while (std::getline(in, line)) {
    const size_t at = line.find(tag);
    if (at == std::string::npos || line.find(" Bytes -> Algo ") == std::string::npos) continue;
    if (auto c = parseLine(line.substr(at + tag.size()))) out.push_back(*c);
  }
  return out;
}

std::optional<std::string> NcclTuningLog::version(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  const std::string tag = "NCCL INFO NCCL version ";
  while (std::getline(in, line)) {
    const size_t at = line.find(tag);
    if (at == std::string::npos) continue;
    std::istringstream rest(line.substr(at + tag.size()));
    std::string v;
    if (rest >> v) return v;
  }
  return std::nullopt;
}

std::optional<NcclChoice> NcclTuningLog::choiceFor(const std::vector<NcclChoice>& choices,
                                                   const std::string& function, uint64_t bytes) {
  // Counts per (algorithm, protocol, channels), remembering the first index for ties.
  std::map<std::tuple<std::string, std::string, int>, std::pair<int, size_t>> counts;
  for (size_t i = 0; i < choices.size(); ++i) {
    const NcclChoice& c = choices[i];
    if (c.function != function || c.bytes != bytes) continue;
    auto [it, fresh] = counts.try_emplace({c.algorithm, c.protocol, c.channels}, 0, i);
    ++it->second.first;
  }
  if (counts.empty()) return std::nullopt;
  auto best = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it)
    if (it->second.first > best->second.first ||
        (it->second.first == best->second.first && it->second.second < best->second.second))
      best = it;
  return choices[best->second.second];
}

uint64_t NcclTuningLog::ncclBytes(const std::string& collective, uint64_t rowBytes, int ranks) {
  if ((collective == "all_gather" || collective == "reduce_scatter") && ranks > 0)
    return rowBytes / static_cast<uint64_t>(ranks);
  return rowBytes;
}

std::string NcclTuningLog::functionName(const std::string& collective) {
  if (collective == "all_reduce") return "AllReduce";
  if (collective == "all_gather") return "AllGather";
  if (collective == "reduce_scatter") return "ReduceScatter";
  if (collective == "broadcast") return "Broadcast";
  if (collective == "reduce") return "Reduce";
  return "";
}

}  // namespace fabricsim::gpu
