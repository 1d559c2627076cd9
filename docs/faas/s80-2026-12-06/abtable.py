#!/usr/bin/env python3
"""Session 80's A/B table: per bench/faas run directory and tier, the
issue-16 figures (p50, p99, p99.9, timer calls from the 4th p99, calls
within LIMIT ms, warm calls (at most 200 major faults), cold calls (over
1000), the DRAM left unused while a call waited, cap hits, the
controller's CPU) from its results.json and calls-*.csv, then the median of
each column per label (the directory's name up to `-r`) and tier.
Usage: abtable.py [--limit 4.0] RUN_DIR..."""
import argparse
import collections
import csv
import glob
import json
import os
import statistics

COLS = ["p50", "p99", "p99.9", "timer p99", "within", "warm", "cold", "unused MiB", "cap hits", "CPU s"]


def rows(run, limit):
    for r in json.load(open(os.path.join(run, "results.json")))["rows"]:
        calls = list(csv.DictReader(open(glob.glob(os.path.join(run, f"calls-{r['tier']}-*.csv"))[0])))
        ok = [c for c in calls if not c["error"]]
        maj = [int(c["majflt"] or 0) for c in ok]
        yield r["tier"], [r["p50_ms"], r["p99_ms"], r["p999_ms"], r["timer_predictable_p99_ms"] or 0,
                          sum(float(c["latency_ms"]) <= limit for c in ok), sum(m <= 200 for m in maj),
                          sum(m > 1000 for m in maj), r["unused_while_waiting_mib"] or 0, r["cap_hits"] or 0,
                          r["cpu_controller_s"] or 0]


def fmt(v):
    return f"{v:.1f}" if isinstance(v, float) and v < 100 else f"{v:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limit", type=float, default=4.0, help="ms: 2x ideal's p50")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    print("| run | tier | " + " | ".join(COLS) + " |")
    print("|---" * (len(COLS) + 2) + "|")
    by = collections.defaultdict(list)
    for run in a.runs:
        name = os.path.basename(run.rstrip("/"))
        for tier, vals in rows(run, a.limit):
            by[(name.rsplit("-r", 1)[0], tier)].append(vals)
            print(f"| {name} | {tier} | " + " | ".join(fmt(v) for v in vals) + " |")
    print()
    print("| label | tier | runs | " + " | ".join(COLS) + " |")
    print("|---" * (len(COLS) + 3) + "|")
    for (label, tier), runs in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        med = [statistics.median(col) for col in zip(*runs)]
        print(f"| {label} | {tier} | {len(runs)} | " + " | ".join(fmt(float(v)) for v in med) + " |")


if __name__ == "__main__":
    main()
