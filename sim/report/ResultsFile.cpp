#include "sim/report/ResultsFile.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <stdexcept>

#include "sim/core/Error.h"

#ifndef FABRICSIM_VERSION
#define FABRICSIM_VERSION "0.0.0"
#endif
#include "FabricsimGit.h"  // FABRICSIM_GIT, generated at every build (cmake/GitDescribe.cmake)

namespace fabricsim {

namespace {

enum class Target { Missing, Regular, Folder, Stream };

Target targetOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Target::Missing;
  if (S_ISDIR(st.st_mode)) return Target::Folder;
  return S_ISREG(st.st_mode) ? Target::Regular : Target::Stream;
}

std::string folderOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

void ResultsFile::checkOutputPath(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  const Target t = targetOf(path);
  if (t == Target::Folder)
    throw InputError(path, 0, 0, option, "is a folder; expected the path of a file to write");
  if (t == Target::Stream) return;  // a device or FIFO: written in place
  const std::string folder = folderOf(path);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(path, 0, 0, option, "its folder '" + folder + "' does not exist; create it first");
  if (::access(folder.c_str(), W_OK) != 0)
    throw InputError(path, 0, 0, option,
                     "cannot write in its folder '" + folder + "': " + std::strerror(errno));
}

void ResultsFile::writeWith(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const Target t = targetOf(path);
  if (t == Target::Folder)
    throw InputError(path, 0, 0, "", "is a folder; expected the path of a file to write");
  if (t == Target::Stream) {  // a device or FIFO: in place (renaming over it would replace the node)
    std::ofstream out(path, std::ios::binary);
    if (!out) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    fill(out);
    out.flush();
    if (!out) throw std::runtime_error("error while writing " + path + ": " + std::strerror(errno));
    return;
  }
  // In the same folder (a rename does not cross file systems), named for this process so that two
  // runs writing the same path do not share a temporary file.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  auto fail = [&](const std::string& what) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(what + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()));
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot write " + tmp);
    try {
      fill(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.flush();
    if (!out) fail("error while writing " + tmp);
    out.close();
    if (!out) fail("error while closing " + tmp);
  }
  errno = 0;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename " + tmp + " to " + path);
}

void ResultsFile::writeJson(const std::string& path, const nlohmann::json& doc) {
  // Streamed (std::setw(2): the same text as dump(2)) rather than built as one string first:
  // writing a large document costs a buffer, not a second copy of it.
  writeWith(path, [&](std::ostream& out) { out << std::setw(2) << doc << '\n'; });
}

void ResultsFile::writeBytes(const std::string& path, const std::string& bytes) {
  writeWith(path,
            [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
}

std::string ResultsFile::version() { return FABRICSIM_VERSION; }
std::string ResultsFile::gitDescribe() { return FABRICSIM_GIT; }

long long ResultsFile::peakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<long long>(ru.ru_maxrss) * 1024;
}

}  // namespace fabricsim
