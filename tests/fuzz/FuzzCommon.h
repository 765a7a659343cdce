// What every fuzz harness asserts: a reader given any bytes either returns or throws InputError
// (a file:line message, exit 2 in the CLI). Any other exception is a defect (a raw library
// message, exit 1), and so are crashes, hangs and runaway memory, which libFuzzer and the
// sanitizers report themselves.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sim/core/Error.h"

namespace fabricsim::fuzz {

template <class Fn>
void expectOnlyInputErrors(Fn&& fn) {
  try {
    fn();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: a reader threw something other than InputError: %s\n", e.what());
    std::abort();
  }
}

}  // namespace fabricsim::fuzz
