#include "sim/calibrate/LeastSquares.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

using SolveFn = void (*)(const LeastSquares::Residuals&, std::vector<double>&, const std::vector<double>&,
                         const std::vector<double>&, size_t, const LeastSquares::Options&,
                         LeastSquares::Result*);

/// The Ceres module's entry point (sim/calibrate/plugin), loaded once: from beside the running
/// program, else from where the build put it.
SolveFn ceresSolve() {
  static const SolveFn fn = [] {
    std::vector<std::string> paths;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) paths.push_back((self.parent_path() / "libfabricsim_ceres.so").string());
    if (paths.empty() || paths[0] != FABRICSIM_CERES_PLUGIN) paths.emplace_back(FABRICSIM_CERES_PLUGIN);
    std::string why;
    for (const std::string& p : paths) {
      if (!std::filesystem::exists(p, ec)) continue;
      void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) {
        why += std::string("; ") + dlerror();
        continue;
      }
      if (void* f = dlsym(h, "fabricsim_ceres_solve")) return reinterpret_cast<SolveFn>(f);
      why += "; " + p + " has no fabricsim_ceres_solve";
    }
    std::string tried;
    for (const std::string& p : paths) tried += (tried.empty() ? "" : ", ") + p;
    throw std::runtime_error(
        "the Ceres solver module that `fabricsim calibrate` needs could not be loaded (tried " + tried + why +
        "): build fabricsim's target fabricsim_ceres");
  }();
  return fn;
}

}  // namespace

LeastSquares::Result LeastSquares::solve(const Residuals& r, std::vector<double> x,
                                         const std::vector<double>& lower, const std::vector<double>& upper,
                                         const Options& o) {
  const size_t n = x.size();
  SIM_CHECK(n > 0 && lower.size() == n && upper.size() == n, "LeastSquares: one bound per unknown");
  for (size_t j = 0; j < n; ++j) x[j] = std::clamp(x[j], lower[j], upper[j]);
  const size_t m = r(x).size();
  SIM_CHECK(m >= n, "LeastSquares: fewer residuals than unknowns");
  Result res;
  ceresSolve()(r, x, lower, upper, m, o, &res);
  return res;
}

}  // namespace fabricsim
