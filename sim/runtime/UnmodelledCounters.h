// UnmodelledCounters: the results' honesty about counters (DESIGN.md section 8, `unmodelled`).
//
// Models: which keys of the results document hold counters of a quantity the backend does not
// model (NetworkCounters::modelled, declared by each backend), as dotted key paths
// ("network.ecn_marks"; "network.per_tier.*.queue_bytes" for that key of every tier). Those keys
// are written as null, never 0 (0 would claim that nothing of the kind happened), and listed
// under the document's top-level `unmodelled` array, in the order of keysFor.
// Leaves out: what each backend models (the backends say so), and quantities that are not
// counters (the backend's approximations, listed in prose under backend_model.not_modelled).
// Units: none (key paths).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fabric/NetworkCounters.h"

namespace fabricsim {

class UnmodelledCounters {
 public:
  /// The dotted result keys that `modelled` leaves without a value; "*" stands for every key of
  /// an object (the tiers of network.per_tier). Empty when everything is modelled.
  static std::vector<std::string> keysFor(const CounterCoverage& modelled);
  /// Sets each of keysFor(modelled) in `doc` to null and writes the list as doc["unmodelled"].
  /// Every key must exist in `doc` (checked: a missing one is a bug in the results writer).
  static void apply(const CounterCoverage& modelled, nlohmann::json& doc);
};

}  // namespace fabricsim
