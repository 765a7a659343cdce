// FlatCache: a bounded map from 64-bit keys to small values, for the flow backend's lookups of
// paths and latencies that repeat (ring steps, buckets and micro-batches reuse them).
//
// Models: nothing physical. Open addressing with linear probing in one array of slots, so a
// lookup that hits usually costs one cache miss (a node-based map costs two or three: bucket,
// node, and the chain). The table doubles at half load; once it holds `maxEntries` keys, new
// keys are not stored (callers recompute them), so its memory is bounded. No erasure of single
// keys; clear() forgets them all (the routes changed).
// Units: none; a slot is the key plus the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim {

template <class Value>
class FlatCache {
 public:
  explicit FlatCache(size_t maxEntries) : maxEntries_(maxEntries) {}

  /// The value stored for `key`, or nullptr. `key` must not be kEmpty.
  const Value* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = index(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }
  Value* find(uint64_t key) { return const_cast<Value*>(static_cast<const FlatCache*>(this)->find(key)); }
  /// Stores `value` for a key not yet present; ignored once the cache is full.
  void insert(uint64_t key, const Value& value) {
    if (size_ >= maxEntries_) return;
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(key, value);
    ++size_;
  }
  size_t size() const { return size_; }
  /// Forgets every entry (keeps the memory).
  void clear() {
    for (auto& slot : slots_) slot = Slot{};
    size_ = 0;
  }
  size_t memoryBytes() const { return slots_.capacity() * sizeof(Slot); }

  static constexpr uint64_t kEmpty = UINT64_MAX;

 private:
  struct Slot {
    uint64_t key = kEmpty;
    Value value{};
  };
  size_t index(uint64_t key) const {
    uint64_t x = key + 0x9E3779B97F4A7C15ull;  // splitmix64's finaliser: keys differ in few bits
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return static_cast<size_t>(x ^ (x >> 31)) & mask_;
  }
  void place(uint64_t key, const Value& value) {
    size_t i = index(key);
    while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value};
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.key != kEmpty) place(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  size_t maxEntries_;
};

}  // namespace fabricsim
