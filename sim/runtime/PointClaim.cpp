#include "sim/runtime/PointClaim.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fabricsim {

std::optional<PointClaim> PointClaim::tryClaim(const std::string& path, std::string* holder) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (holder) {
      char buf[256] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      *holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
      while (!holder->empty() && (holder->back() == '\n' || holder->back() == '\0')) holder->pop_back();
    }
    ::close(fd);
    return std::nullopt;
  }
  char host[128] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string who = std::string(host) + " pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t w = ::pwrite(fd, who.data(), who.size(), 0);
  }
  return PointClaim(fd);
}

PointClaim& PointClaim::operator=(PointClaim&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

PointClaim::~PointClaim() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor of the open file releases the lock
}

}  // namespace fabricsim
