#!/bin/bash
# The packet engine's benchmark (issue 22): builds the Release binary, then runs the fat-tree
# permutations of 2 MB flows (k=8, 16, 32 by default; PFC off and on) and prints wall time, peak
# RSS, events, events/s, ns/event, packet-hops, packet-hops/s, pending events, packets in flight,
# memory per packet in flight and per link (scripts/perf_permutations.py, whose help says how
# each is measured). Usage: scripts/bench-packet.sh [--k 8,16,32] [--runs N] [--baseline BINARY]
# The micro-benchmarks of the scheduler and the forwarding path are tests/bench (fabricsim_bench).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh release fabricsim >&2
FABRICSIM_BENCH_ENTRY=scripts/bench-packet.sh exec python3 scripts/perf_permutations.py "$@"
