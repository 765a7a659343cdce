#!/bin/bash
# The packet engine's benchmark (issue 22): builds the Release binary, then runs the fat-tree
# permutations of 2 MB flows (k=8, 16, 32 by default; PFC off and on) and prints wall time, peak
# RSS, events, events/s, ns/event, packet-hops, packet-hops/s, pending events, packets in flight,
# memory per packet in flight and per link (scripts/perf_permutations.py, whose help says how
# each is measured).
# Usage: scripts/bench-packet.sh [--k 8,16,32] [--runs N] [--baseline BINARY | --baseline-commit REV]
# --baseline-commit builds REV's Release binary once, in a git worktree under build/baseline-REV,
# and runs it alternately with this tree's (the README's tables compare with 08a5693, the engine
# before issue 22).
# The micro-benchmarks of the scheduler and the forwarding path are tests/bench (fabricsim_bench).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh release fabricsim >&2
args=()
baseline_name=""
command="scripts/bench-packet.sh $*"
while [[ $# -gt 0 ]]; do
  if [[ $1 == --baseline-commit ]]; then
    rev=${2:?--baseline-commit needs a revision}
    tree=build/baseline-$rev
    if [[ ! -x $tree/build/fabricsim ]]; then
      [[ -d $tree ]] || git worktree add --detach "$tree" "$rev" >&2
      cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
      cmake --build "$tree/build" --target fabricsim >&2
    fi
    args+=(--baseline "$tree/build/fabricsim")
    baseline_name=$rev
    shift 2
  else
    args+=("$1")
    shift
  fi
done
FABRICSIM_BENCH_COMMAND=$command FABRICSIM_BASELINE_NAME=$baseline_name exec python3 scripts/perf_permutations.py "${args[@]}"
