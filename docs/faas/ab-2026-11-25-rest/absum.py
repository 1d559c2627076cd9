#!/usr/bin/env python3
"""The A/B table of this directory: one row per run directory given (a
bench/faas run of the memext mode on zram), from its results.csv, its
calls (the timer calls from each function's 5th on; warm calls: fewer than
100 major faults in the handler) and its daemon log (read-backs; wakes
seen only at a tick). Usage: absum.py DIR..."""
import collections
import csv
import gzip
import json
import os
import statistics
import sys


def read_backs(d):
    """(count, GiB) of the daemon's read-backs, and of its wakes (from
    idle) those seen only at a tick (of all)."""
    n = b = tick = wakes = 0
    log = os.path.join(d, "memext-daemon-zram-r0.log")
    with (open(log) if os.path.exists(log) else gzip.open(log + ".gz", "rt")) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") == "read-back":
                n, b = n + 1, b + e["bytes"]
            if e.get("event") == "woke":
                wakes += 1
                tick += e["message"].endswith(", tick)")
    return n, b / 2**30, tick, wakes


def late_timer_calls(d):
    """(n, p50, p99) ms of the timer calls from each function's 5th on."""
    with open(os.path.join(d, "calls-zram-memext-r0.csv")) as f:
        rows = sorted(csv.DictReader(f), key=lambda r: float(r["t"]))
    seen, late = collections.Counter(), []
    for r in rows:
        if r["class"] == "timer":
            seen[r["function"]] += 1
            if seen[r["function"]] > 4:
                late.append(float(r["latency_ms"]))
    late.sort()
    return len(late), statistics.median(late), late[min(len(late) - 1, int(0.99 * len(late)))]


def warm_calls(d):
    """Calls whose handler took fewer than 100 major faults (its function was
    in DRAM), of all."""
    with open(os.path.join(d, "calls-zram-memext-r0.csv")) as f:
        rows = list(csv.DictReader(f))
    return sum(1 for r in rows if r.get("majflt") and int(r["majflt"]) < 100), len(rows)


def main():
    print("| run | p50 | p99 | p99.9 | timer p50 / p99 | timer calls 5th+ (n: p50 / p99) | poisson p50 / p99 | "
          "bursty p50 / p99 | DRAM mean (min) | unused while waiting | controller CPU s | read-backs (GiB) | warm calls | "
          "wakes seen at a tick |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in sys.argv[1:]:
        with open(os.path.join(d, "results.csv")) as f:
            r = next(x for x in csv.DictReader(f) if x["mode"] == "memext")
        ms = lambda k: f"{float(r[k]):.0f}"  # noqa: E731
        n, gib, tick, wakes = read_backs(d)
        ln, lp50, lp99 = late_timer_calls(d)
        w, tot = warm_calls(d)
        print(f"| {os.path.basename(d.rstrip('/'))} | {ms('p50_ms')} ms | {ms('p99_ms')} ms | {ms('p999_ms')} ms | "
              f"{ms('timer_p50_ms')} / {ms('timer_p99_ms')} ms | {ln}: {lp50:.0f} / {lp99:.0f} ms | "
              f"{ms('poisson_p50_ms')} / {ms('poisson_p99_ms')} ms | {ms('bursty_p50_ms')} / {ms('bursty_p99_ms')} ms | "
              f"{ms('dram_mean_mib')} ({ms('dram_min_mib')}) MiB | {float(r['unused_while_waiting_mib']):.0f} MiB | "
              f"{float(r['cpu_controller_s']):.1f} | {n} ({gib:.1f}) | {w} of {tot} | {tick} of {wakes} |")


if __name__ == "__main__":
    main()
