#!/bin/bash
# Regenerates the README's and docs' figures from the scripts that print them: builds the
# Release binary the scripts run, then scripts/readme_figures.py with these arguments
# (--list, --check, PATTERN ..., --all; see its --help).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  --list | --check | -h | --help) ;;
  *) scripts/build.sh >&2 ;;
esac
exec python3 scripts/readme_figures.py "$@"
