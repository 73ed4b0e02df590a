#!/usr/bin/python3
# Writes the hand-made Flight Recorder dumps the engine's tests and the fuzz seeds read
# (tests/engine/flight_recorder_test.cc, fuzz/flight_recorder_seeds): each format version's key
# set as torch's FlightRecorder writes it, pickled with protocol 2 (torch's C++ pickler's), and
# the JSON form. Run from this folder: /usr/bin/python3 make_dumps.py
import json, pickle, sys, types

# torch's C++ pickler writes an int list as `torch.jit._pickle.build_intlist([...])`: the same
# opcodes, from a stand-in module (torch itself is not imported).
for _m in ("torch", "torch.jit", "torch.jit._pickle"):
    sys.modules.setdefault(_m, types.ModuleType(_m))


def build_intlist(x):
    return x


build_intlist.__module__ = "torch.jit._pickle"
sys.modules["torch.jit._pickle"].build_intlist = build_intlist


class IntList(list):
    def __reduce__(self):
        return (build_intlist, (list(self),))

T0 = 1754000000_000_000_000  # 2025-07-31T22:13:20Z


def entry(version, i, pg="0", desc="default_pg", seq=None, state="completed", op="nccl:all_reduce",
          p2p=False, sizes=((1024,),), dtypes=("Float",)):
    seq = i + 1 if seq is None else seq
    e = {
        "record_id": i,
        "pg_id": int(pg) if pg.isdigit() else 0,
        "process_group": (pg, desc),
        "collective_seq_id": 0 if p2p else seq,
        "p2p_seq_id": seq if p2p else 0,
        "op_id": i + 1,
        "profiling_name": op,
        "time_created_ns": T0 + i * 1_000_000,
        "input_sizes": [IntList(s) if version >= (2, 4) else list(s) for s in sizes],
        "input_dtypes": list(dtypes),
        "output_sizes": [list(s) for s in sizes],
        "output_dtypes": list(dtypes),
        "state": state,
        "time_discovered_started_ns": None if state == "scheduled" else T0 + i * 1_000_000 + 500,
        "time_discovered_completed_ns": T0 + i * 1_000_000 + 900 if state == "completed" else None,
        "retired": state == "completed",
        "timeout_ms": 600000,
        "frames": [{"name": "all_reduce", "filename": "distributed_c10d.py", "line": 2501}],
    }
    if version >= (2, 4):
        e["is_p2p"] = p2p
    if version >= (2, 5):
        e["duration_ms"] = 1.25 if state == "completed" else None
    return e


def dump(version, entries, groups, status=True, nccl=True):
    v = tuple(int(x) for x in version.split("."))
    d = {"version": version,
         "pg_config": {g: {"name": g, "desc": desc, "ranks": ranks} for g, desc, ranks in groups}}
    if v >= (2, 4) and status:
        st = {}
        for g, _, _ in groups:
            mine = [e for e in entries if e["process_group"][0] == g and not e.get("is_p2p")]
            seqs = lambda pred: max([e["collective_seq_id"] for e in mine if pred(e)], default=-1)
            st[g] = {"last_enqueued_collective": seqs(lambda e: True),
                     "last_started_collective": seqs(lambda e: e["state"] != "scheduled"),
                     "last_completed_collective": seqs(lambda e: e["state"] == "completed")}
        d["pg_status"] = st
    if v >= (2, 7) and nccl:
        d["nccl_version"] = "2.21.5"
    d["entries"] = entries
    return d


def ring(version, n, stuck_at):
    """n entries of pg 0, the one at stuck_at started, those after scheduled; a p2p send in pg 1."""
    v = tuple(int(x) for x in version.split("."))
    out = []
    for i in range(n):
        state = "completed" if i < stuck_at else ("started" if i == stuck_at else "scheduled")
        out.append(entry(v, i, state=state))
    out.append(entry(v, n, pg="1", desc="pp", seq=3, state="started", op="nccl:send 0->1", p2p=True))
    return out


GROUPS = [("0", "default_pg", "[0, 1, 2, 3]"), ("1", "pp", "[0, 1]")]


def write_pickle(name, d):
    with open(name, "wb") as f:
        pickle.dump(d, f, protocol=2)


if __name__ == "__main__":
    write_pickle("v2.2_nccl_trace_rank_0", dump("2.2", ring("2.2", 6, 4), GROUPS))
    write_pickle("v2.3_nccl_trace_rank_1", dump("2.3", ring("2.3", 6, 4), GROUPS))
    write_pickle("v2.4_nccl_trace_rank_2", dump("2.4", ring("2.4", 6, 4), GROUPS))
    write_pickle("v2.5_rank_3", dump("2.5", ring("2.5", 8, 5), GROUPS))
    write_pickle("v2.7_torchcomm_fr_trace_4.pkl", dump("2.7", ring("2.7", 8, 5), GROUPS))
    with open("v2.7_nccl_trace_rank_5.json", "w") as f:
        json.dump(dump("2.7", ring("2.7", 8, 5), GROUPS), f, sort_keys=True, default=list)
    # Rings long enough that the reader starts at their end (ingest/flight_recorder_tail.h): one
    # stuck near its end; one whose group 1 completed once, early; one with a send in group 1
    # started early and never completed while group 0 went on; the first as protocol 4 (FRAME,
    # MEMOIZE, STACK_GLOBAL), as Python's default pickler writes it.
    v27 = (2, 7)
    write_pickle("ring_tail_nccl_trace_rank_7", dump("2.7", ring("2.7", 63, 60), GROUPS))
    early = [entry(v27, i, seq=i) for i in range(64)]
    early[5] = entry(v27, 5, pg="1", desc="pp", seq=1, op="nccl:send 0->1", p2p=True)
    early[62] = entry(v27, 62, seq=62, state="started")
    early[63] = entry(v27, 63, seq=63, state="scheduled")
    write_pickle("ring_early_group_nccl_trace_rank_8", dump("2.7", early, GROUPS))
    stuck = [entry(v27, i, seq=i) for i in range(64)]
    stuck[10] = entry(v27, 10, pg="1", desc="pp", seq=1, state="started", op="nccl:send 0->1", p2p=True)
    stuck[40] = entry(v27, 40, pg="1", desc="pp", seq=2, op="nccl:recv 1->0", p2p=True)
    write_pickle("ring_early_stuck_nccl_trace_rank_9", dump("2.7", stuck, GROUPS))
    with open("ring_tail_protocol4_rank_10", "wb") as f:
        pickle.dump(dump("2.7", ring("2.7", 63, 60), GROUPS), f, protocol=4)
    whole = open("v2.5_rank_3", "rb").read()
    with open("truncated_nccl_trace_rank_6", "wb") as f:
        f.write(whole[: len(whole) * 2 // 3])
