#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang (ASan + UBSan) in build/fuzz and runs
# each on a seed corpus made of the repository's own inputs, with a fixed seed, for a number of
# inputs or a time, whichever ends first (the same run every time when the count ends it). A crash, hang (> 30 s per input), runaway memory, or an
# exception other than InputError fails it; the input that did is left in build/fuzz/artifacts/.
# Usage: scripts/fuzz.sh [RUNS [SECONDS]]   (defaults: 4000 inputs, 60 s per harness; also
# FABRICSIM_FUZZ_RUNS, FABRICSIM_FUZZ_SECONDS)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-${FABRICSIM_FUZZ_RUNS:-4000}}"
seconds="${2:-${FABRICSIM_FUZZ_SECONDS:-60}}"
jobs="${FABRICSIM_JOBS:-$(nproc)}"
dir=build/fuzz
if [ ! -f "$dir/build.ninja" ]; then
  CXX=clang++-14 CC=clang-14 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DFABRICSIM_FUZZ=ON -DFABRICSIM_TESTS=OFF \
    -DFABRICSIM_BENCH=OFF -DFABRICSIM_GPU=OFF >/dev/null
fi
harnesses=(FuzzTopology FuzzWorkload FuzzSweep FuzzSetOverride FuzzTrace FuzzNcclTests)
ninja -C "$dir" -j "$jobs" "${harnesses[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed() {  # seed NAME FILES...: the corpus of harness NAME
  mkdir -p "$work/$1"
  local name=$1
  shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$work/$name/$(echo "$f" | tr / _)"; done
  return 0
}
seed FuzzTopology topologies/*.yaml validation/cases/*.yaml
seed FuzzWorkload workloads/*.yaml
seed FuzzSweep sweeps/*.yaml
seed FuzzTrace workloads/*.json
seed FuzzNcclTests tests/fuzz/corpus/nccl-tests/* validation/data/gpu-harness-*/collectives-*.txt
mkdir -p "$work/FuzzSetOverride"
i=0
for a in links.latency=2us 'switch.ecn={kmin: 100KiB, kmax: 400KiB, pmax: 0.2}' topology.leaves=8 \
         routing.algorithm=adaptive hosts.gpus_per_host=4; do
  { echo "$a"; cat topologies/leafspine-16.yaml; } > "$work/FuzzSetOverride/seed$i"
  i=$((i + 1))
done

mkdir -p "$dir/artifacts"
status=0
for h in "${harnesses[@]}"; do
  echo "fuzz: $h, $runs inputs or $seconds s" >&2
  if ! "$dir/tests/fuzz/$h" "$work/$h" -seed=1 -runs="$runs" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
      -max_len=16384 -artifact_prefix="$dir/artifacts/$h-" -print_final_stats=1 > "$work/$h.log" 2>&1; then
    echo "fuzz: $h FAILED; its log:" >&2
    tail -40 "$work/$h.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$h.log" | tr '\n' ' ' >&2
    echo >&2
  fi
done
exit $status
