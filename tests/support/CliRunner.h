// CliRunner: runs the fabricsim executable (FABRICSIM_BINARY) with a command line and returns
// its exit status and output, for command-line tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace fabricsim::testsupport {

struct CliResult {
  int status = -1;
  std::string out;
};

/// Runs `fabricsim <args> <redirect>`; `redirect` chooses what is captured, e.g. "2>&1" (both),
/// "2>&1 >/dev/null" (stderr only) or "2>/dev/null" (stdout only).
/// `launcher` goes before the binary (e.g. "mpirun -np 2 ", with any environment assignments).
inline CliResult runFabricsim(const std::string& args, const std::string& redirect,
                              const std::string& launcher = "") {
  const std::string cmd = launcher + "'" + FABRICSIM_BINARY + "' " + args + " " + redirect;
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace fabricsim::testsupport
