#!/usr/bin/env bash
# Checks that every C++ and .proto line written on top of the format base is as clang-format
# (Debian's clang-format 14, the repository's .clang-format: Google style, 100 columns) would
# write it: the lines `git blame` gives to a commit that descends from the base, and the lines
# not committed yet. Lines older than the base, and lines of branches forked before it and
# merged since, are not judged until someone rewrites them (docs/testing.md, "Format check").
#
#   scripts/check-format.sh          fail (exit 1) and print clang-format's diff if such a line
#                                    is not formatted
#   scripts/check-format.sh --fix    format those lines in the working tree instead
#
# The base is the commit named in .ci/format-base; DENPEX_FORMAT_BASE=<commit> overrides it
# (e.g. `main` for a branch's own lines). Without clang-format, or git history holding the base,
# the check is skipped, saying so, or fails when DENPEX_REQUIRE_FORMAT=1.
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

# The commits written on top of the base; git blame names lines not committed yet 0000….
ours="$(mktemp)"
trap 'rm -f "$ours"' EXIT
{ printf '%040d\n' 0; git rev-list --ancestry-path "$base..HEAD"; } >"$ours"

# `--lines=FIRST:LAST` for each run of lines of $1 (in the working tree) those commits wrote.
our_lines() {
  git blame --porcelain -- "$1" | awk -v ours="$ours" '
    BEGIN { while ((getline c < ours) > 0) mine[c] = 1 }
    /^\t/ || length($1) != 40 || $1 !~ /^[0-9a-f]+$/ || NF < 3 { next }
    !($1 in mine) { next }
    $3 == last + 1 && first { last = $3; next }
    { if (first) print "--lines=" first ":" last; first = last = $3 }
    END { if (first) print "--lines=" first ":" last }'
}

bad=0
while IFS= read -r -d '' file; do
  mapfile -t lines < <(our_lines "$file")
  ((${#lines[@]})) || continue
  if ((fix)); then
    clang-format -i "${lines[@]}" "$file"
  elif ! clang-format "${lines[@]}" "$file" |
         diff -u --label "a/$file" --label "b/$file" "$file" -; then
    bad=1
  fi
done < <(git diff -z --name-only --no-renames --diff-filter=AM "$base" -- '*.cc' '*.h' '*.proto')

if ((bad)); then
  echo "check-format: lines written since $base are not clang-formatted (above);" \
       "scripts/check-format.sh --fix formats them" >&2
  exit 1
fi
((fix)) || echo "check-format: every line written since $base is clang-formatted" >&2
