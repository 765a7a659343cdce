// ResultsFile: writing result documents so a reader never sees a half-written file, and the
// build identity stamped into them.
//
// Models: atomic replacement (write to a temporary file in the same directory, then rename),
// so an interrupted run never leaves a truncated results JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim {

class ResultsFile {
 public:
  /// Writes `doc` pretty-printed to `path` atomically. Throws std::runtime_error on I/O failure.
  static void writeJson(const std::string& path, const nlohmann::json& doc);
  /// Writes `bytes` to `path` atomically (no partial file is left behind on failure). Throws
  /// std::runtime_error on I/O failure.
  static void writeBytes(const std::string& path, const std::string& bytes);
  static std::string version();
  static std::string gitDescribe();
  /// Peak resident set size of this process so far (getrusage's ru_maxrss), in bytes.
  static long long peakRssBytes();
};

}  // namespace fabricsim
