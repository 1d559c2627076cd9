#!/usr/bin/env python3
"""Session 86: per bench/faas run directory, how late the invoker sent its
calls (late_ms: from a call's time in the trace to the invoker's send, in
its latency), and how many calls over LIMIT ms (2x ideal's p50) would have
been within it had they been sent as late as ideal's median call (0.26 ms,
session 85's matrix4). Nearest-rank quantiles.
Usage: late.py [--limit 3.5] [--on-time 0.26] RUN_DIR..."""
import argparse
import csv
import glob
import gzip
import math
import os


def calls(run):
    path = glob.glob(os.path.join(run, "calls-*.csv*"))[0]
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return [r for r in csv.DictReader(f) if not r["error"]]


def rank(xs, q):
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limit", type=float, default=3.5, help="ms: 2x ideal's p50")
    ap.add_argument("--on-time", type=float, default=0.26, help="ms: ideal's median lateness")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    print(f"| run | late p50 ms | p90 | p99 | max | sent over 1 ms late | within {a.limit:g} ms | "
          f"over it, within if sent on time |")
    print("|---|---|---|---|---|---|---|---|")
    for run in a.runs:
        rows = calls(run)
        late = [float(r["late_ms"]) for r in rows]
        lat = [(float(r["latency_ms"]), float(r["late_ms"])) for r in rows]
        within = sum(x <= a.limit for x, _ in lat)
        saved = sum(x > a.limit and x - lt + a.on_time <= a.limit for x, lt in lat)
        print(f"| {os.path.basename(run.rstrip('/'))} | {rank(late, .5):.2f} | {rank(late, .9):.2f} "
              f"| {rank(late, .99):.2f} | {max(late):.1f} | {sum(x > 1 for x in late)} | {within} | {saved} |")


if __name__ == "__main__":
    main()
