#!/usr/bin/env python3
"""Per run: p50, p99, timer calls from the 4th p50/p99 (results.json), the calls within 2x the ideal p50 given
(default 6.18 ms: 2 x 3.09, this boot's first ideal run) and within 3.4 ms, and the warm calls (at most 200 major
faults).

    python3 within.py [--limit MS] RUN_DIR...
"""
import argparse
import csv
import glob
import json

ap = argparse.ArgumentParser()
ap.add_argument("--limit", type=float, default=6.18)
ap.add_argument("runs", nargs="+")
a = ap.parse_args()
print(f"| run | p50 | p99 | timer from 4 p50 / p99 | cold limit p99 | within {a.limit} ms | within 3.4 ms | warm |")
print("|---|---|---|---|---|---|---|---|")
for run in a.runs:
    rows = [r for r in csv.DictReader(open(glob.glob(f"{run}/calls-*.csv")[0])) if not r["error"]]
    lat = [float(r["latency_ms"]) for r in rows]
    d = json.load(open(f"{run}/results.json"))["rows"][0]
    limit = d.get("cold_limit_p99_ms")
    print(f"| {run.rstrip('/').split('/')[-1]} | {d['p50_ms']:.1f} | {d['p99_ms']:.0f} | "
          f"{d['timer_predictable_p50_ms']:.1f} / {d['timer_predictable_p99_ms']:.0f} | "
          f"{'-' if limit is None else f'{limit:.0f}'} | {sum(x <= a.limit for x in lat)} | {sum(x <= 3.4 for x in lat)} | "
          f"{sum(int(r['majflt']) <= 200 for r in rows)} |")
