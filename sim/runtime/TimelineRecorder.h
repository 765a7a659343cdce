// TimelineRecorder: turns the spans of the jobs' ranks into a Chrome/Perfetto timeline.
//
// Models: one process per job, one thread per (rank, stream) for the first `maxRanks` ranks of
// each job (a 100K-rank timeline would not open in a browser); spans named by the op's label
// (compute kind, collective, send/recv) with the op, size and group in their args.
// Leaves out: ranks beyond maxRanks, the fabric's individual transfers.
// Units: Time (ps) in, microseconds in the file.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "sim/report/TimelineWriter.h"
#include "sim/workload/ExecutionObserver.h"

namespace fabricsim {

class TimelineRecorder final : public ExecutionObserver {
 public:
  TimelineRecorder(TimelineWriter& writer, uint32_t pid, std::string jobName, uint32_t maxRanks,
                   const std::vector<uint32_t>& gpus);
  void onSpan(const JobTrace& trace, uint32_t rank, uint32_t program, uint32_t op, int iteration, Time start,
              Time end) override;

 private:
  TimelineWriter& writer_;
  uint32_t pid_;
  uint32_t maxRanks_;
  std::vector<uint32_t> gpus_;
  std::set<uint32_t> namedThreads_;
};

}  // namespace fabricsim
