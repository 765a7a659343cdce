#include "sim/calibrate/NcclTestsParser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

std::vector<std::string> splitWs(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string t;
  while (in >> t) out.push_back(t);
  return out;
}

/// Longest line the regular expressions read (nccl-tests' lines are a few hundred characters).
constexpr size_t kMaxLine = 4096;

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

/// The op named by an nccl-tests binary name in `s` ("all_reduce_perf"), if any.
std::optional<std::string> perfBinary(const std::string& s) {
  static const std::regex re(
      "(^|[^A-Za-z0-9])(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|sendrecv|reduce|gather|"
      "scatter|hypercube)_perf");
  std::smatch m;
  if (std::regex_search(s, m, re)) return m[2].str();
  return std::nullopt;
}

std::optional<CollectiveOp> opFromName(const std::string& name) {
  if (auto op = parseCollectiveOp(name)) return op;
  if (name == "allreduce") return CollectiveOp::AllReduce;
  if (name == "allgather") return CollectiveOp::AllGather;
  if (name == "reducescatter") return CollectiveOp::ReduceScatter;
  return std::nullopt;
}

/// A figure as printed: a number, or 'N/A' (NaN). False when it is neither.
bool figure(const std::string& s, double& out) {
  if (s == "N/A") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0' && std::isfinite(out) && out >= 0;
}

bool wrongCount(const std::string& s, int64_t& out) {
  if (s == "N/A") {
    out = -1;
    return true;
  }
  if (!allDigits(s)) return false;
  out = std::strtoll(s.c_str(), nullptr, 10);
  return true;
}

}  // namespace

bool NcclTestsParser::looksLikeNcclTests(const std::string& text) {
  if (text.find("out-of-place") != std::string::npos) return true;
  static const std::regex rank("#\\s+Rank\\s+\\d+\\s+(Group\\s+\\d+\\s+)?Pid");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.size() <= kMaxLine && line.find("Rank") != std::string::npos && std::regex_search(line, rank))
      return true;
  return false;
}

Measurement NcclTestsParser::parseFile(const std::string& path, std::optional<CollectiveOp> op) {
  return parse(readInputFile(path), path, op);
}

