// DcqcnParams: the named DCQCN parameter sets (`dcqcn-paper`, `connectx`) for simulator code.
//
// Models: a lookup of a complete DcqcnSpec by preset name. The tables, with the public source of
// every value, are in sim/config/DcqcnPresets.cpp: the topology loader needs them too and the
// config module may not depend on sim/cc, so this header re-exports them rather than keeping a
// second copy.
//   dcqcn-paper: Zhu et al., SIGCOMM 2015, variant paper (g 1/256, 55 us timers, B 10 MB, F 5,
//                R_AI 40 Mb/s).
//   connectx:    NVIDIA ConnectX firmware defaults, variant mlx (g 5/1024, alpha grid 1 us,
//                300 us increase timer, byte counter off, F 1, R_AI 5 Mb/s, cuts on a 4 us grid).
// Leaves out: the algorithms (Dcqcn.h, DcqcnMlx.h).
// Units: as DcqcnSpec (Time in ps, BitRate in bit/s, Bytes).
#pragma once

#include <algorithm>
#include <string>

#include "sim/config/DcqcnPresets.h"
#include "sim/config/TopologySpec.h"

namespace fabricsim {

/// The preset `name` ("dcqcn-paper" or "connectx"). Throws std::invalid_argument for other names.
DcqcnSpec dcqcnPreset(const std::string& name);

/// The checks both reaction points share (gains and fractions in range, positive periods and
/// floor, byte counter >= 0); a bad spec is a bug (the loader validates user input): SimError.
void checkDcqcnSpec(const DcqcnSpec& spec);

/// One rate cut, as both variants make it: Rc (1 - alpha/2), cut by at most maxDecreaseFraction,
/// never below the min rate (or the line rate, if that is lower). Rates in bit/s.
inline double dcqcnCutRate(const DcqcnSpec& spec, double rc, double alpha, double line) {
  const double factor = std::max(1.0 - alpha / 2, 1.0 - spec.maxDecreaseFraction);
  const double floor = std::min(static_cast<double>(spec.minRate.bitsPerSecond()), line);
  return std::max(rc * factor, floor);
}

}  // namespace fabricsim
