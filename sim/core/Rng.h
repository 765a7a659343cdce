// Rng: a seeded pseudo-random generator (xoshiro256**) with independent named streams.
//
// Models: reproducible randomness. Every component draws from its own stream, derived from
// the run's seed and a stream id with splitmix64, so adding a component or drawing more
// numbers in one place never shifts the numbers another component sees.
// Leaves out: cryptographic quality.
// Satisfies the UniformRandomBitGenerator concept, so <random> distributions accept it.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace fabricsim {

class Rng {
 public:
  using result_type = uint64_t;
  explicit Rng(uint64_t seed = 1) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : s_) s = splitmix64(x);
  }

  /// An independent generator for stream `id` of the run seeded with `seed`.
  static Rng stream(uint64_t seed, uint64_t id) {
    uint64_t x = seed ^ (0x9E3779B97F4A7C15ULL * (id + 1));
    return Rng(splitmix64(x));
  }
  /// Stream ids from names, so call sites read Rng::stream(seed, "permutation").
  static constexpr uint64_t streamId(std::string_view name) {
    uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (char c : name) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ULL;
    }
    return h;
  }
  static Rng stream(uint64_t seed, std::string_view name) { return stream(seed, streamId(name)); }

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform integer in [0, n), unbiased (Lemire's method). n > 0.
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>((*this)()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>((*this)()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  /// Uniform double in [0, 1).
  double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

  static constexpr uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace fabricsim