Measurement NcclTestsParser::parse(const std::string& text, const std::string& file,
                                   std::optional<CollectiveOp> op) {
  static const std::regex rankRe(
      "^#\\s*Rank\\s+(\\d+)\\s+(?:Group\\s+\\d+\\s+)?Pid\\s+\\d+\\s+on\\s+(\\S+)\\s+device\\s+\\d+\\s+\\[[^"
      "\\]]*\\]\\s*(.*?)\\s*$");
  static const std::regex avgRe("^#\\s*Avg bus bandwidth\\s*:\\s*(\\S+)");
  static const std::regex algoRe("NCCL_ALGO(?:=|\\s+set by environment to\\s+)([A-Za-z_,^]+)");
  static const std::regex boundRe("(NCCL_(?:MIN|MAX)_(?:CTAS|NCHANNELS))(?:=|\\s+set by environment to\\s+)(\\S*)");
  static const std::regex protoRe("NCCL_PROTO(?:=|\\s+set by environment to\\s+)([A-Za-z0-9_,^]+)");
  Measurement m;
  m.file = file;
  m.label = file;
  std::vector<Diagnostic> diags;
  auto error = [&](int line, const std::string& what) {
    diags.push_back(Diagnostic{file, line, 0, "", what});
  };

  std::optional<std::string> textOp;
  std::map<uint32_t, std::string> rankHost;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch sm;
    // nccl-tests and NCCL write short lines; std::regex recurses over what it matches, so a
    // longer line (none of theirs) is read only as a possible data row (a 50,000-character
    // '# Rank' line overflowed the stack).
    const bool short_ = line.size() <= kMaxLine;
    if (!textOp && short_) textOp = perfBinary(line);
    if (short_ && std::regex_search(line, sm, algoRe)) {
      std::string a = sm[1].str();
      std::transform(a.begin(), a.end(), a.begin(), [](unsigned char c) { return std::tolower(c); });
      m.algorithm = a;
    }
    if (short_ && line.find("NCCL_PROTO") != std::string::npos && std::regex_search(line, sm, protoRe))
      m.protocol = sm[1].str();
    if (short_ && line.find("NCCL_M") != std::string::npos && std::regex_search(line, sm, boundRe)) {
      std::string v = sm[2].str();
      while (!v.empty() && (v.back() == '.' || v.back() == ',')) v.pop_back();
      if (!m.setChannelBound(sm[1].str(), v))
        error(lineNo, "expected " + sm[1].str() + " to be a whole number from 1 to 64, found '" + v + "'");
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      if (!short_) continue;
      const std::string body = line.substr(first);
      if (std::regex_match(body, sm, rankRe)) {
        if (sm[1].length() > 9) {
          error(lineNo,
                "expected a rank number below 10^9, found " + std::to_string(sm[1].length()) + " digits");
          continue;
        }
        const auto rank = static_cast<uint32_t>(std::stoul(sm[1].str()));
        if (rankHost.count(rank))
          error(lineNo, "rank " + sm[1].str() + " is listed twice (one run per file)");
        rankHost[rank] = sm[2].str();
        if (m.gpuModel.empty()) m.gpuModel = sm[3].str();
      } else if (std::regex_search(body, sm, avgRe)) {
        double v = 0;
        if (figure(sm[1].str(), v))
          m.avgBusbwGBps = v;
        else
          error(lineNo, "expected a number after '# Avg bus bandwidth :', found '" + sm[1].str() + "'");
      }
      continue;
    }
    const std::vector<std::string> t = splitWs(line);
    if (t.size() < 2 || !allDigits(t[0]) || !allDigits(t[1])) continue;  // not a data row
    // size count type [redop [root]] then 2 x (time algbw busbw #wrong)
    if (t.size() < 11 || t.size() > 13 || allDigits(t[2])) {
      error(lineNo,
            "expected a data row 'size count type [redop root] time algbw busbw #wrong time algbw busbw "
            "#wrong' "
            "(11 to 13 fields), found " +
                std::to_string(t.size()) + " fields");
      continue;
    }
    Measurement::Point p;
    p.line = lineNo;
    p.sizeBytes = std::strtoll(t[0].c_str(), nullptr, 10);
    p.count = std::strtoull(t[1].c_str(), nullptr, 10);
    m.dataType = t[2];
    const size_t f = t.size() - 8;
    const char* names[8] = {"out-of-place time (us)",    "out-of-place algbw (GB/s)",
                            "out-of-place busbw (GB/s)", "out-of-place #wrong",
                            "in-place time (us)",        "in-place algbw (GB/s)",
                            "in-place busbw (GB/s)",     "in-place #wrong"};
    double* dst[8] = {&p.oopTimeUs, &p.oopAlgbwGBps, &p.oopBusbwGBps, nullptr,
                      &p.ipTimeUs,  &p.ipAlgbwGBps,  &p.ipBusbwGBps,  nullptr};
    bool ok = true;
    for (size_t i = 0; i < 8; ++i) {
      const bool good =
          dst[i] ? figure(t[f + i], *dst[i]) : wrongCount(t[f + i], i == 3 ? p.oopWrong : p.ipWrong);
      if (!good) {
        error(lineNo, std::string("expected the ") + names[i] +
                          " as a non-negative number or 'N/A', found '" + t[f + i] + "'");
        ok = false;
      }
    }
    if (!ok) continue;
    if (!m.points.empty() && p.sizeBytes <= m.points.back().sizeBytes) {
      error(lineNo, "expected sizes in increasing order, found " + t[0] + " after " +
                        std::to_string(m.points.back().sizeBytes) +
                        " (a second run starts here: split the log into one file per run)");
      continue;
    }
    m.points.push_back(p);
  }

  // The operation: the caller's, else the binary named in the text, else the file name.
  if (op) {
    m.op = *op;
  } else {
    std::optional<std::string> name = textOp;
    if (!name) name = perfBinary(std::filesystem::path(file).filename().string());
    if (!name) {
      static const std::regex fileRe(
          "(^|[^A-Za-z0-9])(all_reduce|allreduce|all_gather|allgather|reduce_scatter|reducescatter|alltoall|"
          "broadcast|sendrecv)([^A-Za-z0-9]|$)");
      std::smatch sm;
      const std::string base = std::filesystem::path(file).filename().string();
      if (std::regex_search(base, sm, fileRe)) name = sm[2].str();
    }
    if (!name) {
      error(0,
            "cannot tell the operation: expected an nccl-tests binary name ('all_reduce_perf', ...) in the "
            "text "
            "or the file name; pass it with --op");
    } else if (auto o = opFromName(*name)) {
      m.op = *o;
    } else {
      error(0,
            "the operation '" + *name +
                "' is not simulated (expected all_reduce, all_gather, reduce_scatter, alltoall, broadcast or "
                "sendrecv)");
    }
  }
  if (m.points.empty())
    error(0,
          "expected nccl-tests data rows ('size count type redop root time algbw busbw #wrong ...'), found "
          "none");
  if (rankHost.empty()) {
    error(
        0,
        "expected one '#  Rank r Group g Pid p on HOST device d [bus] GPU' line per rank (nccl-tests prints "
        "them under '# Using devices'), found none");
  } else {
    m.ranks = static_cast<uint32_t>(rankHost.size());
    if (rankHost.rbegin()->first != m.ranks - 1)
      error(0, "expected ranks 0.." + std::to_string(m.ranks - 1) + ", found rank " +
                   std::to_string(rankHost.rbegin()->first));
    std::map<std::string, uint32_t> perHost;
    for (const auto& [rank, host] : rankHost) {
      if (perHost[host]++ == 0) m.hostNames.push_back(host);
    }
    m.hosts = static_cast<uint32_t>(perHost.size());
    m.gpusPerHost = m.ranks / m.hosts;
    for (const auto& [host, n] : perHost)
      if (n != m.gpusPerHost) {
        error(0, "expected the same number of ranks on every host, found " + std::to_string(n) + " on " +
                     host + " and " + std::to_string(m.ranks) + " ranks on " + std::to_string(m.hosts) +
                     " hosts");
        break;
      }
  }
  if (!diags.empty()) throw InputError(std::move(diags));
  return m;
}

}  // namespace fabricsim
