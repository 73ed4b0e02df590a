#!/usr/bin/env bash
# The two set-up commands of the README, on a fresh Debian 12 machine:
#
#   ./bootstrap.sh demo   install dependencies, build, and run the embedded default incident
#                         (4,096 ranks, one rank SIGKILLed): simulate -> diagnose -> score
#   ./bootstrap.sh test   install dependencies, build, and run the whole test suite (CI runs this);
#                         the `denpex run` e2e tests drive real torchrun and real srun, so this
#                         also installs PyTorch, Slurm and munge and starts a single-node Slurm
#                         on loopback around the tests (scripts/services.sh); then the unit tests
#                         again, built with ASan and UBSan in BUILD_DIR-sanitize, and the format
#                         check of the lines written since .ci/format-base
#                         (scripts/check-format.sh); docs/testing.md
#
# BUILD_DIR (default: build) and JOBS (default: 2) can be set in the environment.
# DENPEX_NO_SANITIZE=1: skip the sanitizer run (it builds the tree a second time).
# DENPEX_NO_SERVICES=1: test without installing or starting the services (their tests skip).
# DENPEX_REQUIRE_SERVICES=1 (CI): fail rather than skip when they cannot be had.
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-}"
build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-2}"

case "$mode" in
  demo|test) ;;
  *) echo "usage: ./bootstrap.sh demo|test" >&2; exit 2 ;;
esac

with_services=0
if [[ $mode == test && ${DENPEX_NO_SERVICES:-} != 1 ]]; then with_services=1; fi
if ((with_services)); then
  scripts/install-deps.sh --with-services
else
  scripts/install-deps.sh
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDENPEX_BUILD_TESTS="$([[ $mode == test ]] && echo ON || echo OFF)" \
  -DDENPEX_WERROR="${CI:+ON}" >/dev/null
cmake --build "$build_dir" -j "$jobs"

if [[ $mode == demo ]]; then
  exec "$build_dir/cli/denpex" demo --out "$build_dir/demo"
fi

# A single-node Slurm for the srun tests, stopped on the way out whatever the tests say
# (unless it was already running before).
if ((with_services)) && ! scripts/services.sh status; then
  if conf="$(scripts/services.sh start)"; then
    export "${conf?}"  # SLURM_CONF=<file>
    trap 'scripts/services.sh stop || true' EXIT
  elif [[ ${DENPEX_REQUIRE_SERVICES:-} == 1 ]]; then
    echo "bootstrap: the Slurm services did not start (DENPEX_REQUIRE_SERVICES=1)" >&2
    exit 1
  else
    echo "bootstrap: Slurm did not start; the srun tests of \`denpex run\` will be skipped" >&2
  fi
fi
failed=()
# A failed test's name is repeated at the very end (CI shows the tail of the output).
failed_tests() {
  local list="$1/Testing/Temporary/LastTestsFailed.log"
  [[ -f $list ]] && cut -d: -f2- "$list" | paste -sd' ' - || true
}
# ... and so is what each of the first three printed: from gtest's first `Failure` on (or the
# output's last lines where there is none), 25 lines, to say why.
failed_output() {
  local log="$1/Testing/Temporary/LastTest.log" name out
  [[ -f $log ]] || return 0
  for name in $(failed_tests "$1" | tr ' ' '\n' | head -3); do
    out="$(awk -v t=" Test: $name" 'substr($0, length($0) - length(t) + 1) == t { on = 1; next }
      on && /^<end of output>/ { exit } on' "$log")"
    printf -- '--- %s:\n' "$name"
    if grep -q ': Failure$' <<<"$out"; then
      sed -n '/: Failure$/,$p' <<<"$out" | head -25
    else
      tail -25 <<<"$out"
    fi
  done
}
failed_dirs=()
ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure ||
  { failed+=("ctest: $(failed_tests "$build_dir")") && failed_dirs+=("$build_dir"); }

# The unit tests again under AddressSanitizer and UBSan (-O1, line tables for the stacks); any
# report fails its test. Only what `ctest -L unit` runs is built (target denpex_unit_tests).
if [[ ${DENPEX_NO_SANITIZE:-} != 1 ]]; then
  sanitize_dir="$build_dir-sanitize"
  cmake -S . -B "$sanitize_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DDENPEX_SANITIZE=ON -DDENPEX_BUILD_TESTS=ON \
    -DDENPEX_WERROR="${CI:+ON}" >/dev/null
  if cmake --build "$sanitize_dir" -j "$jobs" --target denpex_unit_tests; then
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$sanitize_dir" -L unit -j "$jobs" --output-on-failure ||
      { failed+=("ctest -L unit under ASan+UBSan: $(failed_tests "$sanitize_dir")") &&
        failed_dirs+=("$sanitize_dir"); }
  else
    failed+=("the ASan+UBSan build")
  fi
fi

scripts/check-format.sh || failed+=("scripts/check-format.sh")

if ((${#failed[@]})); then
  for dir in "${failed_dirs[@]}"; do failed_output "$dir" >&2; done
  printf 'bootstrap: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
