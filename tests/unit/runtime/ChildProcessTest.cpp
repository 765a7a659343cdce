// ChildProcess: output to the log, an exec failure reported as an error (not as a child), and
// no child outliving the process that started it.
#include "sim/runtime/ChildProcess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/ProcessState.h"
#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

using testsupport::alive;

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ChildProcess, WritesStdoutAndStderrToTheLogInItsOwnProcessGroup) {
  testsupport::TempDir dir;
  const std::string log = dir.file("log.txt");
  const ChildProcess c = ChildProcess::start({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, log);
  ASSERT_GT(c.pid, 0) << c.error;
  int st = 0;
  ASSERT_EQ(waitpid(c.pid, &st, 0), c.pid);
  EXPECT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 3);
  EXPECT_EQ(readText(log), "out\nerr\n");
  const ChildProcess g = ChildProcess::start({"/bin/sh", "-c", "sleep 5"}, log);
  ASSERT_GT(g.pid, 0);
  EXPECT_EQ(getpgid(g.pid), g.pid);
  kill(-g.pid, SIGKILL);  // the group: how the sweep stops its children
  waitpid(g.pid, nullptr, 0);
}

TEST(ChildProcess, AProgramThatCannotStartIsAnErrorNotAChild) {
  testsupport::TempDir dir;
  const ChildProcess c = ChildProcess::start({dir.file("missing-program")}, dir.file("log.txt"));
  EXPECT_EQ(c.pid, 0);
  EXPECT_NE(c.error.find("cannot start " + dir.file("missing-program") + ": No such file or directory"),
            std::string::npos)
      << c.error;
}

TEST(ChildProcess, DiesWhenItsParentIsKilled) {
  testsupport::TempDir dir;
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {  // the parent-to-be-killed starts a long child and waits
    const ChildProcess c = ChildProcess::start({"/bin/sleep", "60"}, dir.file("log.txt"));
    [[maybe_unused]] const ssize_t w = write(report[1], &c.pid, sizeof c.pid);
    pause();
    _exit(0);
  }
  int child = 0;
  ASSERT_EQ(read(report[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ASSERT_GT(child, 0);
  ASSERT_TRUE(alive(child));
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  // Without the parent-death signal it would sleep on for a minute; allow 10 s on a loaded machine.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (alive(child) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(alive(child));
  close(report[0]);
  close(report[1]);
}

}  // namespace
}  // namespace fabricsim
