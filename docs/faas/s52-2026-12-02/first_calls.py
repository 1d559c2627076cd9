#!/usr/bin/env python3
"""Each run's warm calls (under 50 major faults), a function's first call
apart from its later ones: their handler's CPU time (median) and how many
took over 8 ms of CPU, beside the run's p50 and p99.

  python3 first_calls.py cpu1/calls-*.csv cpu2/calls-*.csv
"""
import csv
import statistics
import sys


def describe(rows):
    warm = [r for r in rows if int(r["majflt"]) < 50]
    if not warm:
        return "-"
    cpu = [float(r["handler_cpu_ms"]) for r in warm]
    return f"{len(warm)} warm, CPU p50 {statistics.median(cpu):.1f} ms, {sum(c > 8 for c in cpu)} over 8 ms"


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        with open(path) as f:
            rows = sorted((r for r in csv.DictReader(f) if not r["error"]), key=lambda r: float(r["t"]))
        seen, first, later = set(), [], []
        for r in rows:
            (later if r["function"] in seen else first).append(r)
            seen.add(r["function"])
        lat = sorted(float(r["latency_ms"]) for r in rows)
        print(f"{path}: p50 {lat[len(lat) // 2]:.1f} ms, p99 {lat[int(0.99 * len(lat))]:.1f} ms")
        print(f"  first calls: {describe(first)}")
        print(f"  later calls: {describe(later)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
