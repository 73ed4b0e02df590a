#!/bin/bash
# scripts/fr_dumps_only.sh BIN SUITE OUT: each suite entry simulated, then diagnosed from its Flight
# Recorder dumps alone (every other file removed): engine, fr-trace, fr-wavefront vs the truth.
B=$1; SUITE=$2; OUT=$3; rm -rf $OUT; mkdir -p $OUT
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
dir=$(dirname $SUITE)
while read id path sets; do
  d=$OUT/$id
  $B simulate $dir/$path $sets --out $d/full > /dev/null 2>&1 || { echo "$id simulate failed"; continue; }
  mkdir -p $d/incident
  (cd $d/full/incident && find . -name 'nccl_trace_rank_*' | while read f; do mkdir -p $d/incident/$(dirname $f); cp $f $d/incident/$f; done)
  truth=$(python3 -c "import json;print(json.load(open('$d/full/truth.json'))['initiator'].get('rank'))")
  line="$id truth=$truth dumps=$(find $d/incident -type f | wc -l)"
  for st in engine fr-trace fr-wavefront; do
    $B diagnose $d/incident --strategy $st --json $d/$st.json > /dev/null 2>&1
    line="$line | $st $(python3 -c "import json;d=json.load(open('$d/$st.json'));print(d.get('verdict','?')[8:12], d.get('initiator',{}).get('rank'))")"
  done
  echo "$line"
  rm -rf $d/full
done < $OUT/entries.txt
