// ChildProcess: starts a program as a child that cannot outlive the process that started it,
// for the sweep's points.
//
// Models: fork + exec (Linux). The child gets its own process group (a terminal's Ctrl-C reaches
// only the parent, which stops its children itself), asks the kernel to SIGKILL it when the
// parent dies (PR_SET_PDEATHSIG; a parent killed before that call is caught by comparing
// getppid()), runs with an empty signal mask and default SIGINT/SIGTERM handling, reads
// /dev/null and writes stdout and stderr to a log file. An exec that fails is reported to the
// parent through a close-on-exec pipe, as posix_spawn would, not as an exit status.
// Leaves out: resource limits, environment changes, other platforms.
// Units: none.
#pragma once

#include <string>
#include <vector>

namespace fabricsim {

struct ChildProcess {
  int pid = 0;        ///< > 0 when started
  std::string error;  ///< why it did not start ("" when it did)

  /// Starts argv[0] (a path) with `argv`, its stdout and stderr into `logPath` (truncated).
  static ChildProcess start(const std::vector<std::string>& argv, const std::string& logPath);
};

}  // namespace fabricsim
