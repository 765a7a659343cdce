#include "sim/report/ProgressReporter.h"

#include <unistd.h>

#include <ctime>

namespace fabricsim {

ProgressReporter::ProgressReporter(bool enabled)
    : ProgressReporter(enabled, isatty(STDERR_FILENO) != 0, kLineInterval, stderr) {}

ProgressReporter::ProgressReporter(bool enabled, bool terminal, std::chrono::milliseconds lineInterval,
                                   std::FILE* out)
    : enabled_(enabled),
      terminal_(terminal),
      lineInterval_(lineInterval),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      nextLine_(start_ + lineInterval) {}

std::string ProgressReporter::utcTimestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

void ProgressReporter::update(Time simTime, uint64_t events, double fraction) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!terminal_ && lineInterval_.count() > 0) {  // an interval of 0: a line at every update
    if (now < nextLine_) return;
    while (nextLine_ <= now) nextLine_ += lineInterval_;
  }
  const double wall = std::chrono::duration<double>(now - start_).count();
  const double rate = wall > 0 ? static_cast<double>(events) / wall : 0;
  char eta[32] = "?";
  if (fraction > 0.001 && fraction < 1) std::snprintf(eta, sizeof eta, "%.0f s", wall * (1 - fraction) / fraction);
  char text[200];
  std::snprintf(text, sizeof text,
                "sim %.3f ms | wall %.0f s | %.1f M events | %.2f M ev/s | %5.1f%% | ETA %s",
                simTime.seconds() * 1e3, wall, static_cast<double>(events) * 1e-6, rate * 1e-6,
                fraction >= 0 ? fraction * 100 : 0.0, eta);
  if (terminal_)
    std::fprintf(out_, "\r  %s   ", text);
  else
    std::fprintf(out_, "%s fabricsim: %s\n", utcTimestamp().c_str(), text);
  std::fflush(out_);
  printed_ = true;
}

void ProgressReporter::finish() {
  if (enabled_ && terminal_ && printed_) std::fprintf(out_, "\r%100s\r", "");
}

}  // namespace fabricsim
