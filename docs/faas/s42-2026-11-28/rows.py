#!/usr/bin/env python3
"""One row per bench/faas memext run of session 42: calls not seen (wakes.py),
wakes/onsets/warm calls with no call (wakes.py's tally), warm calls with a
call and with none, the daemon's no-call readings with a call near and with
none, p50, p99, timer calls from the 4th p50/p99, calls within 8 ms,
unused while calls waited, controller CPU. Usage: rows.py RUN_DIR..."""
import collections
import csv
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import timeline  # noqa: E402
import wakes  # noqa: E402

print("| run | calls not seen | warm calls: with a call / none | no-call: a call near / none | p50 | p99 "
      "| timer from call 4 p50 / p99 | within 8 ms | unused while waiting | controller CPU s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    meta = json.load(open(os.path.join(d, "functions-zram-memext-r0.json")))
    rows = list(csv.DictReader(open(os.path.join(d, "calls-zram-memext-r0.csv"))))
    res = list(csv.DictReader(open(os.path.join(d, "results.csv"))))[0]
    end = json.load(open(os.path.join(d, "params.json")))["trace"]["seconds"]
    log = os.path.join(d, "memext-daemon-zram-r0.log")
    with (open(log) if os.path.exists(log) else gzip.open(log + ".gz", "rt")) as f:
        lines = f.readlines()
    by_cg = wakes.parse(lines, set(meta["cgroups"].values()), meta["trace_start_epoch"])
    events = {fn: by_cg.get(cg, []) for fn, cg in meta["cgroups"].items()}
    calls = collections.defaultdict(list)
    for r in rows:
        calls[r["function"]].append(float(r["t"]))
    missed, _ = wakes.unseen(sorted(rows, key=lambda r: float(r["t"])), events)
    warm = collections.Counter()
    for fn, evs in events.items():
        for t, ev, _ in evs:
            if ev == "warm-call" and t <= end - wakes.END_MARGIN:
                near = any(wakes.MATCH[0] <= t - c <= wakes.MATCH[1] for c in calls.get(fn, []))
                warm["call" if near else "none"] += 1
    nc = wakes.touch_verdicts(calls, events, end)
    within = sum(float(r["latency_ms"]) <= 8.0 for r in rows)
    print(f"| {os.path.basename(d.rstrip('/'))} | {sum(missed.values())} | {warm['call']} / {warm['none']} "
          f"| {nc['a call near']} / {nc['no call near']} | {float(res['p50_ms']):.0f} ms | {float(res['p99_ms']):.0f} ms "
          f"| {float(res['timer_predictable_p50_ms']):.0f} / {float(res['timer_predictable_p99_ms']):.0f} ms "
          f"| {within} | {float(res['unused_while_waiting_mib']):.0f} MiB | {float(res['cpu_controller_s']):.1f} |")
