#!/usr/bin/env python3
"""Periodic bring-backs: from the command to its first read-back's end, and calls that came before it ended."""
import collections
import statistics
import sys

import runlog

delays, late = [], []
for run in sys.argv[1:]:
    calls = runlog.calls(run)
    ev = collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, ("bringing-back", "read-back")):
        if j["event"] == "bringing-back":
            ev[fn].append((ts, "bb", j.get("reason")))
        else:
            ev[fn].append((ts - j.get("seconds", 0), "rb", ts))
    for fn, es in ev.items():
        for i, (ts, k, x) in enumerate(es):
            if k != "bb" or x != "periodic":
                continue
            rb = next((e for e in es[i + 1:] if e[1] == "rb"), None)
            if not rb:
                continue
            start, end = rb[0], rb[2]
            delays.append(start - ts)
            nxt = [r for r in calls.get(fn, []) if float(r["t"]) > ts]
            if nxt and float(nxt[0]["t"]) < end and float(nxt[0]["t"]) - ts < 10:
                late.append((run, fn, round(ts, 2), round(start - ts, 2), round(end - ts, 2),
                             round(float(nxt[0]["t"]) - ts, 2), nxt[0]["majflt"], nxt[0]["latency_ms"]))
print("bring-back to read-back start: quantiles", [round(x, 3) for x in statistics.quantiles(delays, n=20)],
      "max", round(max(delays), 2), "n", len(delays))
print("calls before the read-back ended:", len(late))
for x in late:
    print(x)
