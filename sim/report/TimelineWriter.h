// TimelineWriter: a Chrome / Perfetto trace-event JSON file (the "JSON Array/Object Format"
// that ui.perfetto.dev and chrome://tracing open).
//
// Models: complete events ("ph": "X") with a name, a category, a start and a duration, on a
// track (pid, tid); process and thread names as metadata events so each job is a process and
// each (rank, stream) a named thread.
// Leaves out: flow arrows, counters, nested slices (the spans of one track never overlap in our
// use, since a stream runs one op at a time).
// Units: microseconds in the file ("ts", "dur"), as the format requires; callers pass Time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/Time.h"

namespace fabricsim {

class TimelineWriter {
 public:
  void processName(uint32_t pid, const std::string& name);
  void threadName(uint32_t pid, uint32_t tid, const std::string& name);
  /// One span; `args` is a ready JSON object text or empty.
  void span(uint32_t pid, uint32_t tid, const std::string& name, const std::string& category, Time start, Time end,
            const std::string& args = "");
  size_t spans() const { return spans_; }
  /// Writes the file atomically (temporary file, then rename). Throws SimError on I/O failure.
  void write(const std::string& path) const;

 private:
  std::vector<std::string> events_;  // serialized events
  size_t spans_ = 0;
};

}  // namespace fabricsim
