#include "sim/report/ResultsFile.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <stdexcept>

#ifndef FABRICSIM_VERSION
#define FABRICSIM_VERSION "0.0.0"
#endif
#include "FabricsimGit.h"  // FABRICSIM_GIT, generated at every build (cmake/GitDescribe.cmake)

namespace fabricsim {

void ResultsFile::writeJson(const std::string& path, const nlohmann::json& doc) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    // Streamed (std::setw(2): the same text as dump(2)) rather than built as one string first:
    // writing a large document costs a buffer, not a second copy of it.
    out << std::setw(2) << doc << '\n';
    out.flush();
    if (!out) throw std::runtime_error("error while writing " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

void ResultsFile::writeBytes(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      throw std::runtime_error("error while writing " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

std::string ResultsFile::version() { return FABRICSIM_VERSION; }
std::string ResultsFile::gitDescribe() { return FABRICSIM_GIT; }

long long ResultsFile::peakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<long long>(ru.ru_maxrss) * 1024;
}

}  // namespace fabricsim
