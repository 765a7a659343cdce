// SweepPointKey: what a sweep point's finished results were computed from, as a short digest, so
// that `fabricsim sweep --resume` after an edit reruns exactly the points whose configuration
// changed.
//
// Models: the point's fully resolved configuration as `fabricsim run` would load it (the topology
// file with its --set, --routing and --cc overrides applied; each workload file, or the
// topology's default one, with its --workload-set overrides; a trace workload's trace file and a
// Chakra job's per-rank files by their contents), its backend and seed, and the binary's version and git
// commit, written as canonical JSON and digested with 64-bit FNV-1a (16 hex digits). A point whose files do
// not load keys on its command line and the error (its run fails the same way; fixing the file changes the
// key). Leaves out: anything a run reads that its resolved specification does not hold. Units: none.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/config/SweepSpec.h"

namespace fabricsim {

struct SweepPointKey {
  /// The key of `point` (16 lowercase hex digits).
  static std::string of(const SweepPoint& point);
  /// 64-bit FNV-1a of `bytes`, continuing from `h`.
  static uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull);
};

}  // namespace fabricsim
