#include "sim/runtime/SweepRunner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/core/Time.h"
#include "sim/core/Units.h"
#include "sim/report/ProgressReporter.h"
#include "sim/report/ResultsFile.h"
#include "sim/runtime/ChildProcess.h"
#include "sim/runtime/SweepPointKey.h"

namespace fabricsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

volatile sig_atomic_t gInterrupt = 0;

void onSignal(int sig) {
  gInterrupt = sig;
}

/// Installs the SIGINT/SIGTERM handlers for the lifetime of the object (no SA_RESTART, so a
/// sleep returns early), and restores the previous ones.
class SignalGuard {
 public:
  SignalGuard() {
    gInterrupt = 0;
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &oldInt_);
    sigaction(SIGTERM, &sa, &oldTerm_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &oldInt_, nullptr);
    sigaction(SIGTERM, &oldTerm_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction oldInt_ {};
  struct sigaction oldTerm_ {};
};

void sleepSeconds(double s) {
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(s);
  ts.tv_nsec = static_cast<long>((s - static_cast<double>(ts.tv_sec)) * 1e9);
  nanosleep(&ts, nullptr);
}

std::string shellQuote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
          std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string commandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shellQuote(a);
  }
  return out;
}

/// "12.3 s" below a minute, else "1m02s" or "1h02m".
std::string formatDuration(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 3600) {
    const long t = std::lround(s);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  } else {
    const long t = std::lround(s / 60);
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 60, t % 60);
  }
  return buf;
}

/// The last `maxBytes` of a file (from a line start where possible).
std::string fileTail(const std::string& path, size_t maxBytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() <= maxBytes) return s;
  s = s.substr(s.size() - maxBytes);
  const auto nl = s.find('\n');
  return nl == std::string::npos || nl + 1 >= s.size() ? s : s.substr(nl + 1);
}

std::string lastLine(const std::string& text) {
  std::string s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  const auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

/// Parses a JSON file; a null json when it is missing or unreadable.
json readJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  try {
    return json::parse(in);
  } catch (const json::exception&) {
    return nullptr;
  }
}

const json* at(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return nullptr;
    cur = &(*cur)[k];
  }
  return cur->is_null() ? nullptr : cur;
}

std::string cell(const json* v) {
  if (!v) return {};
  if (v->is_string()) return v->get<std::string>();
  if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
  if (v->is_number()) return v->dump();
  return {};
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// The largest jct_s over the jobs, or a negative number when there is none.
double maxJct(const json& results) {
  double jct = -1;
  if (const json* jobs = at(results, {"jobs"}); jobs && jobs->is_array())
    for (const auto& j : *jobs)
      if (const json* v = at(j, {"jct_s"}); v && v->is_number()) jct = std::max(jct, v->get<double>());
  return jct;
}

void applyOverrides(const SweepOverrides& o, SweepPoint& p) {
  if (o.topology) p.topology = *o.topology;
  if (o.workloads) p.workloads = *o.workloads;
  p.sets.insert(p.sets.end(), o.sets.begin(), o.sets.end());
  p.workloadSets.insert(p.workloadSets.end(), o.workloadSets.begin(), o.workloadSets.end());
  if (o.cc) p.cc = o.cc;
  if (o.routing) p.routing = o.routing;
  if (o.backend) p.backend = o.backend;
  if (o.seed) p.seed = o.seed;
}

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return end && *end == '\0' && x >= 0 && x < (1L << 30) ? static_cast<int>(x) : fallback;
}

}  // namespace

SweepRunner::SweepRunner(SweepSpec spec, SweepRunOptions options)
    : spec_(std::move(spec)), options_(std::move(options)), points_(expand(spec_)) {
  if (options_.jobs < 1) options_.jobs = 1;
  if (options_.mpiSize < 1) options_.mpiSize = 1;
  if (options_.executable.empty()) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    options_.executable = ec ? "/proc/self/exe" : self.string();
  }
}

std::string SweepRunner::pointId(size_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%04zu", index);
  return buf;
}

