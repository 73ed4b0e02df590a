#!/usr/bin/env bash
# Checks that every C++ and .proto line changed since the format base is as clang-format
# (Debian's clang-format 14, the repository's .clang-format: Google style, 100 columns) would
# write it. Only changed lines are checked: most files predate the check and are left as they
# are (docs/testing.md, "Format check").
#
#   scripts/check-format.sh          fail (exit 1) and print clang-format's diff if a changed
#                                    line is not formatted
#   scripts/check-format.sh --fix    format the changed lines in the working tree instead
#
# The base is the commit named in .ci/format-base (the check covers every line changed since,
# committed or not); DENPEX_FORMAT_BASE=<commit> overrides it (e.g. `main` for a branch's own
# lines). Without git history holding the base the check is skipped, or fails when
# DENPEX_REQUIRE_FORMAT=1 (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  *) echo "usage: scripts/check-format.sh [--fix]" >&2; exit 2 ;;
esac

skip() {
  if [[ ${DENPEX_REQUIRE_FORMAT:-} == 1 ]]; then
    echo "check-format: $* (DENPEX_REQUIRE_FORMAT=1)" >&2
    exit 1
  fi
  echo "check-format: $*; skipped" >&2
  exit 0
}

base="${DENPEX_FORMAT_BASE:-$(tr -d '[:space:]' <.ci/format-base)}"
command -v clang-format >/dev/null || skip "clang-format is not installed"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "not a git checkout"
git rev-parse --verify --quiet "$base^{commit}" >/dev/null ||
  skip "the base $base is not in this checkout"


if ((fix)); then
  exec git clang-format --extensions cc,h,proto "$base"
fi
diff="$(git clang-format --diff --extensions cc,h,proto "$base")"
if [[ $diff == diff* ]]; then
  printf '%s\n' "$diff"
  echo "check-format: lines changed since $base are not clang-formatted (above);" \
       "scripts/check-format.sh --fix formats them" >&2
  exit 1
fi
echo "check-format: every line changed since $base is clang-formatted" >&2
