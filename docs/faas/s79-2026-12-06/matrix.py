#!/usr/bin/env python3
"""Session 79's matrix tables: every mode of one or more bench/faas
invocations (each a results directory with every mode's rows in its
results.json and each run's calls-TIER-MODE-rN.csv), with issue 16's
targets worked out from the same invocation's ideal run: p50 at most 2x
ideal's, p99 at most 1.5x the cold-call limit's p99 (each call's heap over
the tier's read-back bandwidth measured at the invocation's start), timer
calls from the 4th p99 at most 1.2x ideal's.

Per run: p50, p99, p99.9, timer calls from the 4th p99, calls within 2x
ideal's p50, warm calls (at most 200 major faults in the handler), calls
with no answer (60 s), DRAM mean, DRAM left unused under the cap while a
call waited, the controller's CPU. With two or more invocations, a second
table gives each (tier, mode) as the median and the range over them.

Usage: matrix.py DIR [DIR ...]"""
import csv
import glob
import json
import os
import statistics
import sys

COLUMNS = ("p50 ms", "p99 ms", "p99.9 ms", "timer from call 4 p99 ms", "within 2x ideal", "warm",
           "no answer", "DRAM mean MiB", "unused while waiting MiB", "controller CPU s")


def calls_of(d, tier, mode, rnd):
    path = os.path.join(d, f"calls-{tier}-{mode}-r{rnd}.csv")
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []


def figures(d, r, within_ms):
    """The COLUMNS of one results row `r` of invocation `d`."""
    calls = calls_of(d, r["tier"], r["mode"], r["round"])
    ok = [c for c in calls if not c["error"]]
    within = sum(float(c["latency_ms"]) <= within_ms for c in ok)
    warm = sum(int(c["majflt"] or 0) <= 200 for c in ok)
    return (r["p50_ms"], r["p99_ms"], r["p999_ms"], r["timer_predictable_p99_ms"] or 0.0, within, warm,
            r["errors"], r["dram_mean_mib"], r["unused_while_waiting_mib"] or 0.0, r["cpu_controller_s"] or 0.0)


def invocation(d):
    """{(tier, mode): figures} of invocation `d`, and its targets."""
    rows = json.load(open(os.path.join(d, "results.json")))["rows"]
    ideal = next(r for r in rows if r["mode"] == "ideal")
    within_ms = 2 * ideal["p50_ms"]
    out = {(r["tier"], r["mode"]): figures(d, r, within_ms) for r in rows}
    limits = {r["tier"]: r["cold_limit_p99_ms"] for r in rows if r["cold_limit_p99_ms"]}
    targets = {"p50": within_ms, "timer": 1.2 * (ideal["timer_predictable_p99_ms"] or 0.0),
               "p99": {t: 1.5 * v for t, v in limits.items()}}
    return out, targets


def cell(v):
    return f"{v:.0f}" if isinstance(v, float) and v >= 10 else (f"{v:.1f}" if isinstance(v, float) else str(v))


def main():
    dirs = sys.argv[1:]
    if not dirs:
        raise SystemExit(__doc__)
    runs = [(d, *invocation(d)) for d in dirs]
    header = "| tier | mode | " + " | ".join(COLUMNS) + " |\n|" + "---|" * (len(COLUMNS) + 2)
    for d, figs, targets in runs:
        p99 = ", ".join(f"{t} {v:.0f} ms" for t, v in sorted(targets["p99"].items()))
        print(f"\n{d}: targets p50 {targets['p50']:.1f} ms, timer from call 4 p99 {targets['timer']:.1f} ms, "
              f"p99 {p99}\n")
        print(header)
        for (tier, mode), f in sorted(figs.items()):
            print(f"| {tier} | {mode} | " + " | ".join(cell(v) for v in f) + " |")
    if len(runs) < 2:
        return
    print(f"\nmedian (range) over {len(runs)} invocations\n")
    print(header)
    keys = sorted(set().union(*(figs.keys() for _, figs, _ in runs)))
    for key in keys:
        per = [figs[key] for _, figs, _ in runs if key in figs]
        cols = []
        for vals in zip(*per):
            med = statistics.median(vals)
            mid = f"{med:g}" if all(isinstance(v, int) for v in vals) else cell(med)
            cols.append(f"{mid} ({cell(min(vals))}-{cell(max(vals))})")
        print(f"| {key[0]} | {key[1]} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()
