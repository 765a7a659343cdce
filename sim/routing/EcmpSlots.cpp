#include "sim/routing/EcmpSlots.h"

#include <algorithm>
#include <numeric>

#include "sim/core/Error.h"

namespace fabricsim {

void EcmpSlots::apportion(std::span<const uint64_t> weights, uint32_t total,
                          std::span<const uint32_t> current, std::vector<uint32_t>& out) {
  const size_t n = weights.size();
  out.assign(n, 0);
  if (n == 0) return;
  unsigned __int128 sum = 0;
  for (uint64_t w : weights) sum += w;
  SIM_CHECK(sum > 0, "apportion: all weights are zero");
  std::vector<unsigned __int128> rem(n);  // numerator of each member's fractional share
  uint32_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned __int128 x = static_cast<unsigned __int128>(weights[i]) * total;
    out[i] = static_cast<uint32_t>(x / sum);
    given += out[i];
    rem[i] = x % sum;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (rem[a] != rem[b]) return rem[a] > rem[b];
    const uint32_t ca = current.empty() ? 0 : current[a], cb = current.empty() ? 0 : current[b];
    return ca > cb;
  });
  for (size_t k = 0; given < total; ++k, ++given) ++out[order[k % n]];
}

void EcmpSlots::reduce(std::span<const uint64_t> weights, uint32_t maxTotal, std::vector<uint32_t>& out) {
  uint64_t g = 0;
  for (uint64_t w : weights) g = std::gcd(g, w);
  out.assign(weights.size(), 0);
  if (g == 0) return;
  unsigned __int128 sum = 0;
  for (uint64_t w : weights) sum += w / g;
  if (sum <= maxTotal) {
    for (size_t i = 0; i < weights.size(); ++i) out[i] = static_cast<uint32_t>(weights[i] / g);
    return;
  }
  apportion(weights, maxTotal, {}, out);
  for (size_t i = 0; i < weights.size(); ++i)
    if (weights[i] > 0 && out[i] == 0) out[i] = 1;
}

void EcmpSlots::rebalance(std::span<const PortId> old, std::span<const PortId> members,
                          std::span<const uint32_t> targets, std::vector<PortId>& out) {
  SIM_CHECK(members.size() == targets.size(), "rebalance: one target per member");
  out.assign(old.begin(), old.end());
  std::vector<uint32_t> held(members.size(), 0);
  const auto indexOf = [&](PortId p) -> size_t {
    const auto it = std::lower_bound(members.begin(), members.end(), p);
    return it != members.end() && *it == p ? static_cast<size_t>(it - members.begin()) : members.size();
  };
  for (PortId& b : out) {
    const size_t m = b == kInvalid ? members.size() : indexOf(b);
    if (m < members.size() && held[m] < targets[m]) {
      ++held[m];
    } else {
      b = kInvalid;
    }
  }
  size_t m = 0;
  for (PortId& b : out) {
    if (b != kInvalid) continue;
    while (m < members.size() && held[m] >= targets[m]) ++m;
    SIM_CHECK(m < members.size(), "rebalance: targets add up to fewer buckets than the table has");
    b = members[m];
    ++held[m];
  }
}

}  // namespace fabricsim
