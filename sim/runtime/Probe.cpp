#include "sim/runtime/Probe.h"

#include <cstdlib>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

bool parseUint(const std::string& s, uint32_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) return false;
  out = static_cast<uint32_t>(std::strtoul(s.c_str(), nullptr, 10));
  return true;
}

}  // namespace

Probe::Probe(const std::string& text, Time interval, Simulator& sim, const Topology& topo,
             PacketFabric& fabric, std::function<bool()> done)
    : text_(text), interval_(interval), sim_(sim), topo_(topo), fabric_(fabric), done_(std::move(done)) {
  auto bad = [&](const std::string& why) {
    throw InputError("", 0, 0, "--probe",
                     "expected 'queue=NODE:PORT' or 'flow=SRC_GPU-DST_GPU', found '" + text + "': " + why);
  };
  if (interval <= Time::zero())
    throw InputError("", 0, 0, "--probe-interval", "expected a positive duration");
  const auto eq = text.find('=');
  if (eq == std::string::npos) bad("missing '='");
  const std::string what = text.substr(0, eq), arg = text.substr(eq + 1);
  if (what == "queue") {
    kind_ = Kind::Queue;
    const auto colon = arg.rfind(':');
    uint32_t local = 0;
    if (colon == std::string::npos || !parseUint(arg.substr(colon + 1), local)) bad("missing ':PORT'");
    const NodeId n = topo.findNode(arg.substr(0, colon));
    if (n == kInvalid) bad("no node named '" + arg.substr(0, colon) + "'");
    if (topo.isHost(n)) bad("'" + arg.substr(0, colon) + "' is a host; probe a switch port");
    if (local >= topo.degree(n))
      bad("switch '" + arg.substr(0, colon) + "' has ports 0.." + std::to_string(topo.degree(n) - 1));
    port_ = topo.port(n, local);
  } else if (what == "flow") {
    kind_ = Kind::Flow;
    const auto dash = arg.find('-');
    if (dash == std::string::npos || !parseUint(arg.substr(0, dash), srcGpu_) ||
        !parseUint(arg.substr(dash + 1), dstGpu_))
      bad("expected two GPU ranks");
    if (srcGpu_ >= topo.gpuCount() || dstGpu_ >= topo.gpuCount())
      bad("GPU ranks go up to " + std::to_string(topo.gpuCount() - 1));
  } else {
    bad("unknown probe kind '" + what + "'");
  }
}

void Probe::onEvent(uint32_t) {
  const Time now = sim_.now();
  double value = 0;
  if (kind_ == Kind::Queue) {
    value = static_cast<double>(fabric_.port(port_).queuedBytes());
  } else {
    const uint32_t qp = fabric_.findQueuePair(topo_.nicOfGpu(srcGpu_), topo_.nicOfGpu(dstGpu_), 0, 0);
    if (qp != kInvalid) {
      const BitRate line = topo_.portRate(topo_.nicPort(topo_.nicOfGpu(srcGpu_)));
      CongestionControl* cc = fabric_.congestionControl();
      value = (cc ? cc->rate(qp, now) : line).gbpsValue();
    }
  }
  t_.push_back(now.micros());
  v_.push_back(value);
  if (!done_()) sim_.schedule(now + interval_, this, 0);
}

nlohmann::json Probe::toJson() const {
  nlohmann::json j;
  j["probe"] = text_;
  j["kind"] = kind_ == Kind::Queue ? "queue" : "flow";
  j["interval_us"] = interval_.micros();
  j["t_us"] = t_;
  j[kind_ == Kind::Queue ? "queue_bytes" : "rate_gbps"] = v_;
  return j;
}

}  // namespace fabricsim
