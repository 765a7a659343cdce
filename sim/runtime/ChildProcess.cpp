#include "sim/runtime/ChildProcess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace fabricsim {

ChildProcess ChildProcess::start(const std::vector<std::string>& argv, const std::string& logPath) {
  ChildProcess out;
  // Everything the child needs is prepared before fork: after it only async-signal-safe calls.
  std::vector<char*> cargv;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    out.error = "cannot open " + logPath + ": " + std::strerror(errno);
    return out;
  }
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    ::close(log);
    return out;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.error = std::string("fork: ") + std::strerror(errno);
    ::close(log);
    ::close(report[0]);
    ::close(report[1]);
    return out;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the request took effect
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execve(cargv[0], cargv.data(), environ);
    const int e = errno;
    [[maybe_unused]] const ssize_t w = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(log);
  ::close(report[1]);
  int e = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &e, sizeof e);  // 0: exec succeeded (the pipe closed on exec)
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    ::waitpid(pid, nullptr, 0);
    out.error = "cannot start " + argv[0] + ": " + std::strerror(e);
    return out;
  }
  // The read returned at the exec: the child's process group exists before anyone signals it.
  out.pid = pid;
  return out;
}

}  // namespace fabricsim
