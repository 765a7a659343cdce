#include "sim/calibrate/Measurement.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/workload/CollectiveEngine.h"

namespace fabricsim {

double busbwFactor(CollectiveOp op, uint32_t ranks) {
  return CollectiveEngine::busBandwidthFactor(op, ranks);
}

double Measurement::Point::timeUs(CollectiveOp op, uint32_t ranks) const {
  if (std::isfinite(oopTimeUs) && oopTimeUs > 0) return oopTimeUs;
  if (std::isfinite(ipTimeUs) && ipTimeUs > 0) return ipTimeUs;
  const double bw = std::isfinite(oopBusbwGBps) && oopBusbwGBps > 0 ? oopBusbwGBps : ipBusbwGBps;
  const double f = busbwFactor(op, ranks);
  if (!(std::isfinite(bw) && bw > 0) || f <= 0) return std::numeric_limits<double>::quiet_NaN();
  // busbw = factor * size / time  ->  time = factor * size / busbw; GB/s = 1e3 bytes/us.
  return f * static_cast<double>(sizeBytes) / (bw * 1e3);
}

double Measurement::Point::busbwGBps(CollectiveOp op, uint32_t ranks) const {
  if (std::isfinite(oopBusbwGBps) && oopBusbwGBps > 0) return oopBusbwGBps;
  if (std::isfinite(ipBusbwGBps) && ipBusbwGBps > 0) return ipBusbwGBps;
  const double t = timeUs(op, ranks);
  if (!(std::isfinite(t) && t > 0)) return std::numeric_limits<double>::quiet_NaN();
  return busbwFactor(op, ranks) * static_cast<double>(sizeBytes) / (t * 1e3);
}

bool Measurement::setChannelBound(const std::string& name, const std::string& value) {
  const bool isMin = name == "NCCL_MIN_CTAS" || name == "NCCL_MIN_NCHANNELS";
  const bool isMax = name == "NCCL_MAX_CTAS" || name == "NCCL_MAX_NCHANNELS";
  if (!isMin && !isMax) return true;
  if (value.empty() || value.size() > 2 || value.find_first_not_of("0123456789") != std::string::npos) return false;
  const int v = std::stoi(value);
  if (v < 1 || v > 64) return false;
  if (isMin) minChannels = std::max(minChannels, v);
  if (isMax) maxChannels = maxChannels == 0 ? v : std::min(maxChannels, v);
  return true;
}

}  // namespace fabricsim
