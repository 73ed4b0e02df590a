#!/bin/bash
# scripts/records_only.sh BIN SUITE OUT fr|ras: each suite entry simulated, then diagnosed from one
# kind of record alone, every other file removed: `fr` its Flight Recorder dumps (engine, fr-trace,
# fr-wavefront), `ras` its NCCL RAS report files, found by their first report line (engine, ras).
# One line per entry: the truth's rank, then each strategy's verdict and rank (docs/evaluation.md).
B=$1; SUITE=$2; OUT=$3; KIND=${4:-fr}
case $KIND in
  fr) strategies="engine fr-trace fr-wavefront" ;;
  ras) strategies="engine ras" ;;
  *) echo "usage: scripts/records_only.sh BIN SUITE OUT fr|ras" >&2; exit 2 ;;
esac
rm -rf $OUT; mkdir -p $OUT
python3 - "$SUITE" > $OUT/entries.txt <<'PY'
import re,sys
t=open(sys.argv[1]).read()
for m in re.finditer(r'scenarios \{(.*?)\n\}', t, re.S):
    body=m.group(1)
    path=re.search(r'path: "(.*?)"', body).group(1)
    sets=re.findall(r'set: "(.*?)"', body)
    idv=re.search(r'id: "(.*?)"', body).group(1)
    print(idv, path, ' '.join('--set '+s for s in sets))
PY
records() {  # the files of one kind under the current directory
  if [[ $KIND == fr ]]; then
    find . -name 'nccl_trace_rank_*'
  else
    find . -type f -size -64M | while read -r f; do
      head -c 4096 "$f" | grep -aqE 'NCCL version .* compiled with CUDA|"nccl_version"' && echo "$f"
    done
  fi
}
dir=$(dirname $SUITE)
while read id path sets; do
  d=$OUT/$id
  $B simulate $dir/$path $sets --out $d/full > /dev/null 2>&1 || { echo "$id simulate failed"; continue; }
  mkdir -p $d/incident
  (cd $d/full/incident && records | while read f; do mkdir -p $d/incident/$(dirname $f); cp $f $d/incident/$f; done)
  truth=$(python3 -c "import json;print(json.load(open('$d/full/truth.json'))['initiator'].get('rank'))")
  line="$id truth=$truth files=$(find $d/incident -type f | wc -l)"
  for st in $strategies; do
    $B diagnose $d/incident --strategy $st --json $d/$st.json > /dev/null 2>&1
    line="$line | $st $(python3 -c "import json;d=json.load(open('$d/$st.json'));print(d.get('verdict','?')[8:12], d.get('initiator',{}).get('rank'))" 2>/dev/null || echo 'none -')"
  done
  echo "$line"
  rm -rf $d/full $d/incident  # the answers stay; a 16k incident's dumps are 2 GB
done < $OUT/entries.txt
