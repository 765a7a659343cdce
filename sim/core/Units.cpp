#include "sim/core/Units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fabricsim {
namespace {

struct NumberAndSuffix {
  bool ok = false;
  long double number = 0;
  std::string suffix;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

NumberAndSuffix split(std::string_view text) {
  NumberAndSuffix out;
  text = trim(text);
  size_t i = 0;
  bool digits = false;
  bool dot = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && i + 1 < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' ||
                text[i + 1] == '+')) {
      // exponent: consume sign and digits
      ++i;
      if (text[i] == '-' || text[i] == '+') ++i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      break;
    } else {
      break;
    }
    ++i;
  }
  if (!digits) return out;
  const std::string num(text.substr(0, i));
  char* end = nullptr;
  out.number = std::strtold(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return out;
  out.suffix = std::string(trim(text.substr(i)));
  out.ok = std::isfinite(static_cast<double>(out.number));
  return out;
}

template <typename T>
Parsed<T> fail(std::string_view text, const char* expected) {
  Parsed<T> p;
  p.error = "expected " + std::string(expected) + ", found '" + std::string(text) + "'";
  return p;
}

}  // namespace

Parsed<Time> parseTime(std::string_view text) {
  static constexpr const char* kExpected = "a duration with a unit (ps, ns, us, ms, s), e.g. '1.5us'";
  const auto ns = split(text);
  if (!ns.ok) return fail<Time>(text, kExpected);
  long double scale = 0;
  if (ns.suffix == "ps") scale = 1;
  else if (ns.suffix == "ns") scale = 1e3;
  else if (ns.suffix == "us") scale = 1e6;
  else if (ns.suffix == "ms") scale = 1e9;
  else if (ns.suffix == "s") scale = 1e12;
  else return fail<Time>(text, kExpected);
  if (ns.number < 0) return fail<Time>(text, "a non-negative duration");
  const long double ps = ns.number * scale;
  if (ps > 9.2e18L) return fail<Time>(text, "a duration below 106 days");
  Parsed<Time> p;
  p.value = Time::ps(static_cast<int64_t>(std::llround(static_cast<double>(ps))));
  return p;
}

Parsed<Bytes> parseBytes(std::string_view text, bool allowBare) {
  static constexpr const char* kExpected = "a size with a unit (B, KB, MB, GB, KiB, MiB, GiB, TiB), e.g. '32MiB'";
  const auto ns = split(text);
  if (!ns.ok) return fail<Bytes>(text, kExpected);
  long double scale = 0;
  const std::string& s = ns.suffix;
  if (s == "B") scale = 1;
  else if (s == "KB" || s == "kB") scale = 1e3;
  else if (s == "MB") scale = 1e6;
  else if (s == "GB") scale = 1e9;
  else if (s == "TB") scale = 1e12;
  else if (s == "KiB") scale = 1024.0L;
  else if (s == "MiB") scale = 1024.0L * 1024;
  else if (s == "GiB") scale = 1024.0L * 1024 * 1024;
  else if (s == "TiB") scale = 1024.0L * 1024 * 1024 * 1024;
  else if (s.empty() && allowBare) scale = 1;
  else return fail<Bytes>(text, kExpected);
  if (ns.number < 0) return fail<Bytes>(text, "a non-negative size");
  const long double v = ns.number * scale;
  if (v > 9.2e18L) return fail<Bytes>(text, "a size below 2^63 bytes");
  if (std::fabs(static_cast<double>(v - std::floor(v))) > 1e-9L)
    return fail<Bytes>(text, "a whole number of bytes");
  Parsed<Bytes> p;
  p.value = static_cast<Bytes>(std::llround(static_cast<double>(v)));
  return p;
}

Parsed<BitRate> parseBitRate(std::string_view text) {
  static constexpr const char* kExpected =
      "a rate with a unit (bps, Kbps, Mbps, Gbps, Tbps, or GBps/MBps for bytes per second), e.g. '400Gbps'";
  const auto ns = split(text);
  if (!ns.ok) return fail<BitRate>(text, kExpected);
  long double scale = 0;
  const std::string& s = ns.suffix;
  if (s == "bps") scale = 1;
  else if (s == "Kbps" || s == "kbps") scale = 1e3;
  else if (s == "Mbps") scale = 1e6;
  else if (s == "Gbps") scale = 1e9;
  else if (s == "Tbps") scale = 1e12;
  else if (s == "Bps") scale = 8;
  else if (s == "KBps" || s == "kBps") scale = 8e3;
  else if (s == "MBps") scale = 8e6;
  else if (s == "GBps") scale = 8e9;
  else if (s == "TBps") scale = 8e12;
  else return fail<BitRate>(text, kExpected);
  if (ns.number <= 0) return fail<BitRate>(text, "a positive rate");
  const long double v = ns.number * scale;
  if (v < 1 || v > 9.2e18L) return fail<BitRate>(text, "a rate between 1 bps and 9.2 Ebps");
  Parsed<BitRate> p;
  p.value = BitRate::bps(static_cast<int64_t>(std::llround(static_cast<double>(v))));
  return p;
}

std::string formatTime(Time t) {
  char buf[64];
  const double ps = static_cast<double>(t.picos());
  const double a = std::fabs(ps);
  if (a >= 1e12) std::snprintf(buf, sizeof buf, "%.3f s", ps * 1e-12);
  else if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.3f ms", ps * 1e-9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.3f us", ps * 1e-6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.3f ns", ps * 1e-3);
  else std::snprintf(buf, sizeof buf, "%.0f ps", ps);
  return buf;
}

std::string formatBytes(Bytes b) {
  char buf[64];
  const double v = static_cast<double>(b);
  if (v >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", v / (1024.0 * 1024 * 1024));
  else if (v >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.2f MiB", v / (1024.0 * 1024));
  else if (v >= 1024.0) std::snprintf(buf, sizeof buf, "%.2f KiB", v / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

std::string formatRate(BitRate r) {
  char buf[64];
  const double v = static_cast<double>(r.bitsPerSecond());
  if (v >= 1e12) std::snprintf(buf, sizeof buf, "%g Tb/s", v * 1e-12);
  else if (v >= 1e9) std::snprintf(buf, sizeof buf, "%g Gb/s", v * 1e-9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%g Mb/s", v * 1e-6);
  else std::snprintf(buf, sizeof buf, "%g b/s", v);
  return buf;
}

}  // namespace fabricsim
