#!/usr/bin/env python3
"""The cold calls of each run directory given (a bench/faas run of the
memext mode on zram; cold: 100 or more major faults in the handler, as
absum.py): how many, their latency's p50, p90 and p99, and of the timer
calls among them the p50, p90 and the slowest. Usage: coldtail.py DIR..."""
import csv
import os
import sys

COLD_MAJFLT = 100


def q(values, p):
    """The nearest-rank quantile `p` of `values` (None when empty)."""
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))] if v else None


def main(dirs):
    print("| run | cold calls | p50 | p90 | p99 | timer cold calls | p50 | p90 | slowest |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in dirs:
        with open(os.path.join(d, "calls-zram-memext-r0.csv")) as f:
            rows = [r for r in csv.DictReader(f) if int(r.get("majflt") or 0) >= COLD_MAJFLT]
        cold = [float(r["latency_ms"]) for r in rows]
        timer = [float(r["latency_ms"]) for r in rows if r["class"] == "timer"]
        print(f"| {os.path.basename(d.rstrip('/'))} | {len(cold)} | {q(cold, .5):.0f} | {q(cold, .9):.0f} | "
              f"{q(cold, .99):.0f} | {len(timer)} | {q(timer, .5):.0f} | {q(timer, .9):.0f} | {max(timer):.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
