#!/usr/bin/env bash
# Installs every build, test and tooling dependency of fabricsim from Debian packages.
# Safe to re-run: packages already present are skipped without touching the network.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git time
  libboost-graph-dev libboost-program-options-dev
  libyaml-cpp-dev nlohmann-json3-dev
  libceres-dev
  libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-matplotlib
  openmpi-bin libopenmpi-dev
  clang-format
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
