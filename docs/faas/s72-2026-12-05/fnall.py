#!/usr/bin/env python3
"""One function's daemon events between two times, and the room plans that squeezed it (with when its next
call was expected).

  python3 fnall.py RUN_DIR fnNNNN FROM TO   (seconds from the trace's start)"""
import json
import sys

import runlog

run, fn, lo, hi = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
key = runlog.cgroups(run)[0][fn]
for ts, j in runlog.lines(run):
    if not lo < ts < hi:
        continue
    if j.get("event") == "room":
        for x in json.loads(j.get("squeezed", "[]")):
            if x["key"] == key:
                print(f"{ts:8.3f} room-squeezed via={j['via']} holds={x['holds'] >> 20} target={x['target'] >> 20} "
                      f"MiB, next call expected in {x.get('expected_wake_in')}")
    elif j.get("context") == key:
        print(f"{ts:8.3f}", j.get("event"), j.get("message", "").split(": ", 1)[-1][:140])
