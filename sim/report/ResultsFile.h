// ResultsFile: writing result documents so a reader never sees a half-written file, checking an
// output path before the work that fills it, and the build identity stamped into them.
//
// Models: atomic replacement of a regular file (write a temporary file in the same folder, then
// rename it over the target), so an interrupted or failed write never leaves a truncated
// document, and a failed one leaves no temporary file behind. A target that exists and is not a
// regular file (a device such as /dev/null, a FIFO) is a stream: it is written in place, never
// replaced (a rename would swap the device node for a file); its write errors are reported. A
// folder as target is refused. Leaves out: durability across a power loss (no fsync).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim {

class ResultsFile {
 public:
  /// Writes `doc` pretty-printed to `path` atomically. Throws std::runtime_error on I/O failure.
  static void writeJson(const std::string& path, const nlohmann::json& doc);
  /// Writes `bytes` to `path` atomically. Throws std::runtime_error on I/O failure.
  static void writeBytes(const std::string& path, const std::string& bytes);
  /// Writes what `fill` streams to `path` atomically (streamed: no copy of a large document).
  /// Throws std::runtime_error on I/O failure, InputError where `path` is a folder.
  static void writeWith(const std::string& path, const std::function<void(std::ostream&)>& fill);
  /// Checks, before any work, that `path` can take an output that `option` (e.g. "--out") names:
  /// not a folder, in a folder that exists and this process may write in (a device or FIFO that
  /// exists is fine: it is written in place). Throws InputError (file: the path, key: the option)
  /// otherwise. An empty path (no such output) passes.
  static void checkOutputPath(const std::string& path, const std::string& option);
  static std::string version();
  static std::string gitDescribe();
  /// Peak resident set size of this process so far (getrusage's ru_maxrss), in bytes.
  static long long peakRssBytes();
};

}  // namespace fabricsim
