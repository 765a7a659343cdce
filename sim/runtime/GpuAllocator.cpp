#include "sim/runtime/GpuAllocator.h"

#include <algorithm>
#include <numeric>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {

GpuAllocator::GpuAllocator(size_t gpus, int gpusPerHost, uint64_t seed)
    : gpus_(gpus),
      gpusPerHost_(std::max(1, gpusPerHost)),
      taken_(gpus, 0),
      rng_(Rng::stream(seed, "placement")) {}

size_t GpuAllocator::freeGpus() const {
  return static_cast<size_t>(std::count(taken_.begin(), taken_.end(), 0));
}

void GpuAllocator::reserve(const std::vector<uint32_t>& gpus, const std::string& file) {
  for (uint32_t g : gpus) {
    if (g >= gpus_)
      throw InputError(
          file, 0, 0, "placement",
          "GPU " + std::to_string(g) + " does not exist (the fabric has " + std::to_string(gpus_) + ")");
    if (taken_[g])
      throw InputError(file, 0, 0, "placement",
                       "GPU " + std::to_string(g) + " is already used by another job");
    taken_[g] = 1;
  }
}

std::vector<uint32_t> GpuAllocator::railAlignedOrder(const ParallelLayout& l, int gph) {
  const uint32_t ranks = static_cast<uint32_t>(l.tp * l.dp * l.pp);
  std::vector<uint32_t> pos(ranks);
  std::iota(pos.begin(), pos.end(), 0u);
  if (l.tp > gph || gph % l.tp != 0) return pos;
  const int k = gph / l.tp;  // TP groups per host
  if (l.pp % k != 0) {
    // Cannot fill hosts with stages of one replica: keep Megatron's order (DP peers share a
    // host when tp < gpusPerHost).
    return pos;
  }
  for (uint32_t r = 0; r < ranks; ++r) {
    const int t = static_cast<int>(r) % l.tp;
    const int d = (static_cast<int>(r) / l.tp) % l.dp;
    const int p = static_cast<int>(r) / (l.tp * l.dp);
    const int hostBlock = d + l.dp * (p / k);
    const int slot = t + l.tp * (p % k);
    pos[r] = static_cast<uint32_t>(hostBlock * gph + slot);
  }
  return pos;
}

std::vector<uint32_t> GpuAllocator::allocate(const PlacementSpec& placement, uint32_t ranks,
                                             const ParallelLayout* layout, const std::string& file) {
  const uint32_t gph = static_cast<uint32_t>(gpusPerHost_);
  const size_t hosts = gpus_ / gph;
  const uint32_t needHosts = (ranks + gph - 1) / gph;
  auto hostFree = [&](size_t h) {
    for (uint32_t g = 0; g < gph; ++g)
      if (taken_[h * gph + g]) return false;
    return true;
  };
  auto fail = [&](const std::string& what) -> std::vector<uint32_t> {
    throw InputError(file, 0, 0, "placement", what);
  };
  std::vector<uint32_t> pool;  // GPUs handed to the job, host-major
  if (placement.explicitRange) {
    const uint64_t end = static_cast<uint64_t>(placement.firstGpu) + ranks;
    if (end > gpus_)
      fail("GPUs " + std::to_string(placement.firstGpu) + ".." + std::to_string(end - 1) +
           " do not exist (the fabric has " + std::to_string(gpus_) + " GPUs)");
    for (uint64_t g = placement.firstGpu; g < end; ++g) {
      if (taken_[g])
        fail("GPU " + std::to_string(g) + " of the range starting at first_gpu " +
             std::to_string(placement.firstGpu) + " is already used by another job");
      pool.push_back(static_cast<uint32_t>(g));
    }
  } else if (placement.policy == PlacementPolicy::Random) {
    std::vector<uint32_t> freeList;
    for (uint32_t g = 0; g < gpus_; ++g)
      if (!taken_[g]) freeList.push_back(g);
    if (freeList.size() < ranks)
      fail("the job needs " + std::to_string(ranks) + " GPUs, " + std::to_string(freeList.size()) +
           " are free");
    for (uint32_t i = 0; i < ranks; ++i) {
      const uint64_t j = i + rng_.below(freeList.size() - i);
      std::swap(freeList[i], freeList[j]);
      pool.push_back(freeList[i]);
    }
  } else {
    std::vector<size_t> freeHosts;
    for (size_t h = 0; h < hosts; ++h)
      if (hostFree(h)) freeHosts.push_back(h);
    if (freeHosts.size() < needHosts)
      fail("the job needs " + std::to_string(needHosts) + " whole hosts (" + std::to_string(ranks) +
           " GPUs), " + std::to_string(freeHosts.size()) + " are free");
    std::vector<size_t> chosen;
    if (placement.policy == PlacementPolicy::RandomHosts) {
      for (uint32_t i = 0; i < needHosts; ++i) {
        const uint64_t j = i + rng_.below(freeHosts.size() - i);
        std::swap(freeHosts[i], freeHosts[j]);
        chosen.push_back(freeHosts[i]);
      }
    } else {
      // First run of consecutive free hosts long enough, else the first free hosts.
      for (size_t i = 0; i + needHosts <= freeHosts.size() && chosen.empty(); ++i)
        if (freeHosts[i + needHosts - 1] - freeHosts[i] == needHosts - 1)
          chosen.assign(freeHosts.begin() + static_cast<long>(i),
                        freeHosts.begin() + static_cast<long>(i + needHosts));
      if (chosen.empty()) chosen.assign(freeHosts.begin(), freeHosts.begin() + needHosts);
    }
    for (size_t h : chosen)
      for (uint32_t g = 0; g < gph && pool.size() < ranks; ++g)
        pool.push_back(static_cast<uint32_t>(h * gph + g));
  }
  std::vector<uint32_t> gpus(ranks);
  std::vector<uint32_t> order(ranks);
  std::iota(order.begin(), order.end(), 0u);
  if (layout && placement.policy != PlacementPolicy::Random && placement.policy != PlacementPolicy::InOrder &&
      static_cast<uint32_t>(layout->tp * layout->dp * layout->pp) == ranks)
    order = railAlignedOrder(*layout, gpusPerHost_);
  for (uint32_t r = 0; r < ranks; ++r) gpus[r] = pool[order[r]];
  for (uint32_t g : gpus) taken_[g] = 1;
  return gpus;
}

}  // namespace fabricsim
