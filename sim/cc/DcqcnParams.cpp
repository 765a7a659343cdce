#include "sim/cc/DcqcnParams.h"

#include <stdexcept>

#include "sim/core/Error.h"

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

void checkDcqcnSpec(const DcqcnSpec& spec) {
  SIM_CHECK(spec.g > 0 && spec.g <= 1, "DCQCN g must be in (0, 1]");
  SIM_CHECK(spec.initialAlpha >= 0 && spec.initialAlpha <= 1, "DCQCN initial alpha must be in [0, 1]");
  SIM_CHECK(spec.alphaTimer > Time::zero(), "DCQCN alpha timer must be positive");
  SIM_CHECK(spec.rateIncreaseTimer > Time::zero(), "DCQCN rate-increase timer must be positive");
  SIM_CHECK(spec.byteCounter >= 0, "DCQCN byte counter must be >= 0 (0: off)");
  SIM_CHECK(spec.fastRecoveryStages >= 0, "DCQCN fast-recovery stages must be >= 0");
  SIM_CHECK(spec.minRate.bitsPerSecond() > 0, "DCQCN min rate must be positive");
  SIM_CHECK(spec.maxDecreaseFraction > 0 && spec.maxDecreaseFraction <= 1,
            "DCQCN max decrease fraction must be in (0, 1]");
}

}  // namespace fabricsim
