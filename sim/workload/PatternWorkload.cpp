#include "sim/workload/PatternWorkload.h"

#include <algorithm>
#include <numeric>

#include "sim/core/Error.h"
#include "sim/core/Rng.h"

namespace fabricsim {
namespace {
constexpr uint32_t kStartAll = 0xFFFFFFFFu;
}

PatternWorkload::PatternWorkload(Simulator& sim, Fabric& fabric, const WorkloadSpec& spec, size_t totalGpus)
    : sim_(sim), fabric_(fabric), spec_(spec.pattern), name_(spec.name) {
  const PatternSpec& p = spec_;
  const uint64_t count = p.gpus == 0 ? totalGpus - std::min<size_t>(p.firstGpu, totalGpus) : p.gpus;
  if (p.firstGpu + count > totalGpus || count < 2)
    throw InputError(spec.file, 0, 0, "gpus",
                     "the pattern needs at least 2 GPUs within the topology's " + std::to_string(totalGpus) +
                         " GPUs, found first " + std::to_string(p.firstGpu) + " count " + std::to_string(count));
  const uint32_t first = p.firstGpu;
  const uint32_t n = static_cast<uint32_t>(count);
  switch (p.pattern) {
    case PatternKind::Permutation: {
      // Seeded random derangement: shuffle until no GPU maps to itself (expected e tries).
      Rng rng = Rng::stream(sim.seed(), "pattern/permutation/" + name_);
      std::vector<uint32_t> perm(n);
      for (;;) {
        std::iota(perm.begin(), perm.end(), 0u);
        for (uint32_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
        bool fixed = false;
        for (uint32_t i = 0; i < n && !fixed; ++i) fixed = perm[i] == i;
        if (!fixed) break;
      }
      for (uint32_t i = 0; i < n; ++i) pairs_.emplace_back(first + i, first + perm[i]);
      break;
    }
    case PatternKind::Incast: {
      const uint32_t recv = p.incastReceiver;
      if (recv < first || recv >= first + n)
        throw InputError(spec.file, 0, 0, "incast.receiver",
                         "expected a GPU rank in [" + std::to_string(first) + ", " + std::to_string(first + n) +
                             "), found " + std::to_string(recv));
      const uint32_t senders = p.incastSenders == 0 ? n - 1 : static_cast<uint32_t>(p.incastSenders);
      if (senders > n - 1)
        throw InputError(spec.file, 0, 0, "incast.senders",
                         "expected at most " + std::to_string(n - 1) + " senders, found " + std::to_string(senders));
      for (uint32_t g = first; g < first + n && pairs_.size() < senders; ++g)
        if (g != recv) pairs_.emplace_back(g, recv);
      break;
    }
    case PatternKind::AllToAll:
      // Each GPU starts with the peer after it, so that receivers are spread at every instant.
      for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = 1; k < n; ++k) pairs_.emplace_back(first + i, first + (i + k) % n);
      break;
  }
  sent_.assign(pairs_.size(), 0);
}

void PatternWorkload::start(Time origin) {
  started_ = true;
  origin_ = origin;
  outstanding_ = pairs_.size() * static_cast<uint64_t>(spec_.repetitions);
  requested_ = static_cast<Bytes>(outstanding_) * spec_.messageSize;
  sim_.schedule(origin + spec_.start, this, kStartAll);
}

void PatternWorkload::post(uint32_t pair) {
  const int rep = sent_[pair]++;
  TransferRequest r;
  r.srcGpu = pairs_[pair].first;
  r.dstGpu = pairs_[pair].second;
  r.bytes = spec_.messageSize;
  r.trafficClass = static_cast<uint8_t>(spec_.trafficClass);
  r.qp = static_cast<uint16_t>(rep % spec_.qpsPerPair);
  r.tag = pair;
  fabric_.send(r, this);
}

void PatternWorkload::onEvent(uint32_t tag) {
  if (tag == kStartAll) {
    for (uint32_t i = 0; i < pairs_.size(); ++i) post(i);
  } else {
    post(tag);
  }
}

void PatternWorkload::onTransferDelivered(uint64_t tag, Time when) {
  const auto pair = static_cast<uint32_t>(tag);
  --outstanding_;
  delivered_ += spec_.messageSize;
  if (outstanding_ == 0) finish_ = when;
  if (sent_[pair] < spec_.repetitions) {
    if (spec_.gap == Time::zero()) post(pair);
    else sim_.schedule(when + spec_.gap, this, pair);
  }
}

}  // namespace fabricsim
