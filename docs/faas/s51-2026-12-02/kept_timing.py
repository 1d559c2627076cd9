#!/usr/bin/env python3
"""For a bench/faas run of `memext+map_kept=true`: each warm call (no major
fault) whose function's previous call was 8-40 s before, by what the
mover's last `mapped-kept` of that function before the call was (how long
before the call it ended, how much it mapped), and the handler's time.

  python3 kept_timing.py RUN_DIR MODE ROUND"""
import csv
import datetime
import gzip
import json
import os
import sys


def events(path, name):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            if f'"{name}"' not in line:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") == name:
                yield e


def epoch(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    d, mode, rnd = argv
    fj = json.load(open(os.path.join(d, f"functions-zram-{mode}-r{rnd}.json")))
    start, by_cg = fj["trace_start_epoch"], {v: k for k, v in fj["cgroups"].items()}
    log = os.path.join(d, f"{mode}-daemon-zram-r{rnd}.log")
    log = log if os.path.exists(log) else log + ".gz"
    kept = {}
    for e in events(log, "mapped-kept"):
        fn = by_cg.get(e["context"])
        if fn:
            kept.setdefault(fn, []).append((epoch(e["timestamp"]) - start, e["seconds"], e["bytes"]))
    rows = sorted(csv.DictReader(open(os.path.join(d, f"calls-zram-{mode}-r{rnd}.csv"))), key=lambda r: float(r["t"]))
    last, groups = {}, {}
    for r in rows:
        fn, t = r["function"], float(r["t"])
        gap = t - last.get(fn, -1e9)
        last[fn] = t
        if not (8 <= gap < 40) or not r["handler_ms"] or int(r["majflt"]) > 0:
            continue
        before = [k for k in kept.get(fn, []) if k[0] <= t and k[0] > t - gap]
        if not before:
            g = "no mapped-kept since its previous call"
        elif t - before[-1][0] < 0.5:
            g = "mapped-kept ended under 0.5 s before"
        else:
            g = "mapped-kept ended 0.5 s or more before"
        groups.setdefault(g, []).append(float(r["handler_ms"]))
    for g, v in sorted(groups.items()):
        print(f"{g:42s} {len(v):3d} calls  handler p50 {q(v, .5):5.2f}  p90 {q(v, .9):6.2f}  over 5 ms {sum(1 for x in v if x > 5)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
