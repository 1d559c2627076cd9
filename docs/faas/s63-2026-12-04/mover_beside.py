#!/usr/bin/env python3
"""Warm calls by what ran beside them: another function's cold call, and a
read-back of the mover (a woken function's, at the daemon's priority, or a
predicted one's, at nice 19), from the daemon's log: how many were served
within 8 ms. A call is cold with 100 or more major faults in its handler;
a read-back runs for the seconds its `read-back` event gives, up to the
event; it is a wake's when the context's last `bringing-back` event before
it says `woke`.

Usage: mover_beside.py RUN_DIR [RUN_DIR ...]   (bench/faas memext runs)"""
import collections
import csv
import datetime
import glob
import gzip
import json
import os
import sys

COLD_MAJFLT = 100
WITHIN_MS = 8.0


def epoch(ts):
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def one(path_glob):
    paths = glob.glob(path_glob)
    if len(paths) != 1:
        sys.exit(f"mover_beside.py: expected one {path_glob}, found {len(paths)}")
    return paths[0]


def read_backs(run_dir, t0):
    """[(start, end, woke)] on the trace's clock."""
    path = one(os.path.join(run_dir, "*daemon*.log*"))
    last_reason, out = {}, []
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            j = json.loads(line)
            ev, ctx = j.get("event"), j.get("context")
            if ev == "bringing-back":
                last_reason[ctx] = "(woke" in j.get("message", "")
            elif ev == "read-back":
                end = epoch(j["timestamp"]) - t0
                out.append((end - float(j.get("seconds", 0)), end, last_reason.get(ctx, False)))
    return out


def tally(run_dir, counts):
    with open(one(os.path.join(run_dir, "functions-*.json"))) as f:
        t0 = json.load(f)["trace_start_epoch"]
    with open(one(os.path.join(run_dir, "calls-*.csv"))) as f:
        rows = list(csv.DictReader(f))
    num = lambda r, k: float(r[k] or 0)  # noqa: E731
    cold = [(num(r, "t"), num(r, "t") + num(r, "latency_ms") / 1e3, r["function"])
            for r in rows if num(r, "majflt") >= COLD_MAJFLT]
    backs = read_backs(run_dir, t0)
    for r in rows:
        if num(r, "majflt") >= COLD_MAJFLT:
            continue
        t = num(r, "t")
        end = t + num(r, "latency_ms") / 1e3
        beside = any(s <= t <= e and fn != r["function"] for s, e, fn in cold)
        mover = [w for s, e, w in backs if s < end and e > t]
        what = "a wake's read-back" if any(mover) else "a predicted read-back" if mover else "no read-back"
        key = ("during another's cold call" if beside else "no cold call", what)
        counts[key][0] += 1
        counts[key][1] += num(r, "latency_ms") <= WITHIN_MS


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        sys.exit(__doc__)
    counts = collections.defaultdict(lambda: [0, 0])
    for d in argv:
        tally(d, counts)
    print("| warm calls | mover | calls | within 8 ms |\n|---|---|---|---|")
    for (cold, mover), (n, w) in sorted(counts.items()):
        print(f"| {cold} | {mover} | {n} | {w} ({100 * w / n:.0f}%) |")


if __name__ == "__main__":
    main(sys.argv[1:])
