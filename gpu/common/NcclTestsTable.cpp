#include "gpu/common/NcclTestsTable.h"

#include <cstdio>

namespace fabricsim::gpu {
namespace {

std::string format(const char* fmt, auto... args) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string measurementText(const CollectiveMeasurement& m) {
  const std::string wrong = m.wrong ? std::to_string(*m.wrong) : std::string("N/A");
  return format("  %7s  %6.2f  %6.2f  %5s", NcclTestsTable::formatTime(m.timeUs).c_str(), m.algBwGBps,
                m.busBwGBps, wrong.c_str());
}

}  // namespace

std::string NcclTestsTable::programName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce_perf";
    case Collective::kAllGather:
      return "all_gather_perf";
    case Collective::kReduceScatter:
      return "reduce_scatter_perf";
    case Collective::kAllToAll:
      return "alltoall_perf";
    case Collective::kBroadcast:
      return "broadcast_perf";
    case Collective::kSendRecv:
      return "sendrecv_perf";
  }
  return "?";
}

std::string NcclTestsTable::formatTime(double us) {
  if (us >= 10000.0) return format("%7.0f", us);
  if (us >= 100.0) return format("%7.1f", us);
  return format("%7.2f", us);
}

void NcclTestsTable::writePreamble(std::ostream& os, const CollectiveSweepParams& p,
                                   const std::vector<RankDevice>& devices) {
  os << "# Collective test starting: " << programName(p.collective) << "\n";
  const bool factor = p.stepFactor > 1;
  os << format(
      "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d agg "
      "iters: %d validation: %d graph: %d\n",
      1, p.gpusPerProcess, static_cast<long>(p.minBytes), static_cast<long>(p.maxBytes),
      static_cast<long>(factor ? p.stepFactor : p.stepBytes), factor ? "factor" : "bytes", p.warmupIters,
      p.iters, 1, p.checkIters, 0);
  os << "#\n# Using devices\n";
  for (const auto& d : devices)
    os << format("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s\n", d.rank, d.group, d.pid,
                 d.host.c_str(), d.device, d.pciBusId, d.name.c_str());
  os << "#\n";
  os << format(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
      "", "", "");
  os << format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type",
               "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  os << format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)",
               "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

void NcclTestsTable::writeRow(std::ostream& os, const CollectiveSweepParams& p, const CollectiveRow& row) {
  const std::string redop = isReduction(p.collective) ? std::string(reduceOpName(p.op)) : std::string("none");
  const int root = hasRoot(p.collective) ? p.root : -1;
  os << format("%12li  %12li  %8s  %6s  %6i", static_cast<long>(row.bytes), static_cast<long>(row.count),
               std::string(dataTypeName(p.type)).c_str(), redop.c_str(), root);
  os << measurementText(row.outOfPlace) << measurementText(row.inPlace) << "\n";
}

double NcclTestsTable::averageBusBandwidth(const std::vector<CollectiveRow>& rows) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const auto& r : rows) sum += r.outOfPlace.busBwGBps + r.inPlace.busBwGBps;
  return sum / static_cast<double>(2 * rows.size());
}

int NcclTestsTable::failedChecks(const std::vector<CollectiveRow>& rows) {
  int n = 0;
  for (const auto& r : rows) n += (r.outOfPlace.wrong.value_or(0) != 0) + (r.inPlace.wrong.value_or(0) != 0);
  return n;
}

void NcclTestsTable::writeFooter(std::ostream& os, const std::vector<CollectiveRow>& rows) {
  const int errors = failedChecks(rows);
  os << format("# Out of bounds values : %d %s\n", errors, errors ? "FAILED" : "OK");
  os << format("# Avg bus bandwidth    : %g \n", averageBusBandwidth(rows));
  os << "#\n";
}

}  // namespace fabricsim::gpu
