#!/usr/bin/env python3
"""Session 84's A/B figures beside abtable.py's: per bench/faas run
directory, its answered calls by latency (how many under each bound), the
mean and the 50th/75th/90th percentiles, and, for the woken calls (those
whose handler mapped pages or faulted: 1,000 minor or 50 major faults or
more, calltime.py's cold and mapped groups together), the median time from
the invoker's send to the handler's start and the handler's own.

Usage: spread.py RUN_DIR..."""
import bisect
import csv
import glob
import gzip
import os
import statistics
import sys

BOUNDS = [3.3, 8, 20, 50, 100, 150, float("inf")]


def calls(run):
    path = glob.glob(os.path.join(run, "calls-*.csv*"))[0]
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return [r for r in csv.DictReader(f) if not r["error"]]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    heads = " | ".join(f"<= {b:g}" if b != float("inf") else "more" for b in BOUNDS)
    print(f"| run | {heads} | mean ms | p50 | p75 | p90 | woken calls | to handler ms | handler ms |")
    print("|---|" + "---|" * (len(BOUNDS) + 7))
    for run in sys.argv[1:]:
        rows = calls(run)
        lat = sorted(float(r["latency_ms"]) for r in rows)
        counts, prev = [], 0
        for b in BOUNDS:
            n = bisect.bisect_right(lat, b)
            counts.append(n - prev)
            prev = n
        q = lambda p: lat[int(p * (len(lat) - 1))]  # noqa: E731
        woken = [r for r in rows if int(r["minflt"] or 0) >= 1000 or int(r["majflt"] or 0) >= 50]
        med = lambda k: statistics.median(float(r[k]) for r in woken)  # noqa: E731
        print(f"| {os.path.basename(run.rstrip('/'))} | " + " | ".join(map(str, counts)) +
              f" | {statistics.mean(lat):.1f} | {q(.5):.1f} | {q(.75):.0f} | {q(.9):.0f} | {len(woken)} | "
              f"{med('to_handler_ms'):.1f} | {med('handler_ms'):.1f} |")


if __name__ == "__main__":
    main()
