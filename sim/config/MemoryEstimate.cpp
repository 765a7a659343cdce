#include "sim/config/MemoryEstimate.h"

#include <algorithm>
#include <cstdio>

namespace fabricsim {
namespace {

// Peak RSS fitted by scripts/memory_model.py (least squares over its "fit" runs; 2026-11-29,
// 2 vCPU AMD EPYC, g++ 12 Release). Every figure is bytes.
struct Coefficients {
  double base;      ///< the process before any fabric: binary, libraries, allocator arenas
  double perCable;  ///< one cable: two ports, their queues, counters, routes through them
  double perRank;   ///< one rank of a job: its program or trace, communicators, transfers in flight
};
constexpr Coefficients kPacket{12.44e6, 3296, 16.8e3};
constexpr Coefficients kFlow{12.45e6, 918, 4726};

int64_t clampRanks(int64_t r, int64_t fabricGpus) {
  return r <= 0 ? fabricGpus : std::min(r, fabricGpus);
}

}  // namespace

int64_t estimatedRanks(const WorkloadSpec& w, const TopologySize& fabric) {
  const int64_t fabricGpus = fabric.gpus;
  if (w.kind == "training") {
    const auto& p = w.training.parallelism;
    int64_t r = 1;
    for (int64_t f : {int64_t{p.tp}, int64_t{p.cp}, int64_t{p.ep}, int64_t{p.dp}, int64_t{p.pp}}) {
      if (f <= 0 || __builtin_mul_overflow(r, f, &r)) return fabricGpus;
      r = std::min(r, fabricGpus);
    }
    return clampRanks(r, fabricGpus);
  }
  if (w.kind == "collective") {
    const auto& c = w.collective;
    if (c.hosts > 0) {
      const int64_t perHost = c.gpusPerHost > 0  ? c.gpusPerHost
                              : fabric.hosts > 0 ? fabric.gpus / fabric.hosts
                                                 : 1;
      return clampRanks(int64_t{c.hosts} * perHost, fabricGpus);
    }
    return clampRanks(c.ranks, fabricGpus);
  }
  if (w.kind == "pattern") return clampRanks(w.pattern.gpus, fabricGpus);
  if (w.kind == "chakra") return clampRanks(w.chakra.ranks, fabricGpus);
  return fabricGpus;
}

bool runsPrograms(const WorkloadSpec& w) {
  return w.kind != "pattern";
}

MemoryEstimate estimateMemory(const TopologySize& size, std::string_view backend, int64_t ranks, int copies) {
  // The hybrid backend is flow-level runs (the main one and each replica at once, each with its
  // own fabric and jobs) sharing one cache of episode outcomes: the flow figures, `copies` times.
  const Coefficients& c = backend == "packet" ? kPacket : kFlow;
  const double n = std::max(1, copies);
  MemoryEstimate e;
  e.fabricBytes = c.base + n * c.perCable * static_cast<double>(size.links);
  e.workloadBytes = n * c.perRank * static_cast<double>(std::max<int64_t>(ranks, 0));
  return e;
}

std::string formatMemory(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof buf,
                  bytes < 10    ? "%.2f %s"
                  : bytes < 100 ? "%.1f %s"
                                : "%.0f %s",
                  bytes, kUnits[u]);
  return buf;
}

}  // namespace fabricsim
