#!/usr/bin/env bash
# A release build of denpex optimised with a profile of its own runs (GCC's profile-guided
# optimisation; CMake's DENPEX_PGO): the parse and the analysis are branchy code whose hot paths
# the compiler cannot see, and the profile lays them out and inlines along them
# (docs/benchmarks.md, "Profile-guided build").
#
#   scripts/build-pgo.sh [BUILD_DIR [CMAKE_ARGS...]]    (default build-pgo; JOBS=2)
#
# 1. builds an instrumented denpex in BUILD_DIR (DENPEX_PGO=generate);
# 2. runs it where users run it: `diagnose` of a simulated 16,384-rank incident (250 MB, under
#    $TMPDIR, removed after), `eval` of the gate suite in every collection shape, and `diagnose`
#    (text and JSON) of every frozen incident of corpora/;
# 3. builds again in the same folder with that profile (DENPEX_PGO=use).
# The result is an ordinary build folder: install or package it as README.md says.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-pgo}"
shift || true
jobs="${JOBS:-2}"
profile="$(realpath -m "$dir")/pgo-profile"

rm -rf "$profile"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENPEX_BUILD_TESTS=OFF \
  -DDENPEX_PGO=generate -DDENPEX_PGO_DIR="$profile" "$@" >/dev/null
cmake --build "$dir" -j "$jobs" --target denpex

work="$(mktemp -d "${TMPDIR:-/tmp}/denpex-pgo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
denpex="$dir/cli/denpex"
echo "build-pgo: training (a 16k-rank incident, the gate suite in every shape, the frozen incidents)" >&2
"$denpex" simulate scenarios/scale/crash_16384.textproto --out "$work/scale" >/dev/null
"$denpex" diagnose "$work/scale/incident" >/dev/null
rm -rf "$work/scale"
if ! "$denpex" eval scenarios/suites/gate.suite.textproto --seeds 1 --strategies engine --shapes all \
  --jobs "$jobs" >"$work/eval.log" 2>&1; then
  tail -20 "$work/eval.log" >&2
  echo "build-pgo: the training run of the gate suite failed (above); no profile-guided build made" >&2
  exit 1
fi
while IFS= read -r incident; do
  "$denpex" diagnose "$incident" >/dev/null
  "$denpex" diagnose "$incident" --json - >/dev/null
done < <(find corpora -name incident -type d | sort)

cmake -S . -B "$dir" -DDENPEX_PGO=use >/dev/null
cmake --build "$dir" -j "$jobs"
echo "build-pgo: $dir/cli/denpex (profile: $profile)" >&2
