#!/usr/bin/env bash
# The two set-up commands of the README, on a fresh Debian 12 machine:
#
#   ./bootstrap.sh demo   install dependencies, build, and run the embedded default incident
#                         (4,096 ranks, one rank SIGKILLed): simulate -> diagnose -> score
#   ./bootstrap.sh test   install dependencies, build, and run the whole test suite (CI runs this)
#
# BUILD_DIR (default: build) and JOBS (default: 2) can be set in the environment.
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-}"
build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-2}"

case "$mode" in
  demo|test) ;;
  *) echo "usage: ./bootstrap.sh demo|test" >&2; exit 2 ;;
esac

scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDENPEX_BUILD_TESTS="$([[ $mode == test ]] && echo ON || echo OFF)" \
  -DDENPEX_WERROR="${CI:+ON}" >/dev/null
cmake --build "$build_dir" -j "$jobs"

if [[ $mode == demo ]]; then
  exec "$build_dir/cli/denpex" demo --out "$build_dir/demo"
fi
ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure
