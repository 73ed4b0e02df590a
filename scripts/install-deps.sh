#!/usr/bin/env bash
# Installs Denpex's build and test dependencies from Debian 12 packages.
# Idempotent: does nothing (and needs no network) when every package is already installed.
#
#   scripts/install-deps.sh                   # build + test dependencies
#   scripts/install-deps.sh --with-services   # also what the whole test suite drives for real:
#                                             # PyTorch, Slurm, munge and Open MPI (`denpex run` e2e tests;
#                                             # scripts/services.sh starts Slurm) and chromium
#                                             # (the HTML report is rendered headless)
#   scripts/install-deps.sh --print [--with-services]   # list the packages and exit
set -euo pipefail

packages=(
  g++ cmake ninja-build
  protobuf-compiler libprotobuf-dev
  libboost-graph-dev libtbb-dev libcli11-dev
  libgtest-dev libgmock-dev catch2
  zlib1g-dev liblzma-dev libzstd-dev
  git clang-format  # the format check (scripts/check-format.sh)
  dpkg-dev file man-db zsh  # the package tests: cpack's dpkg-shlibdeps, man -l, zsh -n
)
service_packages=(
  python3-torch python3-numpy
  slurmctld slurmd slurm-client munge
  openmpi-bin  # `denpex run` under a real mpirun
  util-linux procps
  iproute2  # network namespaces and tc for the preflight --fabric e2e tests
  chromium
)

print=0
services=0
for arg in "$@"; do
  case "$arg" in
    --print) print=1 ;;
    --with-services) services=1 ;;
    *) echo "usage: scripts/install-deps.sh [--with-services] [--print]" >&2; exit 2 ;;
  esac
done
if ((services)); then packages+=("${service_packages[@]}"); fi

if ((print)); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
"${sudo[@]}" apt-get update -qq
# The slurm and munge packages start their services from their maintainer scripts; the
# tests start their own (scripts/services.sh), so keep the packages from starting any.
policy=/usr/sbin/policy-rc.d
created_policy=0
if ((services)) && [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod +x "$policy"
  created_policy=1
fi
status=0
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || status=$?
if ((created_policy)); then "${sudo[@]}" rm -f "$policy"; fi
exit "$status"
