// Time: simulated time as a strong type over signed 64-bit picoseconds.
//
// Models: an instant or a duration on the simulated clock, exact to the picosecond.
// Leaves out: wall-clock time (see report/ for that) and sub-picosecond precision.
// Units: picoseconds internally; 2^63 ps is about 106 days of simulated time.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace fabricsim {

class Time {
 public:
  constexpr Time() = default;
  /// Builds a Time from a count of picoseconds.
  static constexpr Time ps(int64_t v) { return Time(v); }
  static constexpr Time ns(int64_t v) { return Time(v * 1'000); }
  static constexpr Time us(int64_t v) { return Time(v * 1'000'000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1'000'000'000); }
  static constexpr Time s(int64_t v) { return Time(v * 1'000'000'000'000); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  /// Picoseconds since the start of the simulation (or of the duration).
  constexpr int64_t picos() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double micros() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double nanos() const { return static_cast<double>(ps_) * 1e-3; }

  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time(ps_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(ps_ / k); }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(int64_t v) : ps_(v) {}
  int64_t ps_ = 0;
};

namespace literals {
constexpr Time operator""_ps(unsigned long long v) { return Time::ps(static_cast<int64_t>(v)); }
constexpr Time operator""_ns(unsigned long long v) { return Time::ns(static_cast<int64_t>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::us(static_cast<int64_t>(v)); }
constexpr Time operator""_ms(unsigned long long v) { return Time::ms(static_cast<int64_t>(v)); }
constexpr Time operator""_s(unsigned long long v) { return Time::s(static_cast<int64_t>(v)); }
}  // namespace literals

}  // namespace fabricsim
