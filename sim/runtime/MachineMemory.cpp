#include "sim/runtime/MachineMemory.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace fabricsim {
namespace {

/// The first number in `path` (a cgroup file holds "max" when unlimited), or 0.
uint64_t readLimitFile(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return 0;
  }
}

uint64_t physicalMemory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemTotal:") return kib * 1024;
  return 0;
}

}  // namespace

uint64_t machineMemoryLimit() {
  uint64_t limit = physicalMemory();
  auto lower = [&limit](uint64_t v) {
    // cgroup v1 writes "no limit" as a number near 2^63.
    if (v > 0 && v < (uint64_t{1} << 60)) limit = limit == 0 ? v : std::min(limit, v);
  };
  lower(readLimitFile("/sys/fs/cgroup/memory.max"));
  lower(readLimitFile("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) lower(as.rlim_cur);
  return limit;
}

}  // namespace fabricsim
