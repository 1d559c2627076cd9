#!/usr/bin/env python3
"""A bench/faas memext run's wakes, onsets and warm calls by how the daemon
saw them (event, poll, tick) and whether a call of that function was in
flight (from 50 ms before it came to 0.5 s after its answer); then the
readings fired by a kernel event with no call in flight against those with
one: their faults and CPU. Usage: onsets.py RUN_DIR TIER [MODE [ROUND]]
(default memext, round 0)"""
import collections
import csv
import datetime
import gzip
import json
import os
import sys

d, tier = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "memext"
rnd = sys.argv[4] if len(sys.argv) > 4 else "0"
fj = json.load(open(f"{d}/functions-{tier}-{mode}-r{rnd}.json"))
t0, byc = fj["trace_start_epoch"], {v: k for k, v in fj["cgroups"].items()}
calls = collections.defaultdict(list)
for r in csv.DictReader(open(f"{d}/calls-{tier}-{mode}-r{rnd}.csv")):
    calls[r["function"]].append((float(r["t"]), float(r["t"]) + float(r["latency_ms"]) / 1000))
log = f"{d}/{mode}-daemon-{tier}-r{rnd}.log"
by, fired = collections.defaultdict(collections.Counter), {"no call": [], "in a call": []}
with (open(log) if os.path.exists(log) else gzip.open(log + ".gz", "rt")) as f:
    for line in f:
        if not line.startswith("{"):
            continue
        j = json.loads(line)
        if j.get("event") not in ("onset", "woke", "warm-call") or j.get("context") not in byc:
            continue
        ts = datetime.datetime.fromisoformat(j["timestamp"].replace("Z", "+00:00")).timestamp() - t0
        fn = byc[j["context"]]
        where = "in a call" if any(a - 0.05 <= ts <= b + 0.5 for a, b in calls[fn]) else "no call"
        by[(j["event"], j.get("via"))][where] += 1
        if j["event"] in ("onset", "woke") and j.get("via") == "event":
            fired[where].append((j.get("faults", 0), j.get("cpu_us", 0)))
for k, v in sorted(by.items()):
    print(f"{k[0]:9s} by {k[1]:5s}: in a call {v['in a call']:4d}, no call {v['no call']:4d}")
for where, v in fired.items():
    if not v:
        continue
    f, c, n = sorted(x[0] for x in v), sorted(x[1] for x in v), len(v)
    print(f"fired, {where}: {n}; faults p50 {f[n // 2]}, p90 {f[9 * n // 10]}; CPU p50 {c[n // 2]} us, "
          f"p90 {c[9 * n // 10]} us; under 8 faults {sum(x < 8 for x in f)}")
