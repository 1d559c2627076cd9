#!/usr/bin/env python3
"""Warm calls that came while another function's cold call ran, against the
other warm calls: how many were served within 8 ms (the p50 target's bound,
2x ideal's 3-4 ms). A call is cold with 100 or more major faults in its
handler (as timeline.py); a cold call runs from its time to its answer.

Usage: overlap.py RUN_DIR [RUN_DIR ...]   (bench/faas results directories)"""
import csv
import glob
import os
import statistics
import sys

COLD_MAJFLT = 100
WITHIN_MS = 8.0


def calls(run_dir):
    paths = glob.glob(os.path.join(run_dir, "calls-*.csv"))
    if len(paths) != 1:
        sys.exit(f"overlap.py: {run_dir}: expected one calls-*.csv, found {len(paths)}")
    with open(paths[0]) as f:
        return list(csv.DictReader(f))


def num(row, key):
    return float(row[key] or 0)


def split(rows):
    """(warm calls during another function's cold call, other warm calls): latencies in ms."""
    cold = [(num(r, "t"), num(r, "t") + num(r, "latency_ms") / 1e3, r["function"])
            for r in rows if num(r, "majflt") >= COLD_MAJFLT]
    during, apart = [], []
    for r in rows:
        if num(r, "majflt") >= COLD_MAJFLT:
            continue
        t = num(r, "t")
        beside = any(s <= t <= e and fn != r["function"] for s, e, fn in cold)
        (during if beside else apart).append(num(r, "latency_ms"))
    return during, apart


def describe(lat):
    if not lat:
        return "0 | - | -"
    within = sum(1 for x in lat if x <= WITHIN_MS)
    return f"{len(lat)} | {within} ({100 * within / len(lat):.0f}%) | {statistics.median(lat):.1f} ms"


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        sys.exit(__doc__)
    print("| run | warm during another's cold call | within 8 ms | p50 | other warm calls | within 8 ms | p50 |")
    print("|---|---|---|---|---|---|---|")
    for d in argv:
        during, apart = split(calls(d))
        print(f"| {os.path.basename(os.path.normpath(d))} | {describe(during)} | {describe(apart)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
