// ProcessState: what /proc says about a process, for tests of processes that must not outlive
// their parent.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fabricsim::testsupport {

/// The state letter and parent pid in /proc/PID/stat ('\0', -1 when the process is gone).
inline std::pair<char, int> procStat(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return {'\0', -1};
  // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return {'\0', -1};
  std::istringstream rest(line.substr(close + 1));
  char state = 0;
  int ppid = -1;
  rest >> state >> ppid;
  return {state, ppid};
}

/// Whether `pid` is a live process (a zombie, dead but not yet reaped, is not).
inline bool alive(int pid) {
  const char state = procStat(pid).first;
  return state != '\0' && state != 'Z' && state != 'X';
}

/// The pids of `parent`'s children.
inline std::vector<int> childrenOf(int parent) {
  std::vector<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (procStat(std::stoi(name)).second == parent) out.push_back(std::stoi(name));
  }
  return out;
}

}  // namespace fabricsim::testsupport
