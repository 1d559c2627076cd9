#!/usr/bin/env python3
"""Timer calls from the 4th that came cold: what the daemon did between the previous call and this one."""
import collections
import sys

import runlog

TAGGED = ("woke", "onset", "bringing-back", "reclaimed", "pushed-out", "pushing-out", "settled", "became-idle")
for run in sys.argv[1:]:
    ev = collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, TAGGED):
        e = j["event"]
        tag = e + (":" + j.get("reason", "") if e == "bringing-back" else "") + (
            ":" + j.get("via", "") if e in ("woke", "onset") else "")
        ev[fn].append((ts, tag))
    print("==", run)
    for fn, rows in sorted(runlog.calls(run).items()):
        if rows[0]["class"] != "timer":
            continue
        prev = 0
        for k, r in enumerate(rows, 1):
            t = float(r["t"])
            if k >= 4 and int(r["majflt"]) > 200:
                seq = [f"{ts:.2f} {tag}" for ts, tag in ev[fn] if prev < ts < t + 0.01]
                print(f" {fn} call{k} t={t:.2f} lat={r['latency_ms']} maj={r['majflt']} prev={prev:.2f}")
                print("    ", "; ".join(seq))
            prev = t
