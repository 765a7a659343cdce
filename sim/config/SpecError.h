// specError: a diagnostic for a topology setting that is valid on its own but cannot be honoured
// once the fabric is built (e.g. headroom and reserves that do not fit in a switch's buffer),
// pointing at the key's line in the topology file like the loader's own errors.
//
// Models: re-reads the topology file, applies the same --set overrides, and walks the dotted key
// path to the deepest node that exists; a value given by --set is named as such.
// Leaves out: sequences inside the key path (only map keys are walked).
// Units: none.
#pragma once

#include <string>

#include "sim/config/TopologySpec.h"
#include "sim/core/Error.h"

namespace fabricsim {

/// An InputError at `keyPath` of the topology `spec` was read from, saying `message`.
InputError specError(const TopologySpec& spec, const std::string& keyPath, const std::string& message);

}  // namespace fabricsim
