// makeCongestionControl: picks the reaction-point implementation named by the spec.
#include <stdexcept>

#include "sim/cc/CongestionControl.h"
#include "sim/cc/Dcqcn.h"
#include "sim/cc/IbCongestionControl.h"

namespace fabricsim {

std::unique_ptr<CongestionControl> makeCongestionControl(const CongestionControlSpec& spec) {
  if (spec.algorithm == "dcqcn") return std::make_unique<Dcqcn>(spec.dcqcn);
  if (spec.algorithm == "ibcc") return std::make_unique<IbCongestionControl>(spec.ibcc);
  if (spec.algorithm == "none") return nullptr;
  throw std::invalid_argument("unknown congestion-control algorithm '" + spec.algorithm +
                              "'; expected none | dcqcn | ibcc");
}

}  // namespace fabricsim
