// LiveHeap: the bytes this process holds on the heap through operator new, now and at their
// peak since the last resetPeak(), and the number of allocations made, counted by replacing the global
// operator new and delete in the memory_tests executable only (tests/memory/LiveHeap.cpp).
//
// Models: each allocation counts its usable size (malloc_usable_size) when made and when freed,
// so the figures are exact for everything C++ containers and objects allocate; deterministic
// for a deterministic program (no timing, no page-level RSS).
// Leaves out: memory from malloc called directly (C libraries), over-aligned operator new,
// thread stacks, code and static data.
// Units: bytes.
#pragma once

#include <cstddef>

namespace fabricsim::testsupport {

class LiveHeap {
 public:
  static size_t live();
  static size_t peak();
  /// Starts a new peak from the bytes live now.
  static void resetPeak();
  /// Calls of operator new (every form counted here) since the process started.
  static size_t allocations();
};

}  // namespace fabricsim::testsupport
