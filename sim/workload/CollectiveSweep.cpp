#include "sim/workload/CollectiveSweep.h"

#include <algorithm>
#include <cmath>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {

CollectiveSweep::CollectiveSweep(Simulator& sim, Fabric& fabric, const WorkloadSpec& spec, std::vector<uint32_t> gpus,
                                 int gpusPerHost)
    : sim_(sim),
      spec_(spec),
      name_(spec.name),
      gpus_(std::move(gpus)),
      engine_(sim, fabric, spec.tuning, gpusPerHost) {
  sizes_ = sizes(spec_.collective, gpus_.size());
  if (sizes_.empty())
    throw InputError(spec_.file, 0, 0, "sizes",
                     "no size in the range holds a whole element per rank (" + std::to_string(gpus_.size()) +
                         " ranks, " + std::to_string(spec_.collective.elementBytes) + "-byte elements)");
  if (spec_.collective.op == CollectiveOp::Broadcast && spec_.collective.root >= gpus_.size())
    throw InputError(spec_.file, 0, 0, "root",
                     "expected a rank below " + std::to_string(gpus_.size()) + ", found " +
                         std::to_string(spec_.collective.root));
  const int calls = spec_.collective.warmup + spec_.collective.iterations;
  for (const auto& s : sizes_) requested_ += s.first * static_cast<Bytes>(calls);
}

std::vector<std::pair<Bytes, uint64_t>> CollectiveSweep::sizes(const CollectiveSweepSpec& c, size_t ranks) {
  std::vector<std::pair<Bytes, uint64_t>> out;
  const auto e = static_cast<Bytes>(std::max(1, c.elementBytes));
  const auto n = static_cast<Bytes>(std::max<size_t>(1, ranks));
  const bool perRank = c.op == CollectiveOp::AllGather || c.op == CollectiveOp::ReduceScatter ||
                       c.op == CollectiveOp::AllToAll;
  // nccl-tests aligns per-rank counts of the gathered/scattered ops to 16 bytes.
  const Bytes align = std::max<Bytes>(1, 16 / e);
  Bytes prev = -1;
  for (Bytes s = c.minBytes; s <= c.maxBytes;) {
    Bytes size;
    uint64_t count;
    if (perRank) {
      Bytes per = s / e / n;
      if (c.op != CollectiveOp::AllToAll) per -= per % align;
      size = per * e * n;
      count = static_cast<uint64_t>(per);
    } else {
      count = static_cast<uint64_t>(s / e);
      size = static_cast<Bytes>(count) * e;
    }
    if (size > 0 && size != prev) out.push_back({size, count});
    prev = size;
    // In doubles: the step past the largest size may not fit in 64 bits.
    const double next = std::max(c.stepBytes > 0 ? static_cast<double>(s) + static_cast<double>(c.stepBytes)
                                                 : std::round(static_cast<double>(s) * c.factor),
                                 static_cast<double>(s) + 1);
    if (next > static_cast<double>(c.maxBytes) || next >= 0x1p63) break;
    s = static_cast<Bytes>(next);
  }
  return out;
}

void CollectiveSweep::start(Time origin) {
  origin_ = origin;
  sim_.schedule(origin_ + spec_.start, this, 0);
}

void CollectiveSweep::onEvent(uint32_t) { issue(); }

void CollectiveSweep::issue() {
  const auto& c = spec_.collective;
  if (call_ == c.warmup) timedStart_ = sim_.now();
  CollectiveCall call;
  call.op = c.op;
  call.algorithm = spec_.tuning.algorithm;
  call.gpus = gpus_;
  call.bytes = sizes_[sizeIndex_].first;
  call.root = c.root;
  engine_.start(call, this, sizeIndex_);
}

void CollectiveSweep::onCollectiveDone(uint64_t, Time when) {
  const auto& c = spec_.collective;
  delivered_ += sizes_[sizeIndex_].first;
  ++call_;
  if (call_ == c.warmup + c.iterations) {
    CollectiveSweepRow row;
    row.size = sizes_[sizeIndex_].first;
    row.count = sizes_[sizeIndex_].second;
    row.time = (when - timedStart_) / c.iterations;
    const double seconds = row.time.seconds();
    row.algbwGBps = seconds > 0 ? static_cast<double>(row.size) / seconds * 1e-9 : 0.0;
    row.busbwGBps = row.algbwGBps * CollectiveEngine::busBandwidthFactor(c.op, gpus_.size());
    CollectiveCall probe;
    probe.op = c.op;
    probe.algorithm = spec_.tuning.algorithm;
    probe.gpus = gpus_;
    probe.bytes = row.size;
    row.algorithm = engine_.resolve(probe);
    row.protocol = engine_.protocolFor(probe, row.algorithm);
    row.ncclModelUs = engine_.ncclTimeUs(probe, row.algorithm, row.protocol);
    rows_.push_back(row);
    call_ = 0;
    if (++sizeIndex_ == sizes_.size()) {
      finished_ = true;
      finish_ = when;
      return;
    }
  }
  // The next call is issued from an event, not from inside the completion callback.
  sim_.schedule(when, this, 0);
}

double CollectiveSweep::averageBusBandwidth() const {
  if (rows_.empty()) return 0;
  double sum = 0;
  for (const auto& r : rows_) sum += r.busbwGBps;
  return sum / static_cast<double>(rows_.size());
}

void CollectiveSweep::printTable(std::FILE* out) const {
  const auto& c = spec_.collective;
  const bool reduces = c.op == CollectiveOp::AllReduce || c.op == CollectiveOp::ReduceScatter;
  std::fprintf(out, "# nccl-tests-style %s, %zu ranks, %s, algorithm %s (simulated; in-place = out-of-place)\n",
               toString(c.op), gpus_.size(), c.dataType.c_str(),
               rows_.empty() ? toString(spec_.tuning.algorithm) : toString(rows_.front().algorithm));
  std::fprintf(out, "#%75s%35s\n", "out-of-place", "in-place");
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type",
               "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "",
               "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  for (const auto& r : rows_) {
    const int root = c.op == CollectiveOp::Broadcast ? static_cast<int>(c.root) : -1;
    std::fprintf(out, "%12lld  %12llu  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6d  %7.2f  %6.2f  %6.2f  %6d\n",
                 static_cast<long long>(r.size), static_cast<unsigned long long>(r.count), c.dataType.c_str(),
                 reduces ? "sum" : "none", root, r.time.micros(), r.algbwGBps, r.busbwGBps, 0, r.time.micros(),
                 r.algbwGBps, r.busbwGBps, 0);
  }
  std::fprintf(out, "# Out of bounds values : 0 OK\n");
  std::fprintf(out, "# Avg bus bandwidth    : %g \n", averageBusBandwidth());
}

}  // namespace fabricsim