std::vector<SweepPoint> SweepRunner::expand(const SweepSpec& spec) {
  std::vector<SweepPoint> out;
  const size_t n = spec.pointCount();
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    SweepPoint p;
    p.index = i;
    p.id = pointId(i);
    applyOverrides(spec.base, p);
    // Mixed radix, the last axis fastest.
    std::vector<size_t> digit(spec.axes.size());
    size_t rest = i;
    for (size_t a = spec.axes.size(); a-- > 0;) {
      digit[a] = rest % spec.axes[a].values.size();
      rest /= spec.axes[a].values.size();
    }
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      const SweepAxisValue& v = spec.axes[a].values[digit[a]];
      p.labels.emplace_back(spec.axes[a].name, v.label);
      applyOverrides(v.overrides, p);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> SweepRunner::runArguments(const SweepPoint& p, const std::string& resultsPath) {
  std::vector<std::string> a{"run", p.topology};
  for (const auto& w : p.workloads) a.insert(a.end(), {"--workload", w});
  if (p.backend) a.insert(a.end(), {"--backend", *p.backend});
  if (p.routing) a.insert(a.end(), {"--routing", *p.routing});
  if (p.cc) a.insert(a.end(), {"--cc", *p.cc});
  if (p.seed) a.insert(a.end(), {"--seed", std::to_string(*p.seed)});
  for (const auto& s : p.sets) a.insert(a.end(), {"--set", s});
  for (const auto& s : p.workloadSets) a.insert(a.end(), {"--workload-set", s});
  a.insert(a.end(), {"--out", resultsPath, "--quiet"});
  return a;
}

std::pair<int, int> SweepRunner::mpiRankFromEnvironment() {
  int rank = envInt("OMPI_COMM_WORLD_RANK", -1);
  int size = envInt("OMPI_COMM_WORLD_SIZE", -1);
  if (rank < 0 || size < 1) {
    rank = envInt("PMI_RANK", -1);
    size = envInt("PMI_SIZE", -1);
  }
  if (rank < 0 || size < 1) {
    rank = envInt("PMIX_RANK", -1);
    size = envInt("OMPI_COMM_WORLD_SIZE", -1);
  }
  if (rank < 0 || size < 1 || rank >= size) return {0, 1};
  return {rank, size};
}

std::string SweepRunner::pointDir(const SweepPoint& p) const {
  return (fs::path(options_.outDir) / "points" / p.id).string();
}

nlohmann::json SweepRunner::pointJson(const SweepPoint& p) const {
  json axes = json::object();
  for (const auto& [name, label] : p.labels) axes[name] = label;
  std::vector<std::string> argv{options_.executable};
  const auto args = runArguments(p, (fs::path(pointDir(p)) / "results.json").string());
  argv.insert(argv.end(), args.begin(), args.end());
  if (!options_.maxMemory.empty()) argv.insert(argv.end(), {"--max-memory", options_.maxMemory});
  return {{"id", p.id},
          {"index", p.index},
          {"sweep", spec_.name},
          {"axes", axes},
          {"argv", argv},
          {"command", commandLine(argv)},
          {"mpi_rank", options_.mpiRank},
          {"mpi_size", options_.mpiSize}};
}

nlohmann::json SweepRunner::sweepJson() const {
  auto overridesJson = [](const SweepOverrides& o) {
    json j = json::object();
    if (o.topology) j["topology"] = *o.topology;
    if (o.workloads) j["workloads"] = *o.workloads;
    if (!o.sets.empty()) j["set"] = o.sets;
    if (!o.workloadSets.empty()) j["workload_set"] = o.workloadSets;
    if (o.cc) j["cc"] = *o.cc;
    if (o.routing) j["routing"] = *o.routing;
    if (o.backend) j["backend"] = *o.backend;
    if (o.seed) j["seed"] = *o.seed;
    return j;
  };
  json axes = json::array();
  for (const auto& a : spec_.axes) {
    json values = json::array();
    for (const auto& v : a.values) {
      json jv = overridesJson(v.overrides);
      jv["value"] = v.label;
      values.push_back(jv);
    }
    axes.push_back({{"name", a.name}, {"values", values}});
  }
  json points = json::array();
  for (const auto& p : points_) points.push_back(pointJson(p));
  for (auto& p : points) p.erase("mpi_rank");
  return {{"name", spec_.name},
          {"file", spec_.file},
          {"version", ResultsFile::version()},
          {"git", ResultsFile::gitDescribe()},
          {"base", overridesJson(spec_.base)},
          {"axes", axes},
          {"mpi_size", options_.mpiSize},
          {"points", points}};
}

void SweepRunner::printDryRun() const {
  std::printf("sweep %s: %zu points\n", spec_.name.c_str(), points_.size());
  for (const auto& p : points_) {
    std::string labels;
    for (const auto& [name, label] : p.labels) labels += " " + name + "=" + label;
    std::printf("%s%s", p.id.c_str(), labels.c_str());
    if (options_.shard) std::printf("  (shard %zu)", p.index % static_cast<size_t>(options_.mpiSize));
    std::printf("\n  %s\n", pointJson(p)["command"].get<std::string>().c_str());
  }
}

bool SweepRunner::spawn(const SweepPoint& p, Running& out) {
  const std::string dir = pointDir(p);
  json pj = pointJson(p);
  pj["config_key"] = SweepPointKey::of(p);
  ResultsFile::writeJson((fs::path(dir) / "point.json").string(), pj);
  const ChildProcess child =
      ChildProcess::start(pj["argv"].get<std::vector<std::string>>(), (fs::path(dir) / "log.txt").string());
  out.point = p.index;
  out.start = Clock::now();
  if (child.pid <= 0) {
    ResultsFile::writeJson(
        (fs::path(dir) / "failed.json").string(),
        {{"exit_code", nullptr}, {"signal", nullptr}, {"error", child.error}, {"log_tail", child.error}});
    ++finished_;
    ++failed_;
    progress(p, "FAILED: " + child.error);
    return false;
  }
  out.pid = child.pid;
  return true;
}

std::string SweepRunner::storedKey(const SweepPoint& p) const {
  std::error_code ec;
  const fs::path file = fs::path(pointDir(p)) / "point.json";
  if (!fs::exists(file, ec)) return "";
  const json pj = readJson(file.string());
  const json* k = at(pj, {"config_key"});
  return k && k->is_string() ? k->get<std::string>() : "";
}

bool SweepRunner::finishedUnchanged(const SweepPoint& p) const {
  std::error_code ec;
  if (!fs::exists(fs::path(pointDir(p)) / "results.json", ec)) return false;
  const std::string stored = storedKey(p);
  return !stored.empty() && stored == SweepPointKey::of(p);
}

std::string SweepRunner::who() const {
  return (options_.shard ? "shard " : "rank ") + std::to_string(options_.mpiRank);
}

void SweepRunner::progress(const SweepPoint& p, const std::string& what) {
  if (options_.quiet) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  std::string labels;
  for (const auto& [name, label] : p.labels) labels += " " + name + "=" + label;
  std::string line =
      "[" + std::to_string(finished_) + "/" + std::to_string(toRun_) + "] " + p.id + labels + ": " + what;
  if (failed_ > 0) line += " | " + std::to_string(failed_) + " failed";
  line += " | elapsed " + formatDuration(elapsed);
  if (elapsed > 0 && finished_ > 0) {
    char rate[48];
    std::snprintf(rate, sizeof rate, " | %.3g points/min", static_cast<double>(finished_) * 60 / elapsed);
    line += rate;
  }
  const size_t remaining = toRun_ - finished_;
  if (remaining > 0 && finished_ > 0) {
    const double mean = pointSeconds_ / static_cast<double>(finished_);
    const double eta = mean * static_cast<double>(remaining) /
                       static_cast<double>(std::min<size_t>(static_cast<size_t>(options_.jobs), remaining));
    line += " | ETA " + formatDuration(eta);
  }
  if (options_.mpiSize > 1) line = who() + ": " + line;
  std::fprintf(stderr, "%s %s\n", ProgressReporter::utcTimestamp().c_str(), line.c_str());
}

void SweepRunner::finish(const Running& r, int status) {
  const SweepPoint& p = points_[r.point];
  const double seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  const std::string dir = pointDir(p);
  const std::string results = (fs::path(dir) / "results.json").string();
  ++finished_;
  pointSeconds_ += seconds;
  const bool exited = WIFEXITED(status);
  const int code = exited ? WEXITSTATUS(status) : -1;
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  std::error_code ec;
  if (exited && code == 0 && fs::exists(results, ec)) {
    std::string what = "done in " + formatDuration(seconds);
    const double jct = maxJct(readJson(results));
    if (jct >= 0) what += " (JCT " + formatTime(Time::ps(std::llround(jct * 1e12))) + ")";
    progress(p, what);
    return;
  }
  ++failed_;
  const std::string tail = fileTail((fs::path(dir) / "log.txt").string(), 4096);
  json f = {{"exit_code", exited ? json(code) : json(nullptr)},
            {"signal", sig ? json(sig) : json(nullptr)},
            {"wall_time_s", seconds},
            {"log_tail", tail}};
  if (exited && code == 0) f["error"] = "exited 0 but wrote no results.json";
  ResultsFile::writeJson((fs::path(dir) / "failed.json").string(), f);
  std::string what =
      sig ? "FAILED (signal " + std::to_string(sig) + ")" : "FAILED (exit " + std::to_string(code) + ")";
  what += " in " + formatDuration(seconds);
  const std::string last = lastLine(tail);
  if (!last.empty()) what += ": " + last;
  progress(p, what);
}

void SweepRunner::killRunning() {
  for (const auto& r : running_) kill(-r.pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!running_.empty()) {
    for (auto it = running_.begin(); it != running_.end();) {
      int st = 0;
      const pid_t got = waitpid(it->pid, &st, WNOHANG);
      if (got == it->pid || (got < 0 && errno == ECHILD))
        it = running_.erase(it);
      else
        ++it;
    }
    if (running_.empty()) break;
    if (Clock::now() > deadline) {
      for (const auto& r : running_) kill(-r.pid, SIGKILL);
      for (const auto& r : running_) waitpid(r.pid, nullptr, 0);
      running_.clear();
      break;
    }
    sleepSeconds(0.02);
  }
}

bool SweepRunner::waitForRankZero() {
  // Rank 0 writes sweep.json (a new file, by rename) once it has checked and prepared the folder.
  // One from an earlier sweep is older than this rank's start; mpirun starts the ranks within
  // seconds of each other, and a file system's clock may be off by some: 60 s of slack.
  const fs::path file = fs::path(options_.outDir) / "sweep.json";
  const auto since = fs::file_time_type::clock::now() - std::chrono::seconds(60);
  bool announced = false;
  while (!gInterrupt) {
    std::error_code ec;
    const auto t = fs::last_write_time(file, ec);
    if (!ec && t >= since) {
      const json* n = nullptr;
      const json doc = readJson(file.string());
      if ((n = at(doc, {"mpi_size"})) && n->is_number_integer() && n->get<int>() == options_.mpiSize)
        return true;
    }
    if (!announced && !options_.quiet) {
      std::fprintf(stderr, "%s: waiting for rank 0 to prepare %s\n", who().c_str(), options_.outDir.c_str());
      announced = true;
    }
    sleepSeconds(0.05);
  }
  return false;
}

int SweepRunner::run() {
  if (options_.dryRun) {
    printDryRun();
    return 0;
  }
  start_ = Clock::now();
  const size_t size = static_cast<size_t>(options_.mpiSize);
  const size_t rank = static_cast<size_t>(options_.mpiRank);
  // Under MPI the ranks share one queue, the points in order, each taken by the first rank to
  // claim it (PointClaim): a slow point holds up only its own rank. Rank 0 checks the folder
  // for an earlier run's points and prepares it; the others start once it has (sweep.json).
  const bool shared = size > 1 && !options_.shard;
  if (shared && rank != 0 && !waitForRankZero()) return 128 + gInterrupt;
  std::vector<size_t> mine;
  std::vector<std::string> done;
  size_t changed = 0;  // finished points whose configuration changed since (--resume)
  for (const auto& p : points_) {
    if (!shared && p.index % size != rank) continue;
    if (shared && rank != 0) {  // rank 0 has cleared what is not current
      if (!finishedUnchanged(p)) mine.push_back(p.index);
      continue;
    }
    std::error_code ec;
    const fs::path dir = pointDir(p);
    const bool ok = fs::exists(dir / "results.json", ec);
    const bool failed = fs::exists(dir / "failed.json", ec);
    if (!options_.resume) {
      if (ok || failed) done.push_back(p.id);
      mine.push_back(p.index);
      continue;
    }
    if (ok && finishedUnchanged(p)) continue;
    if (ok) {
      // Computed from other settings, another binary, or before keys were recorded: its
      // results go, so that neither the summary nor a later resume takes them for current.
      ++changed;
      fs::remove(dir / "results.json", ec);
    }
    mine.push_back(p.index);
  }
  if (!done.empty() && !options_.resume) {
    std::string list;
    for (size_t i = 0; i < done.size() && i < 5; ++i) list += (i ? ", " : "") + done[i];
    if (done.size() > 5) list += ", ...";
    std::fprintf(
        stderr,
        "error: fabricsim sweep: '%s' already holds %zu finished points (%s); pass --resume to continue "
        "that sweep (finished points are kept, failed ones re-run) or choose another --out\n",
        options_.outDir.c_str(), done.size(), list.c_str());
    return 2;
  }
  fs::create_directories(fs::path(options_.outDir) / "points");
  for (const size_t i : mine) {
    const fs::path dir = pointDir(points_[i]);
    fs::create_directories(dir);
    std::error_code ec;
    if (!shared || rank == 0) fs::remove(dir / "failed.json", ec);  // else a peer's, of this run
  }
  const bool writesSummary = rank == 0 || options_.shard;
  if (writesSummary) ResultsFile::writeJson((fs::path(options_.outDir) / "sweep.json").string(), sweepJson());
  toRun_ = mine.size();
  if (!options_.quiet) {
    const size_t skipped = static_cast<size_t>(std::count_if(
                               points_.begin(), points_.end(),
                               [&](const SweepPoint& p) { return shared || p.index % size == rank; })) -
                           mine.size();
    std::string head = "sweep " + spec_.name + ": " + std::to_string(points_.size()) + " points";
    if (size > 1) head = who() + "/" + std::to_string(size) + ": " + head;
    head += shared ? ", sharing " + std::to_string(mine.size()) + " with the other ranks"
                   : ", running " + std::to_string(mine.size());
    if (skipped) head += " (" + std::to_string(skipped) + " already done)";
    if (changed == 1)
      head += "; 1 changed since it ran (its configuration or the binary)";
    else if (changed > 1)
      head += "; " + std::to_string(changed) + " changed since they ran (their configuration or the binary)";
    head += " with --jobs " + std::to_string(options_.jobs) + " into " + options_.outDir;
    std::fprintf(stderr, "%s\n", head.c_str());
  }

  int interruptedBy = 0;
  {
    SignalGuard guard;
    size_t next = 0;
    while (true) {
      if (gInterrupt) break;
      if (next >= mine.size() && running_.empty()) {
        // Rank 0 of a shared queue ends when every point has an outcome; it takes over the points
        // of a rank that died (their claims are free again) and waits for the rest.
        if (!shared || rank != 0) break;
        const size_t before = mine.size();
        bool pending = false;
        for (const auto& p : points_) {
          std::error_code ec;
          const fs::path dir = pointDir(p);
          if (fs::exists(dir / "results.json", ec) || fs::exists(dir / "failed.json", ec)) continue;
          pending = true;
          if (PointClaim::tryClaim((dir / "claim.lock").string())) {  // free: its runner is gone
            mine.push_back(p.index);
            ++toRun_;
          }
        }
        if (!pending) break;
        if (mine.size() == before) sleepSeconds(0.2);
        continue;
      }
      while (running_.size() < static_cast<size_t>(options_.jobs) && next < mine.size() && !gInterrupt) {
        const SweepPoint& p = points_[mine[next++]];
        std::string holder;
        std::optional<PointClaim> claim =
            PointClaim::tryClaim((fs::path(pointDir(p)) / "claim.lock").string(), &holder);
        if (!claim) {  // another runner has it now
          --toRun_;
          ++claimedElsewhere_;
          if (!options_.quiet && !shared)
            std::fprintf(stderr, "%s %s: running in another runner (%s), skipped\n",
                         ProgressReporter::utcTimestamp().c_str(), p.id.c_str(),
                         holder.empty() ? "unknown" : holder.c_str());
          continue;
        }
        std::error_code ec;
        if (finishedUnchanged(p) || fs::exists(fs::path(pointDir(p)) / "failed.json", ec)) {
          // another runner ran it since this one started
          --toRun_;
          ++claimedElsewhere_;
          continue;
        }
        Running r;
        if (spawn(p, r)) {
          running_.push_back(r);
          claims_.emplace(p.index, std::move(*claim));
        }
      }
      bool reaped = false;
      for (auto it = running_.begin(); it != running_.end();) {
        int st = 0;
        const pid_t got = waitpid(it->pid, &st, WNOHANG);
        if (got == it->pid) {
          const Running r = *it;
          it = running_.erase(it);
          if (!gInterrupt) {  // else killed along with the sweep: not a failure of the point
            finish(r, st);
            reaped = true;
          }
          claims_.erase(r.point);  // released once its outcome is on disk
        } else {
          ++it;
        }
      }
      if (!reaped) sleepSeconds(0.02);
    }
    if (gInterrupt) {
      interruptedBy = gInterrupt;
      killRunning();
    }
  }
  if (writesSummary) writeSummary(spec_, points_, options_.outDir);
  if (interruptedBy) {
    std::fprintf(
        stderr,
        "fabricsim sweep: interrupted (signal %d); %zu points finished and kept; rerun with --resume to "
        "finish\n",
        interruptedBy, finished_);
    return 128 + interruptedBy;
  }
  if (!options_.quiet) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    std::string tail = "sweep " + spec_.name + ": " + std::to_string(finished_ - failed_) + " ok, " +
                       std::to_string(failed_) + " failed in " + formatDuration(elapsed);
    if (claimedElsewhere_ > 0) tail += " (" + std::to_string(claimedElsewhere_) + " left to other runners)";
    if (writesSummary) tail += "; summary in " + (fs::path(options_.outDir) / "summary.csv").string();
    if (size > 1) tail = who() + ": " + tail;
    std::fprintf(stderr, "%s\n", tail.c_str());
  }
  // Under mpirun a rank that exits non-zero makes mpirun abort the job, killing the ranks still
  // running points: the other ranks exit 0 with their failures on disk (failed.json), and rank 0,
  // which waits for every point, reports them.
  if (size > 1 && !options_.shard && rank != 0) return 0;
  if (failed_ > 0) return 1;
  if (rank == 0 && !options_.shard) {
    // Under MPI the other ranks' points count too.
    for (const auto& p : points_) {
      std::error_code ec;
      if (!fs::exists(fs::path(pointDir(p)) / "results.json", ec)) return 1;
    }
  }
  return 0;
}

