// makeCongestionControl: picks the reaction-point implementation named by the spec (for DCQCN,
// by its variant: paper -> Dcqcn, mlx -> DcqcnMlx).
#include <stdexcept>

#include "sim/cc/CongestionControl.h"
#include "sim/cc/Dcqcn.h"
#include "sim/cc/DcqcnMlx.h"
#include "sim/cc/IbCongestionControl.h"

namespace fabricsim {

std::unique_ptr<CongestionControl> makeCongestionControl(const CongestionControlSpec& spec) {
  if (spec.algorithm == "dcqcn") {
    if (spec.dcqcn.variant == "mlx") return std::make_unique<DcqcnMlx>(spec.dcqcn);
    if (spec.dcqcn.variant == "paper") return std::make_unique<Dcqcn>(spec.dcqcn);
    throw std::invalid_argument("unknown DCQCN variant '" + spec.dcqcn.variant + "'; expected paper | mlx");
  }
  if (spec.algorithm == "ibcc") return std::make_unique<IbCongestionControl>(spec.ibcc);
  if (spec.algorithm == "none") return nullptr;
  throw std::invalid_argument("unknown congestion-control algorithm '" + spec.algorithm +
                              "'; expected none | dcqcn | ibcc");
}

}  // namespace fabricsim
