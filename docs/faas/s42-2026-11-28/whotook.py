#!/usr/bin/env python3
"""For each bench/faas memext run: its calls by whether they faulted (any
major fault) and, for those that did after an earlier call of the same
function, whether memext took memory from the function in between (a
push-out or a lowering by its reclaimer: `pushing-out`, `reclaimed`) or
not (the kernel's reclaim at the parent's cap took it). Usage: whotook.py RUN_DIR..."""
import collections
import csv
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import wakes  # noqa: E402

print("| run | calls with no major fault | faulted, memext took memory since the last call | faulted, memext took none (the kernel did) | first calls faulted |")
print("|---|---|---|---|---|")
for d in sys.argv[1:]:
    meta = json.load(open(os.path.join(d, "functions-zram-memext-r0.json")))
    rows = sorted(csv.DictReader(open(os.path.join(d, "calls-zram-memext-r0.csv"))), key=lambda r: float(r["t"]))
    log = os.path.join(d, "memext-daemon-zram-r0.log")
    with (open(log) if os.path.exists(log) else gzip.open(log + ".gz", "rt")) as f:
        by_cg = wakes.parse(f.readlines(), set(meta["cgroups"].values()), meta["trace_start_epoch"])
    took = {fn: [t for t, ev, _ in by_cg.get(cg, []) if ev in ("pushing-out", "reclaimed")]
            for fn, cg in meta["cgroups"].items()}
    prev, c = {}, collections.Counter()
    for r in rows:
        fn, t, maj = r["function"], float(r["t"]), int(r.get("majflt") or 0)
        if maj == 0:
            c["none"] += 1
        elif fn not in prev:
            c["first"] += 1
        elif any(prev[fn] < x < t for x in took[fn]):
            c["memext"] += 1
        else:
            c["kernel"] += 1
        prev[fn] = t
    print(f"| {os.path.basename(d.rstrip('/'))} | {c['none']} | {c['memext']} | {c['kernel']} | {c['first']} |")
