#!/usr/bin/python3
# The Flight Recorder benchmark's incident (docs/benchmarks.md, "Flight Recorder dumps"): RANKS
# dumps of ENTRIES entries each, as torch's ProcessGroupNCCL writes them on a watchdog timeout
# (format 2.7, protocol 2 pickle, one stack frame per entry), one per rank, `nccl_trace_rank_<R>`
# under OUT/node<N>/. DISTINCT different dumps are written (each rank's ring stuck at another
# entry); the other ranks' files are hard links to them, so the incident holds RANKS files and
# RANKS x the dump's bytes to parse while its disk use stays DISTINCT dumps.
#   /usr/bin/python3 bench/make_fr_dumps.py OUT [RANKS=16384] [ENTRIES=2000] [DISTINCT=64]
import os, pickle, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "data", "flight_recorder"))
import make_dumps  # noqa: E402

out = sys.argv[1]
ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 16384
entries = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
distinct = int(sys.argv[4]) if len(sys.argv) > 4 else 64
groups = [("0", "default_pg", "[" + ", ".join(str(r) for r in range(min(ranks, 64))) + "]"),
          ("1", "pp", "[0, 1]")]
os.makedirs(os.path.join(out, "dumps"), exist_ok=True)
sources = []
for k in range(distinct):
    path = os.path.join(out, "dumps", "d%d" % k)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            pickle.dump(make_dumps.dump("2.7", make_dumps.ring("2.7", entries - 1, entries - 2 - k % 4), groups),
                        f, protocol=2)
    sources.append(path)
for r in range(ranks):
    folder = os.path.join(out, "incident", "node%04d" % (r // 8))
    os.makedirs(folder, exist_ok=True)
    dst = os.path.join(folder, "nccl_trace_rank_%d" % r)
    if not os.path.exists(dst):
        os.link(sources[r % distinct], dst)
print("%d dumps of %d entries, %d bytes each" % (ranks, entries, os.path.getsize(sources[0])))
