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

#include <string>

#include "sim/config/DcqcnPresets.h"
#include "sim/config/TopologySpec.h"

namespace fabricsim {

/// The preset `name` ("dcqcn-paper" or "connectx"). Throws std::invalid_argument for other names.
DcqcnSpec dcqcnPreset(const std::string& name);

}  // namespace fabricsim
