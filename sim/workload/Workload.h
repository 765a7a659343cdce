// Workload: anything that issues transfers on a Fabric and finishes at some simulated time.
//
// Models: one job sharing the fabric (a traffic pattern now; training jobs, collectives and
// traces later). The runtime starts every workload, runs the simulation until the event
// queue drains, and asks each for its completion time.
// Units: Time (ps).
#pragma once

#include <string>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual const std::string& name() const = 0;
  /// Schedules the workload's first events, with its times relative to `origin` (the moment the
  /// fabric is ready: 0, or when the routing control plane has converged). Called once.
  virtual void start(Time origin = Time::zero()) = 0;
  virtual bool finished() const = 0;
  /// When it started issuing traffic and when its last transfer was delivered.
  virtual Time startTime() const = 0;
  virtual Time finishTime() const = 0;
  /// Bytes the workload asked the fabric to move in total, and delivered so far.
  virtual Bytes bytesRequested() const = 0;
  virtual Bytes bytesDelivered() const = 0;
};

}  // namespace fabricsim
