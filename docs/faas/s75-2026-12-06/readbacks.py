#!/usr/bin/env python3
"""The daemon's read-backs per run by reason (woke, periodic, refill, follows-leader): (count, median ms, median ms
per MiB); and its lowerings (`reclaimed`): count, median ms. Reads each run's daemon log (JSON lines, or gzipped).

    python3 readbacks.py RUN_DIR...
"""
import collections
import glob
import gzip
import json
import os
import statistics
import sys

for run in sys.argv[1:]:
    log = sorted(glob.glob(os.path.join(run, "*daemon*.log*")))[0]
    opener = gzip.open if log.endswith(".gz") else open
    why, out, lowerings = {}, collections.defaultdict(list), []
    with opener(log, "rt") as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            ev, ctx = d.get("event"), d.get("context")
            if ev == "bringing-back":
                why[ctx] = d.get("reason", "?")
            elif ev == "read-back" and d.get("bytes"):
                out[why.get(ctx, "?")].append((d["bytes"] / 2**20, d["seconds"] * 1e3))
            elif ev == "reclaimed" and d.get("ms") is not None:
                lowerings.append(float(d["ms"]))
    per = {k: (len(v), round(statistics.median(ms for _, ms in v), 1),
               round(statistics.median(ms / max(mib, 0.1) for mib, ms in v), 2)) for k, v in sorted(out.items())}
    med = round(statistics.median(lowerings), 1) if lowerings else None
    print(os.path.basename(run.rstrip("/")), per, "lowerings", len(lowerings), med)
