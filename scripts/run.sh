#!/usr/bin/env bash
# Quick start 1: installs dependencies, builds (Release) and runs the default scenario.
# Extra arguments go to `fabricsim run`; with none, it runs topologies/default.yaml.
#   scripts/run.sh                                   # default scenario
#   scripts/run.sh topologies/fat-tree-k8-100g.yaml --out results.json
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release fabricsim >&2
if [ $# -eq 0 ]; then
  set -- topologies/default.yaml
fi
exec build/release/fabricsim run "$@"
