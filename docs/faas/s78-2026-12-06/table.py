#!/usr/bin/env python3
"""Session 78's table: per bench/faas run directory, the issue-16 figures
(p50, p99, p99.9, timer calls from the 4th p99, calls within LIMIT ms, warm
calls (at most 200 major faults), cold calls (over 1000), the DRAM left
unused while a call waited, cap hits, the controller's CPU) from its
results.json and calls-*.csv. Usage: table.py [--limit 5.4] RUN_DIR..."""
import argparse
import csv
import glob
import json
import os


def row(run, limit):
    r = json.load(open(os.path.join(run, "results.json")))["rows"][0]
    calls = list(csv.DictReader(open(glob.glob(os.path.join(run, "calls-*.csv"))[0])))
    ok = [c for c in calls if not c["error"]]
    maj = [int(c["majflt"] or 0) for c in ok]
    within = sum(float(c["latency_ms"]) <= limit for c in ok)
    return (f"| {os.path.basename(run.rstrip('/'))} | {r['p50_ms']:.1f} | {r['p99_ms']:.0f} | {r['p999_ms']:.0f} "
            f"| {r['timer_predictable_p99_ms'] or 0:.0f} | {within} | {sum(m <= 200 for m in maj)} "
            f"| {sum(m > 1000 for m in maj)} | {r['cold_limit_p99_ms'] or 0:.0f} "
            f"| {r['unused_while_waiting_mib'] if r['unused_while_waiting_mib'] is not None else '-'} "
            f"| {r['cap_hits'] if r['cap_hits'] is not None else '-'} | {r['cpu_controller_s'] or 0:.1f} "
            f"| {r['errors']} | {r['deaths']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limit", type=float, default=5.4)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    print(f"| run | p50 ms | p99 | p99.9 | timer from call 4 p99 | within {a.limit} ms | warm | cold "
          "| cold limit p99 | unused while waiting MiB | cap hits | controller CPU s | errors | died |")
    print("|" + "---|" * 14)
    for run in a.runs:
        print(row(run, a.limit))


if __name__ == "__main__":
    main()
