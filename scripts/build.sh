#!/usr/bin/env bash
# Configures and builds fabricsim. Usage: scripts/build.sh [release|asan] (default release).
# Build trees: build/release and build/asan (AddressSanitizer + UndefinedBehaviorSanitizer).
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${1:-release}"
jobs="${FABRICSIM_JOBS:-$(nproc)}"
case "$flavour" in
  release) dir=build/release; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  # -O1 -g1: line tables are enough for sanitizer stack traces, and the build is about a third
  # faster than -O2 -g on CI's two cores (most of the suite's wall time is compilation).
  asan) dir=build/asan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
                              -DFABRICSIM_SANITIZE=ON -DFABRICSIM_BENCH=OFF) ;;
  *) echo "usage: scripts/build.sh [release|asan]" >&2; exit 2 ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
fi
ninja -C "$dir" -j "$jobs" "${@:2}"
