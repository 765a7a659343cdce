// Units: byte counts and bit rates, exact serialization time, and parsing of unit strings.
//
// Models: sizes in bytes (int64) and link rates in bits per second (int64), and the time a
// link needs to put a number of bytes on the wire, computed exactly in 128-bit integers and
// rounded up to the next picosecond (never a truncated ps-per-byte).
// Parsing accepts "400Gbps", "50GBps" (bytes per second, converted to bits), "1.5us",
// "32MiB", "60KB"; decimal prefixes are powers of 1000, binary prefixes (KiB, MiB, GiB, TiB)
// powers of 1024. Bare numbers are refused where a unit is required.
// Leaves out: rates below 1 bit/s and sizes above 2^63 bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/Time.h"

namespace fabricsim {

using Bytes = int64_t;

/// A link rate in bits per second.
class BitRate {
 public:
  constexpr BitRate() = default;
  static constexpr BitRate bps(int64_t v) { return BitRate(v); }
  static constexpr BitRate gbps(int64_t v) { return BitRate(v * 1'000'000'000); }
  constexpr int64_t bitsPerSecond() const { return bps_; }
  constexpr double gbpsValue() const { return static_cast<double>(bps_) * 1e-9; }
  constexpr auto operator<=>(const BitRate&) const = default;

 private:
  constexpr explicit BitRate(int64_t v) : bps_(v) {}
  int64_t bps_ = 0;
};

/// Exact time to serialize `bytes` at `rate`, rounded up to the next picosecond.
/// Requires rate > 0 and bytes >= 0.
inline Time serializationTime(Bytes bytes, BitRate rate) {
  const __int128 num = static_cast<__int128>(bytes) * 8 * 1'000'000'000'000LL;
  const __int128 den = rate.bitsPerSecond();
  return Time::ps(static_cast<int64_t>((num + den - 1) / den));
}

/// Bytes a link at `rate` carries in `t` (rounded down).
inline Bytes bytesInTime(Time t, BitRate rate) {
  const __int128 num = static_cast<__int128>(t.picos()) * rate.bitsPerSecond();
  return static_cast<Bytes>(num / (static_cast<__int128>(8) * 1'000'000'000'000LL));
}

/// Parse results: a value, or an error text saying what was expected.
template <typename T>
struct Parsed {
  std::optional<T> value;
  std::string error;  ///< empty when value is set
};

/// "1.5us", "100ns", "2ms", "1s", "250ps". A bare number is an error.
Parsed<Time> parseTime(std::string_view text);
/// "32MiB", "60KB", "4096B". A bare integer is accepted only if allowBare (e.g. mtu: 4096).
Parsed<Bytes> parseBytes(std::string_view text, bool allowBare = false);
/// "400Gbps", "100Mbps", "50GBps" (bytes/s), "1Tbps". A bare number is an error.
Parsed<BitRate> parseBitRate(std::string_view text);

/// Human formatting for tables: "1.50 us", "32.0 MiB", "400 Gb/s".
std::string formatTime(Time t);
std::string formatBytes(Bytes b);
std::string formatRate(BitRate r);

}  // namespace fabricsim