std::vector<std::string> SweepRunner::metricColumns() {
  return {"backend",          "congestion_control", "routing",        "gpus",          "jct_s",
          "iteration_s",      "compute_s",          "exposed_comm_s", "busbw_GBps",    "sim_time_s",
          "wall_time_s",      "peak_rss_bytes",     "events",         "bytes_dropped", "ecn_marks",
          "pfc_pause_frames", "max_queue_bytes"};
}

std::vector<std::string> SweepRunner::metricValues(const nlohmann::json& r) {
  const json* jobs = at(r, {"jobs"});
  const json* executorJob = nullptr;  // the first job with iterations (a training or trace job)
  const json* ncclJob = nullptr;      // the first job with an nccl-tests table
  const json* firstJob = nullptr;
  if (jobs && jobs->is_array()) {
    for (const auto& j : *jobs) {
      if (!firstJob) firstJob = &j;
      const json* its = at(j, {"iterations"});
      if (!executorJob && its && its->is_array() && !its->empty()) executorJob = &j;
      if (!ncclJob && at(j, {"nccl_tests"})) ncclJob = &j;
    }
  }
  const json* mainJob = executorJob ? executorJob : firstJob;
  const double jct = maxJct(r);
  std::string iteration;
  if (executorJob) {
    const json& its = (*executorJob)["iterations"];
    iteration = cell(at(its.back(), {"time_s"}));
  }
  return {cell(at(r, {"backend"})),
          cell(at(r, {"congestion_control"})),
          cell(at(r, {"routing", "algorithm"})),
          cell(at(r, {"summary", "gpus"})),
          jct >= 0 ? json(jct).dump() : std::string(),
          iteration,
          mainJob ? cell(at(*mainJob, {"compute_s"})) : std::string(),
          mainJob ? cell(at(*mainJob, {"exposed_comm_s"})) : std::string(),
          ncclJob ? cell(at(*ncclJob, {"nccl_tests", "avg_busbw_GBps"})) : std::string(),
          cell(at(r, {"summary", "sim_time_s"})),
          cell(at(r, {"summary", "wall_time_s"})),
          cell(at(r, {"summary", "peak_rss_bytes"})),
          cell(at(r, {"summary", "events"})),
          cell(at(r, {"network", "bytes_dropped"})),
          cell(at(r, {"network", "ecn_marks"})),
          cell(at(r, {"network", "pfc_pause_frames"})),
          cell(at(r, {"network", "max_queue_bytes"}))};
}

