#!/usr/bin/env python3
"""Recorded wakes of timer functions that came before a call with none between (more than 3 s after the call
before), by how early: under 1 s, 1-3 s, 3 s to a fifth of the period, more.

  python3 early.py RUN_DIR..."""
import collections
import sys

import runlog

buckets, examples = collections.Counter(), []
for run in sys.argv[1:]:
    calls = runlog.calls(run)
    for fn, ts, j in runlog.events(run, runlog.RECORDED):
        cs = [float(r["t"]) for r in calls[fn]]
        if not calls.get(fn) or calls[fn][0]["class"] != "timer" or len(cs) < 2:
            continue
        period = sorted(b - a for a, b in zip(cs, cs[1:]))[len(cs) // 2 - 1]
        nxt, prv = [c for c in cs if c > ts], [c for c in cs if c <= ts]
        if not nxt or not prv or ts - prv[-1] < 3:
            continue
        early = nxt[0] - ts
        b = "<1s" if early < 1 else "1-3s" if early < 3 else ("3s-20%" if early / period < 0.2 else ">20%")
        buckets[b] += 1
        if b == "3s-20%":
            examples.append((run, fn, round(ts, 1), round(early, 2), round(period, 1), j["event"], j.get("via")))
print(dict(buckets))
for e in examples:
    print(e)
