#!/usr/bin/env bash
# Are two denpex binaries' outputs byte-identical? The check behind every restructuring
# (docs/testing.md, "Same outputs").
#
#   scripts/same-outputs.sh BASE_DENPEX NEW_DENPEX [WORK_DIR]
#
# Each binary simulates the suites below (eval --work-dir: every incident's files and truth.json,
# compared by SHA-256; only the base's are kept, ~16 GB), then diagnoses the base's simulated
# incidents and every frozen one under corpora/ (JSON and text, with its checkpoints verified
# where it has any). The script prints the first differences and a count per kind, and exits 1 when anything differs.
# DENPEX_SAME_SUITES overrides the suite list ("PATH:SEEDS ..."); DENPEX_SAME_JOBS the parallelism.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BASE_DENPEX NEW_DENPEX [WORK_DIR]" >&2
  exit 2
fi
base=$(readlink -f "$1")
new=$(readlink -f "$2")
work=${3:-$(mktemp -d /tmp/denpex-same.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${DENPEX_SAME_JOBS:-2}
for bin in "$base" "$new"; do
  [[ -x $bin ]] || { echo "$0: $bin is not an executable denpex binary" >&2; exit 2; }
done

default_suites="scenarios/suites/gate.suite.textproto:2 scenarios/suites/checkpoint.suite.textproto:1"
for suite in "$root"/scenarios/suites/families/*.suite.textproto; do
  default_suites+=" ${suite#"$root"/}:1"
done
suites=${DENPEX_SAME_SUITES:-$default_suites}

simulate() {  # binary tag: each suite's files and truth as a manifest of SHA-256 sums
  local bin=$1 tag=$2 entry path seeds name
  for entry in $suites; do
    path=${entry%:*}
    seeds=${entry##*:}
    name=$(basename "$path" .suite.textproto)
    nice "$bin" eval "$root/$path" --seeds "$seeds" --strategies engine --jobs "$jobs" \
      --work-dir "$work/$tag/sim/$name" --json "$work/$tag/eval-$name.json" >/dev/null
    (cd "$work/$tag/sim/$name" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) >"$work/$tag/sim-$name.sha256"
    # Only the base's incidents are diagnosed (by both binaries): the new ones are summed, not kept.
    if [[ $tag == new ]]; then rm -rf "${work:?}/$tag/sim/$name"; fi
  done
}

diagnose() {  # binary list outdir: each incident dir of the list, diagnosed into outdir
  local bin=$1 list=$2 outdir=$3
  while IFS= read -r dir; do
    local key=${dir#"$work"/base/}
    key=${key#"$root"/}
    key=${key//\//_}
    local out="$outdir/$key"
    local ckpt=()
    [[ -d $dir/../checkpoints ]] && ckpt=(--checkpoint-dir "$dir/../checkpoints")
    "$bin" diagnose "$dir" --threads 1 "${ckpt[@]}" --json "$out.json" >/dev/null 2>"$out.err" || true
    "$bin" diagnose "$dir" --threads 1 "${ckpt[@]}" >"$out.txt" 2>>"$out.err" || true
  done <"$list"
}

echo "same-outputs: base $base, new $new, work $work"
# The base's outputs are kept: WORK_DIR/base (a folder or a link to one that several checks
# share) is reused when its stamp names the same base binary and suites.
stamp="$(sha256sum <"$base" | cut -d' ' -f1) $suites"
reuse=0
[[ -f $work/base/.complete && $(cat "$work/base/.complete") == "$stamp" ]] && reuse=1
rm -rf "$work/new"
mkdir -p "$work/base/diag" "$work/new/diag"
if [[ $reuse == 0 && -L $work/base ]]; then
  echo "$0: $work/base links to outputs made by another base binary or other suites (or not finished);" \
    "give this check a WORK_DIR of its own" >&2
  exit 2
fi
if [[ $reuse == 0 ]]; then
  rm -rf "$work/base/sim" "$work/base/diag" "$work/base/.complete"
  mkdir -p "$work/base/diag"
  simulate "$base" base
fi
simulate "$new" new
# The frozen incidents are diagnosed by both binaries in every run, from this checkout, into this
# WORK_DIR's own folders: a report quotes their files' modification times, the checkout's.
find "$work/base/sim" -type d -name incident | sort >"$work/simulated.txt"
find "$root/corpora/real" "$root/corpora/real2" -mindepth 2 -maxdepth 2 -type d -name incident | sort >"$work/frozen.txt"
rm -rf "$work/frozen-base" "$work/frozen-new"
mkdir -p "$work/frozen-base" "$work/frozen-new"
if [[ $reuse == 0 ]]; then diagnose "$base" "$work/simulated.txt" "$work/base/diag" & fi
diagnose "$base" "$work/frozen.txt" "$work/frozen-base" &
diagnose "$new" "$work/simulated.txt" "$work/new/diag" &
diagnose "$new" "$work/frozen.txt" "$work/frozen-new" &
wait
echo "$stamp" >"$work/base/.complete"

status=0
report() {  # kind, diff command output
  local kind=$1 out=$2
  if [[ -n $out ]]; then
    echo "DIFFERS ($kind): $(wc -l <<<"$out") entries"
    head -20 <<<"$out"
    status=1
  else
    echo "same ($kind)"
  fi
}
sims=""
for f in "$work"/base/sim-*.sha256; do
  sims+="$(diff "$f" "$work/new/$(basename "$f")" | grep '^[<>]' | sed "s|^|$(basename "$f" .sha256): |" || true)"
done
report "simulated incidents and truth" "$sims"
report "diagnoses of $(wc -l <"$work/simulated.txt") simulated incidents" "$(diff -rq "$work/base/diag" "$work/new/diag" 2>&1 || true)"
report "diagnoses of $(wc -l <"$work/frozen.txt") frozen incidents" "$(diff -rq "$work/frozen-base" "$work/frozen-new" 2>&1 || true)"
# the wall-clock fields (and what is computed from them) differ run to run; nothing else may
timing="\"(diagnose_seconds|diagnose_seconds_max|wall_seconds|answer_after_fault_seconds|gpu_hours_recovered)\""
evals=""
for f in "$work"/base/eval-*.json; do
  g="$work/new/$(basename "$f")"
  # ... and the suites' paths name the checkout they were run from
  if ! cmp -s <(grep -Ev "$timing" "$f" | sed -E 's#"[^"]*/(scenarios|corpora)/#"\1/#g') \
    <(grep -Ev "$timing" "$g" | sed -E 's#"[^"]*/(scenarios|corpora)/#"\1/#g'); then
    evals+="$(basename "$f") differs"$'\n'
  fi
done
report "eval reports" "${evals%$'\n'}"
exit $status
