// RunOptions: what `fabricsim run` was asked to do, before any file is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim {

struct RunOptions {
  std::string topologyPath;
  std::vector<std::string> workloadPaths;  ///< empty: the topology's default workload
  std::vector<std::string> sets;           ///< --set key.path=value, in order
  std::string backend = "packet";
  std::string routing;  ///< --routing, overrides routing.algorithm when set
  std::string cc;       ///< --cc, overrides congestion_control.algorithm when set
  uint64_t seed = 1;
  bool progress = true;  ///< progress on stderr: a status line on a terminal, else timestamped lines
  std::vector<std::string> probes;            ///< --probe queue=NODE:PORT | flow=SRC-DST
  std::string probeInterval = "1us";          ///< --probe-interval
  std::vector<std::string> workloadSets;      ///< --workload-set key.path=value (every workload file)
  std::string timelinePath;                   ///< --timeline: Chrome/Perfetto trace-event JSON
  uint32_t timelineRanks = 64;                ///< --timeline-ranks: ranks per job on the timeline
  /// Communicators (by name, e.g. "tp") whose calls and messages take no time in every
  /// trace-driven job that has them (`fabricsim explain`'s what-if runs).
  std::vector<std::string> freeCommunicators;
  /// Keep a record of every transfer (Fabric::flowRecords(), for in-process callers such as
  /// tests); off: the backend keeps only the transfers in flight and FCT statistics.
  bool keepFlowRecords = false;
  /// --max-memory: a run whose estimated peak memory exceeds it is refused before anything is
  /// built (bytes; 0: the machine's memory, machineMemoryLimit()).
  uint64_t maxMemory = 0;
};

}  // namespace fabricsim
