#!/usr/bin/python3
"""Checks the frozen real corpus (corpora/real/<id>/) without the C++ build:
  - expected.json parses as denpex.v1.Truth (protobuf JSON, unknown fields rejected, as
    proto/src/json_io.cc reads it), and its scenario is the directory name;
  - every evidence line exists verbatim at its 1-based line of its file under incident/;
  - the checkpoint it names exists under incident/checkpoints/;
  - PRODUCED.md exists, and nothing named truth/expected sits inside incident/.
Needs python3-protobuf and protoc (Debian). Usage: check_expected.py [corpora/real]
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def load_truth_class(tmp):
    proto_root = os.path.join(REPO, "proto")
    protos = sorted(f"denpex/v1/{f}" for f in os.listdir(os.path.join(proto_root, "denpex", "v1"))
                    if f.endswith(".proto"))  # truth.proto and everything it imports
    subprocess.run(["protoc", f"-I{proto_root}", f"--python_out={tmp}"] + protos, check=True)
    sys.path.insert(0, tmp)
    from denpex.v1 import truth_pb2  # noqa: E402
    return truth_pb2.Truth


def check(corpus, Truth):
    from google.protobuf import json_format
    problems, n = [], 0
    for name in sorted(os.listdir(corpus)):
        d = os.path.join(corpus, name)
        if not os.path.isdir(os.path.join(d, "incident")):
            continue
        n += 1
        inc = os.path.join(d, "incident")
        try:
            raw = open(os.path.join(d, "expected.json")).read()
            msg = json_format.Parse(raw, Truth(), ignore_unknown_fields=False)
        except Exception as e:  # noqa: BLE001
            problems.append(f"{name}: expected.json: {e}")
            continue
        if msg.scenario != name:
            problems.append(f"{name}: scenario is {msg.scenario!r}")
        for ev in msg.evidence:
            path = os.path.join(inc, ev.file)
            try:
                lines = open(path, encoding="utf-8", errors="surrogateescape").read().split("\n")
            except OSError as e:
                problems.append(f"{name}: evidence file {ev.file}: {e}")
                continue
            if not (1 <= ev.line <= len(lines)) or lines[ev.line - 1] != ev.text:
                problems.append(f"{name}: evidence {ev.file}:{ev.line} is not verbatim")
        if msg.checkpoint.path:
            if not os.path.isfile(os.path.join(inc, "checkpoints", msg.checkpoint.path)):
                problems.append(f"{name}: checkpoint {msg.checkpoint.path} missing")
        if not os.path.isfile(os.path.join(d, "PRODUCED.md")):
            problems.append(f"{name}: PRODUCED.md missing")
        for dirpath, _, files in os.walk(inc):
            for f in files:
                if f in ("truth.json", "expected.json"):
                    problems.append(f"{name}: {f} inside incident/")
        if not msg.events or msg.verdict == 0 or msg.owner == 0:
            problems.append(f"{name}: verdict, owner and events are required")
    return n, problems


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "corpora", "real")
    with tempfile.TemporaryDirectory() as tmp:
        n, problems = check(corpus, load_truth_class(tmp))
    for p in problems:
        print(p)
    print(f"{n - len({p.split(':')[0] for p in problems})} passed, "
          f"{len({p.split(':')[0] for p in problems})} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
