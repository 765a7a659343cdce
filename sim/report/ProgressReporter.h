// ProgressReporter: progress of a long run on stderr: simulated time, wall time, events, events
// per second, work done and an ETA.
//
// Models: progress as the fraction of requested bytes delivered; ETA extrapolates the wall time
// per delivered byte. On a terminal, one status line rewritten in place (at every update); when
// stderr is not a terminal (a batch job's log), a plain line with a UTC timestamp every
// `lineInterval` of wall time (the first after one interval, so short runs print nothing).
// Silent when disabled (--quiet).
// Units: simulated time printed in ms, wall time in s.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/core/Time.h"

namespace fabricsim {

class ProgressReporter {
 public:
  /// Plain lines every this long when stderr is not a terminal.
  static constexpr std::chrono::seconds kLineInterval{30};

  /// To stderr: a status line on a terminal, else timestamped lines every kLineInterval.
  explicit ProgressReporter(bool enabled);
  /// To `out`, as a terminal (`terminal`) or as timestamped lines every `lineInterval`.
  ProgressReporter(bool enabled, bool terminal, std::chrono::milliseconds lineInterval, std::FILE* out);
  bool enabled() const { return enabled_; }
  /// fraction in [0, 1] (negative when unknown).
  void update(Time simTime, uint64_t events, double fraction);
  /// Clears the status line (terminal).
  void finish();

  /// The current UTC time as 2026-11-29T04:30:12Z (progress lines of runs and sweeps).
  static std::string utcTimestamp();

 private:
  bool enabled_;
  bool terminal_;
  std::chrono::milliseconds lineInterval_;
  std::FILE* out_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point nextLine_;
};

}  // namespace fabricsim
