// ProgressReporter: one status line on stderr during long runs: simulated time, events,
// events per second, work done and an ETA.
//
// Models: progress as the fraction of requested bytes delivered; ETA extrapolates the wall time
// per delivered byte. Silent when disabled (--quiet) or when stderr is not a terminal.
#pragma once

#include <chrono>
#include <cstdint>

#include "sim/core/Time.h"

namespace fabricsim {

class ProgressReporter {
 public:
  explicit ProgressReporter(bool enabled);
  bool enabled() const { return enabled_; }
  /// fraction in [0, 1] (negative when unknown).
  void update(Time simTime, uint64_t events, double fraction);
  /// Clears the line.
  void finish();

 private:
  bool enabled_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace fabricsim
