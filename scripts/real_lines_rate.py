#!/usr/bin/env python3
"""Recognition per family of tests/data/real_lines with a given `denpex` binary (its README has the
block format; engine_real_lines_test checks the same with the engine linked in). Usage:
    scripts/real_lines_rate.py [DENPEX] [CORPUS]
Prints the Markdown table of docs/log_formats.md §1i: blocks, sources, blocks where an event of the
family was seen, blocks that met every `expect` line."""
import collections, json, os, subprocess, sys, tempfile

def blocks(corpus):
    for family in sorted(os.listdir(corpus)):
        folder = os.path.join(corpus, family)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(".txt"):
                with open(os.path.join(folder, name), "rb") as f:
                    head, _, body = f.read().partition(b"\n---\n")
                meta = collections.defaultdict(list)
                for line in head.decode().splitlines():
                    if line.startswith("# ") and ":" in line:
                        key, _, value = line[2:].partition(":")
                        meta[key.strip()].append(value.strip())
                yield family, name, meta, body

def has(event, key, value):
    v = event.get(key, event.get("fields", {}).get(key))
    if v is None:
        return False
    if isinstance(v, bool):
        return str(v).lower() == value
    if isinstance(v, (int, float)):
        return str(v) == value
    return str(v).startswith(value)

def main():
    denpex = sys.argv[1] if len(sys.argv) > 1 else "build/cli/denpex"
    corpus = sys.argv[2] if len(sys.argv) > 2 else "tests/data/real_lines"
    rows = collections.OrderedDict()
    with tempfile.TemporaryDirectory() as tmp:
        for family, name, meta, body in blocks(corpus):
            with open(os.path.join(tmp, "console.log"), "wb") as f:
                f.write(body)
            out = subprocess.run([denpex, "events", tmp], capture_output=True, text=True).stdout
            events = [json.loads(l) for l in out.splitlines() if l.strip()]
            seen = any(e.get("family") == family for e in events)
            full = all(any(all(has(e, *w.split("=", 1)) for w in x.split()) for e in events) for x in meta["expect"])
            r = rows.setdefault(family, [0, set(), 0, 0])
            r[0] += 1; r[1].add(meta["source"][0]); r[2] += seen; r[3] += full
    print("| family | blocks | sources | family seen | every expected event |\n|---|---:|---:|---:|---:|")
    for family, (n, sources, seen, full) in rows.items():
        print(f"| {family} | {n} | {len(sources)} | {seen} | {full} ({round(100 * full / n)} %) |")
    print(f"| all | {sum(r[0] for r in rows.values())} | | {sum(r[2] for r in rows.values())} | {sum(r[3] for r in rows.values())} |")

if __name__ == "__main__":
    main()
