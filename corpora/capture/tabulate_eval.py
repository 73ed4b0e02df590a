#!/usr/bin/python3
"""One line per incident of a `denpex eval --corpus DIR --strategies engine --json FILE` report:
right / coarser / abstained / WRONG, the truth and the answer, and the engine's reason.
  right      initiator rank (or node for a node/job-level truth), owner and class all correct
  coarser    not wrong (the scorer's committed_wrong unset), owner and class correct, but less
             precise: the right node with no rank, or no rank and no node (what failed in the job)
  abstained  INCONCLUSIVE
  WRONG      a committed answer with a wrong initiator, owner or class
Usage: tabulate_eval.py FILE.json"""
import json
import sys


def main():
    rep = json.load(open(sys.argv[1]))
    reasons = {d["incident"]: d["diagnosis"] for d in rep.get("details", [])}
    counts = {}
    for s in sorted(rep["incidents"], key=lambda s: s["incident"]):
        if s["strategy"] != "engine":
            continue
        d = reasons.get(s["incident"], {})
        ini = d.get("initiator", {})
        if s.get("inconclusive"):
            verdict = "abstained"
        elif s.get("initiator_rank_correct") and s.get("owner_correct") and \
                s.get("failure_class_correct"):
            verdict = "right"
        elif (not s.get("committed_wrong") and s.get("owner_correct") and
              s.get("failure_class_correct")):
            verdict = "coarser"
        else:
            verdict = "WRONG"
        counts[verdict] = counts.get(verdict, 0) + 1
        ck = "ckpt ok" if s.get("checkpoint_correct") else "ckpt WRONG"
        print(f"| `{s['incident']}` | {verdict} | rank {s.get('truth_rank')} / "
              f"rank {s.get('answer_rank')} node '{s.get('answer_node', '')}' "
              f"{d.get('owner', '')} {ini.get('failure_class', '')} | {ck} | "
              f"{d.get('reason', '').replace('|', '/')} |")
    print(" ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
