// SwitchParams: the settings every switch of a run shares, resolved once from the topology
// file (thresholds in bytes, probabilities, technology).
// Units: bytes, Time (ps).
#pragma once

#include <cstdint>

#include "sim/config/TopologySpec.h"
#include "sim/core/Time.h"
#include "sim/routing/IbLft.h"

namespace fabricsim {

/// IbLft: InfiniBand destination-LID tables (set with the subnet manager), optionally adaptive.
enum class PathSelection : uint8_t { Ecmp, Flowlet, Adaptive, Spray, IbLft };

struct SwitchParams {
  PathSelection selection = PathSelection::Ecmp;
  Time flowletGap = Time::us(5);
  uint64_t adaptiveBias = 0;
  uint64_t adaptiveQuantum = 1;  ///< bytes per load grade (resolved: never 0)
  bool sprayRoundRobin = false;
  uint64_t buffer = 0;
  uint64_t reserve = 0;  ///< per ingress port minimum guarantee (resolved: never -1)
  double dtAlpha = 1.0;
  EcnSpec ecn;
  PfcSpec pfc;
  bool infiniband = false;
  uint32_t maxFrame = 0;     ///< wire bytes of a full-MTU data packet
  uint32_t pauseFrame = 84;  ///< wire bytes of a PFC frame
  /// InfiniBand subnet-manager routing: the LFTs (packets carry their DLID in `tuple`), and
  /// whether switches route adaptively among the SM's groups. nullptr: Ethernet forwarding.
  const IbLft* ibLft = nullptr;
  bool ibAdaptive = false;
};

}  // namespace fabricsim
