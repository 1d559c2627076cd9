#!/usr/bin/env python3
"""For a bench/faas run of a build with `daemon.touches` on: of the calls that
faulted although memext took nothing from their function since its previous
call (as whotook.py counts them), how many had an ask logged (an event with
`referenced_kib`) from 0.5 s before that previous call up to the call.
Usage: askedbefore.py RUN_DIR..."""
import collections
import csv
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../bench/faas"))
import timeline  # noqa: E402
import wakes  # noqa: E402

for d in sys.argv[1:]:
    meta = json.load(open(os.path.join(d, "functions-zram-memext-r0.json")))
    cg2fn, start = {v: k for k, v in meta["cgroups"].items()}, meta["trace_start_epoch"]
    log = os.path.join(d, "memext-daemon-zram-r0.log")
    with (open(log) if os.path.exists(log) else gzip.open(log + ".gz", "rt")) as f:
        lines = f.readlines()
    by_cg = wakes.parse(lines, set(meta["cgroups"].values()), start)
    took = {fn: [t for t, ev, _ in by_cg.get(cg, []) if ev in ("pushing-out", "reclaimed")]
            for fn, cg in meta["cgroups"].items()}
    asks = collections.defaultdict(list)
    for line in lines:
        if "referenced_kib" not in line:
            continue
        e = json.loads(line)
        fn = cg2fn.get(e.get("context"))
        if fn and e.get("referenced_kib") is not None:
            asks[fn].append(timeline.epoch(e["timestamp"]) - start)
    rows = sorted(csv.DictReader(open(os.path.join(d, "calls-zram-memext-r0.csv"))), key=lambda r: float(r["t"]))
    prev, c = {}, collections.Counter()
    for r in rows:
        fn, t, maj = r["function"], float(r["t"]), int(r.get("majflt") or 0)
        if maj > 0 and fn in prev and not any(prev[fn] < x < t for x in took[fn]):
            c["asked" if any(prev[fn] - 0.5 <= x < t for x in asks[fn]) else "not asked"] += 1
        prev[fn] = t
    print(f"{os.path.basename(d.rstrip('/'))}: {c['asked']} asked, {c['not asked']} not asked")
