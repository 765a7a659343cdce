// Commands: the subcommands of the fabricsim executable (DESIGN.md section 6).
//
// Each takes the arguments after the subcommand name and returns the process exit status:
// 0 success, 1 runtime failure, 2 bad input (a clear diagnostic has been printed on stderr),
// 3 (run) the simulated workload failed: a connection exhausted its transport retries.
#pragma once

#include <string>
#include <vector>

namespace fabricsim {

/// `run`'s exit status when the simulation itself ended in a failure (results still written).
inline constexpr int kRunFailedStatus = 3;

int topoCommand(const std::vector<std::string>& args);
int runCommand(const std::vector<std::string>& args);
int traceCommand(const std::vector<std::string>& args);
int explainCommand(const std::vector<std::string>& args);
int sweepCommand(const std::vector<std::string>& args);
int calibrateCommand(const std::vector<std::string>& args);
int validateCommand(const std::vector<std::string>& args);
int schemaCommand(const std::vector<std::string>& args);

}  // namespace fabricsim
