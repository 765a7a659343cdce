#include "sim/cc/DcqcnParams.h"

#include <stdexcept>

namespace fabricsim {

DcqcnSpec dcqcnPreset(const std::string& name) {
  DcqcnSpec s;
  if (!applyDcqcnPreset(name, s)) {
    std::string known;
    for (auto n : kDcqcnPresetNames) known += (known.empty() ? "" : " | ") + std::string(n);
    throw std::invalid_argument("unknown DCQCN preset '" + name + "'; expected one of " + known);
  }
  return s;
}

}  // namespace fabricsim
