// FlowRecord: what the results keep of one transfer: when it started and was delivered (or that
// it failed), its size, and the time it would have taken alone on an idle fabric (for slowdown).
// Units: Time (ps), Bytes.
#pragma once

#include <cstdint>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

struct FlowRecord {
  uint32_t srcGpu = 0;
  uint32_t dstGpu = 0;
  Bytes bytes = 0;
  Time start;
  Time finish = Time::max();  ///< Time::max() until delivered
  Time ideal;                 ///< unloaded completion time on its path (same packetisation)
  uint32_t id = 0;            ///< its number in request order (0, 1, ...; set by TransferTable)
  bool intraHost = false;     ///< carried by NVLink, not the network
  bool failed = false;        ///< its connection failed (TransferFailure): it will never be delivered
  bool done() const { return finish != Time::max(); }
  Time fct() const { return finish - start; }
};

}  // namespace fabricsim
