#!/usr/bin/env python3
"""Recognition per family of tests/data/real_lines with a given `denpex` binary (its README has the
block format; engine_real_lines_test checks the same with the engine linked in). Usage:
    scripts/real_lines_rate.py [DENPEX] [CORPUS] [--shapes]
Prints the Markdown table of docs/log_formats.md §1i: blocks, sources, blocks where an event of the
family was seen, blocks that met every `expect` line. With --shapes, also how many of the blocks
read today still meet every `expect` line when each of their lines is quoted (`> `), indented
(four spaces) or numbered (`[1000] `, rising): prefix invariance."""
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

def events_of(denpex, tmp, body):
    with open(os.path.join(tmp, "console.log"), "wb") as f:
        f.write(body)
    out = subprocess.run([denpex, "events", tmp], capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]

def meets(events, expects):
    return all(any(all(has(e, *w.split("=", 1)) for w in x.split()) for e in events) for x in expects)

SHAPES = {
    "quoted `> `": lambda i, l: b"> " + l,
    "indented 4": lambda i, l: b"    " + l,
    "numbered `[n] `": lambda i, l: b"[%d] " % (1000 + i) + l,
}

def shapes(denpex, corpus):
    ok = collections.Counter()
    base = 0
    with tempfile.TemporaryDirectory() as tmp:
        for family, name, meta, body in blocks(corpus):
            if meta.get("known-miss"):
                continue
            base += 1
            lines = body.split(b"\n")
            for shape, f in SHAPES.items():
                new = b"\n".join(f(i, l) if l else l for i, l in enumerate(lines))
                ok[shape] += meets(events_of(denpex, tmp, new), meta["expect"])
    print(f"\n| shape | blocks still read (of {base}) |\n|---|---:|")
    for shape in SHAPES:
        print(f"| {shape} | {ok[shape]} |")

def main():
    args = [a for a in sys.argv[1:] if a != "--shapes"]
    denpex = args[0] if len(args) > 0 else "build/cli/denpex"
    corpus = args[1] if len(args) > 1 else "tests/data/real_lines"
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
    if "--shapes" in sys.argv:
        shapes(denpex, corpus)

if __name__ == "__main__":
    main()
