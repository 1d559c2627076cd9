#!/usr/bin/env python3
"""What the slowest calls of a bench/faas run are made of: the calls at or
above the run's 95th percentile against the other cold calls (over 1000
major faults): medians of their major faults, handler time, the handler's
CPU time and its wait on a run queue (function.py's schedstat figures), the
time from sending to the handler, and how many other cold calls were in
flight when each began.

  python3 slowcalls.py RUN_DIR...
"""
import csv
import glob
import os
import statistics
import sys


def calls(run):
    path = glob.glob(os.path.join(run, "calls-*-memext-r0.csv"))[0]
    for r in csv.DictReader(open(path)):
        if not r["error"]:
            yield {"t": float(r["t"]), "s": float(r["latency_ms"]) / 1000, "majflt": int(r["majflt"] or 0),
                   "handler": float(r["handler_ms"]), "cpu": float(r["handler_cpu_ms"]),
                   "runq": float(r["handler_wait_ms"]), "to_handler": float(r["to_handler_ms"])}


def summary(cs, everyone):
    def cold_in_flight(c):
        return sum(1 for o in everyone if o is not c and o["majflt"] > 1000 and o["t"] <= c["t"] < o["t"] + o["s"])
    med = lambda k: round(statistics.median(c[k] for c in cs), 1)
    return (f"{len(cs)} calls: major faults {med('majflt')}, handler {med('handler')} ms, its CPU {med('cpu')} ms, "
            f"run-queue wait {med('runq')} ms, to the handler {med('to_handler')} ms, other cold calls in flight "
            f"{statistics.median(cold_in_flight(c) for c in cs)}")


for run in sys.argv[1:]:
    cs = list(calls(run))
    lat = sorted(c["s"] for c in cs)
    p95 = lat[int(0.95 * len(lat))]
    print(f"{run}: p95 {p95 * 1000:.0f} ms")
    print("  slowest:   ", summary([c for c in cs if c["s"] >= p95], cs))
    print("  other cold:", summary([c for c in cs if c["majflt"] > 1000 and c["s"] < p95], cs))
