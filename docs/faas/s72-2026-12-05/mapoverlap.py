#!/usr/bin/env python3
"""Map-backs (MADV_COLLAPSE of a function's read-back blocks) under way while a call of that function ran: the
call (time, latency, handler, minor faults) and the map-back's span, MiB and whether it gave way; per run.

  python3 mapoverlap.py RUN_DIR..."""
import sys

import runlog

for run in sys.argv[1:]:
    calls = runlog.calls(run)
    total, hits = 0, []
    for fn, end, j in runlog.events(run, ("mapped-back",)):
        start = end - j["seconds"]
        total += 1
        for r in calls.get(fn, []):
            t = float(r["t"])
            if t < end and t + float(r["latency_ms"]) / 1e3 > start:
                hits.append((fn, round(t, 2), r["latency_ms"], r["handler_ms"], r["minflt"], round(start, 3),
                             round(end, 3), j["bytes"] >> 20, j.get("gave_way")))
    print(f"{run}: {len(hits)} of {total} map-backs under way during a call of their function")
    for h in hits:
        print("  ", h)
