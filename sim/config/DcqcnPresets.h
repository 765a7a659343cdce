// DcqcnPresets: the named DCQCN parameter sets a topology file can start from
// (`congestion_control.preset`), each value with its public source.
//
// Models: two complete DcqcnSpec tables: `dcqcn-paper` (Zhu et al., SIGCOMM 2015, as cited by
// secondary texts) and `connectx` (NVIDIA ConnectX-4 and later firmware defaults). The sources
// are recorded next to each value in DcqcnPresets.cpp and, with their caveats, in
// shared/calibration/dcqcn_parameters_paper_vendor_simulators.yaml.
// The tables live in config (not in sim/cc) because the loader needs them and dependencies point
// down (cc depends on config); sim/cc/DcqcnParams.h re-exports them for simulator code.
// Leaves out: the algorithm itself (sim/cc/Dcqcn.h).
// Units: as DcqcnSpec (Time in ps, BitRate in bit/s, Bytes).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "sim/config/TopologySpec.h"

namespace fabricsim {

/// Every preset name, in the order they are listed in messages.
inline const std::initializer_list<std::string_view> kDcqcnPresetNames = {"connectx", "dcqcn-paper"};

/// Overwrites every field of `out` with preset `name` (and sets out.preset = name).
/// Returns false, leaving `out` unchanged, when `name` is not a preset.
bool applyDcqcnPreset(const std::string& name, DcqcnSpec& out);

}  // namespace fabricsim
