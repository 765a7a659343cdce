#include "sim/report/ProgressReporter.h"

#include <unistd.h>

#include <cstdio>

namespace fabricsim {

ProgressReporter::ProgressReporter(bool enabled)
    : enabled_(enabled && isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()) {}

void ProgressReporter::update(Time simTime, uint64_t events, double fraction) {
  if (!enabled_) return;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = wall > 0 ? static_cast<double>(events) / wall : 0;
  char eta[32] = "?";
  if (fraction > 0.001 && fraction < 1) std::snprintf(eta, sizeof eta, "%.0f s", wall * (1 - fraction) / fraction);
  std::fprintf(stderr, "\r  sim %.3f ms | %.1f M events | %.2f M ev/s | %5.1f%% | ETA %s   ", simTime.seconds() * 1e3,
               static_cast<double>(events) * 1e-6, rate * 1e-6, fraction >= 0 ? fraction * 100 : 0.0, eta);
  std::fflush(stderr);
  printed_ = true;
}

void ProgressReporter::finish() {
  if (enabled_ && printed_) std::fprintf(stderr, "\r%100s\r", "");
}

}  // namespace fabricsim
