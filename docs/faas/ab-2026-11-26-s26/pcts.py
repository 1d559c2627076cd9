#!/usr/bin/env python3
"""Per bench/faas run: p50 and p99 of every call, of the timer calls, and of
the timer calls from each function's 4th on (the ones its period can
predict; bench/faas/results.py's `timer_predictable_*`), how many of those
took over 25 ms (1.2x ideal's timer p99 in earlier runs: 15-21 ms), warm
calls (under 50 major faults) and the daemon's periodic read-backs.
Percentiles by nearest rank, as bench/faas/results.py.

  python3 pcts.py RUN_DIR...
"""
import csv
import glob
import gzip
import math
import os
import sys


def nearest_rank(values, q):
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))] if s else float("nan")


def periodic_read_backs(run):
    log = glob.glob(run + "/*daemon*.log*")[0]
    with (gzip.open if log.endswith(".gz") else open)(log, "rt") as f:
        return sum('"reason":"periodic"' in line and '"event":"bringing-back"' in line for line in f)


print("| run | p50 | p99 | timer p50 / p99 | timer from call 4: n, p50 / p99, over 25 ms | warm calls | periodic read-backs |")
print("|---|---|---|---|---|---|---|")
for run in sys.argv[1:]:
    rows = [r for r in csv.DictReader(open(glob.glob(run + "/calls-*.csv")[0])) if not r["error"]]
    lat = [float(r["latency_ms"]) for r in rows]
    timer = sorted((r for r in rows if r["class"] == "timer"), key=lambda r: float(r["t"]))
    seen, late = {}, []
    for r in timer:
        seen[r["function"]] = seen.get(r["function"], 0) + 1
        if seen[r["function"]] >= 4:
            late.append(float(r["latency_ms"]))
    tl = [float(r["latency_ms"]) for r in timer]
    warm = sum(int(r["majflt"]) < 50 for r in rows)
    print(f"| {os.path.basename(run.rstrip('/'))} | {nearest_rank(lat, .5):.0f} ms | {nearest_rank(lat, .99):.0f} ms "
          f"| {nearest_rank(tl, .5):.0f} / {nearest_rank(tl, .99):.0f} ms "
          f"| {len(late)}, {nearest_rank(late, .5):.1f} / {nearest_rank(late, .99):.0f} ms, {sum(x > 25 for x in late)} "
          f"| {warm} of {len(rows)} | {periodic_read_backs(run)} |")
