#!/usr/bin/env python3
"""Warm calls (at most 200 major faults) by what ran while they did: a cold call (over 200 major faults), a
read-back (the daemon's `read-back` events, from their end back by their duration) and a push-out or lowering
(`reclaimed`); how many of each were served within the limit (default 6.2 ms) and how many were not.

    python3 overlap.py RUN_DIR... [--limit MS]
"""
import argparse
import collections
import csv
import datetime
import glob
import gzip
import json
import os
import re


def spans(run, t0):
    """{event: [(start, end)]} of the daemon's read-backs and lowerings, s into the trace."""
    out = collections.defaultdict(list)
    logs = glob.glob(os.path.join(run, "*daemon*.log*"))
    if not logs:
        return out
    opener = gzip.open if logs[0].endswith(".gz") else open
    with opener(logs[0], "rt") as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            ev = d.get("event")
            if ev not in ("reclaimed", "read-back"):
                continue
            t = datetime.datetime.fromisoformat(d["timestamp"].replace("Z", "+00:00")).timestamp() - t0
            ms = d.get("ms")
            if ms is None:
                m = re.search(r"in ([0-9.]+) ?ms", d.get("message", ""))
                ms = float(m.group(1)) if m else 0.0
            out[ev].append((t - float(ms) / 1e3, t))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--limit", type=float, default=6.2)
    a = ap.parse_args()
    print(f"warm calls served within {a.limit} ms of those that overlapped:\n")
    print("| run | nothing | a push-out or read-back only | a cold call | a cold call and a read-back |")
    print("|---|---|---|---|---|")
    for run in a.runs:
        rows = list(csv.DictReader(open(glob.glob(os.path.join(run, "calls-*.csv"))[0])))
        t0 = json.load(open(glob.glob(os.path.join(run, "functions-*.json"))[0]))["trace_start_epoch"]
        moves = spans(run, t0)
        cold = [(float(r["t"]), float(r["t"]) + float(r["latency_ms"]) / 1e3) for r in rows if int(r["majflt"]) > 200]

        def over(a_, b, iv):
            return any(s < b and e > a_ for s, e in iv)
        fast, all_ = collections.Counter(), collections.Counter()
        for r in rows:
            if int(r["majflt"]) > 200:
                continue
            a_, b = float(r["t"]), float(r["t"]) + float(r["latency_ms"]) / 1e3
            if over(a_, b, cold):
                k = "cold+rb" if over(a_, b, moves["read-back"]) else "cold"
            elif over(a_, b, moves["reclaimed"]) or over(a_, b, moves["read-back"]):
                k = "out"
            else:
                k = "nothing"
            all_[k] += 1
            fast[k] += float(r["latency_ms"]) <= a.limit
        cells = [f"{fast[k]} / {all_[k]}" for k in ("nothing", "out", "cold", "cold+rb")]
        print(f"| {os.path.basename(run.rstrip('/'))} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
