// ComputeOnlyRun: a trace run with zero-time communication (compute, dependencies and pipeline
// bubble only), rank r on GPU r, for tests of what a job's programs imply.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/core/Simulator.h"
#include "sim/workload/JobExecutor.h"

namespace fabricsim::testsupport {

/// The trace's JCT with communication free; `iterationEnds` (optional) gets when each iteration ended.
inline Time runComputeOnly(const std::shared_ptr<const JobTrace>& t,
                           std::vector<Time>* iterationEnds = nullptr) {
  Simulator sim(1);
  std::vector<uint32_t> gpus(t->ranks);
  for (uint32_t r = 0; r < t->ranks; ++r) gpus[r] = r;
  JobExecutor exec(sim, nullptr, t, gpus, 8, CollectiveTuning{}, "job", Time::zero(), false);
  exec.start();
  sim.run();
  EXPECT_TRUE(exec.finished());
  if (iterationEnds) *iterationEnds = exec.iterationEnds();
  return exec.finishTime();
}

}  // namespace fabricsim::testsupport
