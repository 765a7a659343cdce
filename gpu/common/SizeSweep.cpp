#include "gpu/common/SizeSweep.h"

#include <charconv>
#include <cmath>
#include <string>

namespace fabricsim::gpu {

std::optional<size_t> parseSize(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0 || !std::isfinite(value)) return std::nullopt;
  std::string suffix(end, text.data() + text.size());
  while (!suffix.empty() && suffix.front() == ' ') suffix.erase(0, 1);
  for (auto& ch : suffix) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  double unit = 1;
  if (suffix.empty() || suffix == "B") {
    unit = 1;
  } else {
    const char prefix = suffix[0];
    const std::string rest = suffix.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "IB")) return std::nullopt;
    switch (prefix) {
      case 'K':
        unit = 1024.0;
        break;
      case 'M':
        unit = 1024.0 * 1024;
        break;
      case 'G':
        unit = 1024.0 * 1024 * 1024;
        break;
      case 'T':
        unit = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        return std::nullopt;
    }
  }
  const double bytes = value * unit;
  if (bytes > 9.0e18) return std::nullopt;
  return static_cast<size_t>(bytes);
}

std::vector<size_t> sweepSizes(size_t minBytes, size_t maxBytes, size_t factor, size_t stepBytes) {
  std::vector<size_t> out;
  if (minBytes > maxBytes || (factor <= 1 && stepBytes == 0)) return out;
  for (size_t size = minBytes; size <= maxBytes;) {
    out.push_back(size);
    if (factor > 1) {
      if (size == 0 || size > maxBytes / factor) break;  // 0 * factor stays 0; the next one is past max
      size *= factor;
    } else {
      if (stepBytes > maxBytes - size) break;  // the next one is past max
      size += stepBytes;
    }
  }
  return out;
}

}  // namespace fabricsim::gpu
