#!/usr/bin/env bash
# The engine's time in every collection shape (docs/benchmarks.md, "The collection shapes at 16k ranks").
#   bench/engine/shapes_bench.sh BUILD [BASE_BUILD] [SCENARIO]
# Lays SCENARIO (default scenarios/scale/crash_16384.textproto, seed 1) out in every shape of
# `denpex eval --shapes all` once, under $TMPDIR/denpex-shapes-bench/ (kept for later runs; each
# shape's answer is checked against the canonical one there: the eval's table is printed), then
# times `denpex diagnose` of the canonical incident and of each shape's copy, best of three,
# alternated with BASE_BUILD's binary when given, and prints a Markdown row per shape: size,
# files, best wall time and its CPU time, and the ratio to the canonical incident's.
set -euo pipefail
BIN=$(readlink -f "$1/cli/denpex")
BASE=${2:+$(readlink -f "$2/cli/denpex")}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCENARIO=$(readlink -f "${3:-$ROOT/scenarios/scale/crash_16384.textproto}")
WORK=${TMPDIR:-/tmp}/denpex-shapes-bench
name=$(basename "$SCENARIO" .textproto)
seed_dir=$WORK/runs/shapes/$name/seed-1
if [[ ! -d $seed_dir/shapes ]]; then
  rm -rf "$WORK" && mkdir -p "$WORK"
  printf 'name: "shapes"\ndescription: "one scenario in every shape"\nscenarios { path: "%s" }\n' "$SCENARIO" >"$WORK/shapes.suite.textproto"
  "$BIN" eval "$WORK/shapes.suite.textproto" --seeds 1 --strategies engine --shapes all --work-dir "$WORK/runs" --jobs 2 |
    sed -n '/collection shapes/,/^$/p'
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "—"}'; }
best() {  # "wall cpu" of the fastest of three runs
  local b="" c="" w u s
  for _ in 1 2 3; do
    /usr/bin/time -o "$WORK/time" -f "%e %U %S" "$@" >/dev/null 2>&1
    read -r w u s <"$WORK/time"
    if [[ -z $b ]] || awk -v a="$w" -v b="$b" 'BEGIN {exit !(a < b)}'; then
      b=$w
      c=$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')
    fi
  done
  echo "$b $c"
}
echo "| shape | size | files | \`denpex diagnose\` (wall, CPU-s) | / canonical |${BASE:+ base build | base / new |}"
echo "|---|---:|---:|---:|---:|${BASE:+---:|---:|}"
canonical=""
for shape in canonical $(ls "$seed_dir/shapes"); do
  dir=$seed_dir/shapes/$shape
  [[ $shape == canonical ]] && dir=$seed_dir/incident
  [[ -d $dir/incident ]] && dir=$dir/incident
  find "$dir" -type f -exec cat {} + >/dev/null
  read -r w c <<<"$(best "$BIN" diagnose "$dir")"
  [[ -z $canonical ]] && canonical=$w
  row="| $shape | $(du -sh "$dir" | cut -f1) | $(find "$dir" -type f | wc -l) | $w s, $c | $(ratio "$w" "$canonical") |"
  if [[ -n $BASE ]]; then
    read -r bw bc <<<"$(best "$BASE" diagnose "$dir")"
    row+=" $bw s, $bc | $(ratio "$bw" "$w") |"
  fi
  echo "$row"
done
