#!/usr/bin/env python3
"""Warm calls of bench/faas runs (200 major faults or fewer, before and in the
handler) split at 3.4 ms: how many, and the medians of their parts (latency,
handler, time to the handler, faults before and in it, handler CPU).

  python3 slow_warm.py RUN_DIR...   (a results directory of one memext zram run)"""
import csv
import statistics
import sys

KEYS = ("latency_ms", "handler_ms", "to_handler_ms", "majflt", "minflt", "pre_majflt", "pre_minflt", "handler_cpu_ms")


def value(r, k):
    return float(r[k] or 0)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for run in sys.argv[1:]:
        with open(f"{run}/calls-zram-memext-r0.csv") as f:
            rows = list(csv.DictReader(f))
        warm = [r for r in rows if value(r, "majflt") + value(r, "pre_majflt") <= 200 and not r["error"]]
        for name, rs in (("fast", [r for r in warm if value(r, "latency_ms") <= 3.4]),
                         ("slow", [r for r in warm if value(r, "latency_ms") > 3.4])):
            med = {k: round(statistics.median(value(r, k) for r in rs), 2) for k in KEYS} if rs else {}
            print(f"{run} warm {len(warm)} {name} {len(rs)} medians {med}")


if __name__ == "__main__":
    main()
