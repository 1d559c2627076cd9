#!/usr/bin/env python3
"""Session 85: per bench/faas run directory, the warm calls (no major fault
in their handler) and how many of them took over LIMIT ms (2x ideal's
p50), with where the slow ones' time went: from the invoker's send to the
handler (the function waiting for a CPU to run on), the handler itself,
and after it (its answer back to the invoker). Medians.
Usage: warmslow.py [--limit 3.5] RUN_DIR..."""
import argparse
import csv
import glob
import gzip
import os
import statistics


def calls(run):
    path = glob.glob(os.path.join(run, "calls-*.csv*"))[0]
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return [r for r in csv.DictReader(f) if not r["error"]]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limit", type=float, default=3.5, help="ms: 2x ideal's p50")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    print(f"| run | warm | over {a.limit:g} ms | slow: to handler ms | handler ms | after ms |")
    print("|---|---|---|---|---|---|")
    for run in a.runs:
        warm = [r for r in calls(run) if int(r["majflt"] or 0) == 0]
        slow = [r for r in warm if float(r["latency_ms"]) > a.limit]
        to_h = [float(r["to_handler_ms"]) for r in slow]
        h = [float(r["handler_ms"]) for r in slow]
        after = [float(r["latency_ms"]) - float(r["to_handler_ms"]) - float(r["handler_ms"]) for r in slow]
        print(f"| {os.path.basename(run.rstrip('/'))} | {len(warm)} | {len(slow)} | {med(to_h):.2f} "
              f"| {med(h):.2f} | {med(after):.2f} |")


if __name__ == "__main__":
    main()
