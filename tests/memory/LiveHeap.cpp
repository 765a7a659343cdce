// The global operator new and delete of the memory_tests executable, counting live bytes for
// LiveHeap.
#include "tests/memory/LiveHeap.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<size_t> liveBytes{0};
std::atomic<size_t> peakBytes{0};
std::atomic<size_t> allocationCount{0};

void* allocate(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (!p) throw std::bad_alloc();
  allocationCount.fetch_add(1, std::memory_order_relaxed);
  const size_t now =
      liveBytes.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) + malloc_usable_size(p);
  size_t peak = peakBytes.load(std::memory_order_relaxed);
  while (now > peak && !peakBytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p;
}

void release(void* p) noexcept {
  if (!p) return;
  liveBytes.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

void* operator new(size_t n) {
  return allocate(n);
}
void* operator new[](size_t n) {
  return allocate(n);
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept {
  release(p);
}
void operator delete[](void* p) noexcept {
  release(p);
}
void operator delete(void* p, size_t) noexcept {
  release(p);
}
void operator delete[](void* p, size_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release(p);
}

namespace fabricsim::testsupport {

size_t LiveHeap::live() {
  return liveBytes.load();
}
size_t LiveHeap::peak() {
  return peakBytes.load();
}
size_t LiveHeap::allocations() {
  return allocationCount.load();
}
void LiveHeap::resetPeak() {
  peakBytes.store(liveBytes.load());
}

}  // namespace fabricsim::testsupport
