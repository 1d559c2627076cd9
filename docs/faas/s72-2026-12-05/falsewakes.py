#!/usr/bin/env python3
"""Recorded wakes of timer functions more than 3 s after a call and 0.5 s before the next, by event, via and
whether held, per group of runs (groups apart by ';', runs by ',').

  python3 falsewakes.py "RUN,RUN;RUN,RUN" """
import collections
import sys

import runlog

for group in sys.argv[1].split(";"):
    c = collections.Counter()
    for run in group.split(","):
        calls = runlog.calls(run)
        for fn, ts, j in runlog.events(run, runlog.RECORDED):
            if not calls.get(fn) or calls[fn][0]["class"] != "timer" or ts < 0:
                continue
            cs = [float(r["t"]) for r in calls[fn]]
            prev = max([x for x in cs if x <= ts + 0.05], default=-99)
            nxt = min([x for x in cs if x > ts + 0.05], default=1e9)
            if ts - prev > 3 and nxt - ts > 0.5:
                c[(j["event"], j.get("via"), j.get("held"))] += 1
    print(group, sum(c.values()), sorted(c.items(), key=lambda x: -x[1]))
