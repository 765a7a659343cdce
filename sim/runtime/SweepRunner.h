// SweepRunner: runs every point of a sweep as a `fabricsim run` child process and collects the
// results into summary.csv.
//
// Models: expansion of a SweepSpec into points (the cartesian product of the axes in file
// order, first axis slowest), the exact `run` argv of each point, a pool of at most `jobs`
// child processes (ChildProcess: fork + exec, each in its own process group and killed by the
// kernel if the sweep dies, SIGKILL included; waitpid, no threads), a claim (PointClaim: a lock
// on DIR/points/pNNNN/claim.lock) on each point while it runs, so that two runners on one folder
// never run a point twice, resumption (--resume skips points whose results.json exists and was
// computed from the point's current configuration and this binary: SweepPointKey, recorded in
// point.json as config_key; the others rerun and are counted), interruption (SIGINT/SIGTERM kill
// the running children and keep what has finished), MPI-style distribution without MPI linkage
// (the ranks share one queue of points through their claims: rank 0 prepares the folder, the
// others start when it has, each rank takes the next point nobody has claimed, and rank 0 ends
// when every point has an outcome, running itself those of a rank that died; --shard r/n
// instead runs the points with index % n == r for a job array, every shard writing the summary
// of what has finished and none waiting), progress lines with an ETA, and the output directory
// layout:
//   DIR/sweep.json                      resolved spec and point list (rank 0; the other ranks
//                                       start when this sweep's appears)
//   DIR/summary.csv                     one row per point, in point order (rank 0, atomic)
//   DIR/points/p0003/point.json         axis values, argv, mpi_rank, config_key
//   DIR/points/p0003/claim.lock         held (flock) by the runner running the point
//   DIR/points/p0003/log.txt            the child's stdout and stderr
//   DIR/points/p0003/results.json       the child's --out (atomic)
//   DIR/points/p0003/failed.json        {exit_code, signal, log_tail} when the point failed
// Leaves out: scheduling on other machines beyond the MPI rank split, retries, and any
// knowledge of the simulation itself (results are read back from results.json).
// Units: wall-clock seconds.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/SweepSpec.h"
#include "sim/runtime/PointClaim.h"

namespace fabricsim {

/// How `fabricsim sweep` was asked to run.
struct SweepRunOptions {
  std::string outDir;
  int jobs = 1;            ///< child processes at a time on this rank
  bool resume = false;     ///< skip points whose results.json is current (config_key); re-run the rest
  bool dryRun = false;     ///< print the points and their commands, run nothing
  bool quiet = false;      ///< no progress lines on stderr
  std::string executable;  ///< the fabricsim binary the children run (default /proc/self/exe)
  int mpiRank = 0;
  int mpiSize = 1;
  /// --shard mpiRank/mpiSize (a job array, no MPI): no rank waits for the others, and each
  /// writes sweep.json and the summary of what has finished when its points are done.
  bool shard = false;
  /// Passed to every point as --max-memory (e.g. "8GiB"); empty: each point's default.
  std::string maxMemory;
};

class SweepRunner {
 public:
  SweepRunner(SweepSpec spec, SweepRunOptions options);

  /// Runs this rank's points (and on rank 0 waits for every point and writes the summary).
  /// Returns the exit status: 0 all points succeeded, 1 some failed or were interrupted, 2 the
  /// output directory holds finished points and --resume was not given.
  int run();

  const std::vector<SweepPoint>& points() const { return points_; }

  /// The points of `spec`: the cartesian product of its axes, first axis slowest.
  static std::vector<SweepPoint> expand(const SweepSpec& spec);
  /// The argv (without the executable) of `fabricsim run` for `point`, writing `resultsPath`.
  static std::vector<std::string> runArguments(const SweepPoint& point, const std::string& resultsPath);
  /// (rank, size) from OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE or PMIX_RANK + OMPI_COMM_WORLD_SIZE;
  /// (0, 1) outside MPI.
  static std::pair<int, int> mpiRankFromEnvironment();
  /// "p0003".
  static std::string pointId(size_t index);
  /// Writes DIR/summary.csv from whatever results.json and failed.json files exist.
  static void writeSummary(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                           const std::string& outDir);
  /// The row values summary.csv takes from one results document (same order as its metric columns).
  static std::vector<std::string> metricColumns();
  static std::vector<std::string> metricValues(const nlohmann::json& results);

 private:
  struct Running {
    int pid = 0;
    size_t point = 0;
    std::chrono::steady_clock::time_point start;
  };

  std::string pointDir(const SweepPoint& p) const;
  nlohmann::json pointJson(const SweepPoint& p) const;
  nlohmann::json sweepJson() const;
  void printDryRun() const;
  /// Starts the child for `p`; on failure to start, records failed.json and returns false.
  bool spawn(const SweepPoint& p, Running& out);
  /// Records the outcome of a finished child and prints its progress line.
  void finish(const Running& r, int waitStatus);
  void killRunning();
  /// Ranks other than 0 of a shared queue: polls until rank 0 has written this sweep's
  /// sweep.json (false: interrupted).
  bool waitForRankZero();
  void progress(const SweepPoint& p, const std::string& what);
  /// "rank 3" (MPI) or "shard 3" (--shard), for progress lines.
  std::string who() const;
  /// The config_key its point.json recorded ("" when none).
  std::string storedKey(const SweepPoint& p) const;
  /// Whether `p` has results computed from its current configuration and this binary.
  bool finishedUnchanged(const SweepPoint& p) const;

  SweepSpec spec_;
  SweepRunOptions options_;
  std::vector<SweepPoint> points_;
  std::vector<Running> running_;
  std::map<size_t, PointClaim> claims_;  ///< the points this runner runs now, claimed
  size_t claimedElsewhere_ = 0;          ///< points skipped: another runner ran or runs them
  size_t toRun_ = 0;
  size_t finished_ = 0;
  size_t failed_ = 0;
  double pointSeconds_ = 0;  ///< sum of finished points' wall times
  std::chrono::steady_clock::time_point start_;
};

}  // namespace fabricsim