void SweepRunner::writeSummary(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                               const std::string& outDir) {
  const std::vector<std::string> metrics = metricColumns();
  std::vector<std::string> header{"point", "status"};
  for (const auto& a : spec.axes) header.push_back(a.name);
  for (const auto& m : metrics) {
    // A metric named like an axis (e.g. an axis `routing`) keeps both: the metric gets a suffix.
    const bool clash =
        std::any_of(spec.axes.begin(), spec.axes.end(), [&](const SweepAxis& a) { return a.name == m; });
    header.push_back(clash ? m + "_result" : m);
  }
  std::string out;
  auto row = [&out](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) out += ',';
      out += csvField(cells[i]);
    }
    out += '\n';
  };
  row(header);
  for (const auto& p : points) {
    const fs::path dir = fs::path(outDir) / "points" / p.id;
    std::error_code ec;
    std::vector<std::string> cells{p.id};
    json results;
    if (fs::exists(dir / "results.json", ec)) {
      results = readJson((dir / "results.json").string());
      // A run whose workload failed (a connection exhausted its retries) still writes its results.
      const json* status = at(results, {"status"});
      cells.push_back(results.is_null() || (status && *status == "failed") ? "failed" : "ok");
    } else {
      cells.push_back(fs::exists(dir / "failed.json", ec) ? "failed" : "missing");
    }
    for (const auto& l : p.labels) cells.push_back(l.second);
    if (results.is_null()) {
      cells.resize(cells.size() + metrics.size());
    } else {
      const auto v = metricValues(results);
      cells.insert(cells.end(), v.begin(), v.end());
    }
    row(cells);
  }
  ResultsFile::writeBytes((fs::path(outDir) / "summary.csv").string(), out);
}

}  // namespace fabricsim
