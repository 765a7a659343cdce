#!/usr/bin/env bash
# Quick start 2: installs dependencies, builds, and runs every test: the Release build first,
# then the same tests under AddressSanitizer + UndefinedBehaviorSanitizer, then a short run of
# every libFuzzer harness (clang, ASan + UBSan; scripts/fuzz.sh: 4,000 inputs or 60 s each).
# FABRICSIM_SKIP_ASAN=1 skips the sanitizer pass and the fuzzing (for quick local iterations; CI
# runs all three).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs="${FABRICSIM_JOBS:-$(nproc)}"

echo "== Release build and tests"
scripts/build.sh release
ctest --test-dir build/release --output-on-failure -j "$jobs"

if [ "${FABRICSIM_SKIP_ASAN:-0}" != "1" ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
  scripts/build.sh asan
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build/asan --output-on-failure -j "$jobs"
  echo "== libFuzzer harnesses of every reader"
  scripts/fuzz.sh
fi
