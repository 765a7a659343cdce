// PointClaim: a sweep runner's exclusive claim on one point while it runs, so that two runners
// on the same output folder (a second `--resume`, ranks of an MPI or job-array sweep sharing a
// file system) never run the same point at once.
//
// Models: an advisory lock (flock, exclusive, non-blocking) on DIR/points/pNNNN/claim.lock, held
// by the open file as long as the claim object lives. The kernel releases it when the holder
// exits, however it dies (SIGKILL included): a dead runner's claims need no cleanup. The file
// records the holder (host and pid) for the message of a runner that finds it taken; it is left
// in place afterwards (removing it would race with the next claimant's open).
// Leaves out: file systems without flock semantics across machines (NFS before v4 with no lock
// daemon): there the claim protects only runners on one machine.
// Units: none.
#pragma once

#include <optional>
#include <string>

namespace fabricsim {

class PointClaim {
 public:
  /// The claim on `path` (created when missing), or nullopt when another open file holds it;
  /// `holder` then says who ("host-a pid 4242", or "" when unknown). Throws std::runtime_error
  /// when the file cannot be created.
  static std::optional<PointClaim> tryClaim(const std::string& path, std::string* holder = nullptr);

  PointClaim(PointClaim&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  PointClaim& operator=(PointClaim&& o) noexcept;
  PointClaim(const PointClaim&) = delete;
  PointClaim& operator=(const PointClaim&) = delete;
  ~PointClaim();

 private:
  explicit PointClaim(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace fabricsim
