#!/usr/bin/env python3
"""Writes, for bench/faas runs, each function's calls and the wakes the daemon recorded (woke, onset, warm-call,
call events of its log) in the text form `replay_wakes` reads: `f NAME CLASS`, `c T...`, `w T...` (seconds from
the trace's start, shifted by +300 s so that none is negative), and `v T...`: those of the wakes that were warm
calls, seen by CPU alone (session 74; `grep -v '^v '` replays them as plain wakes, as before)."""
import collections
import sys

import runlog

SHIFT = 300.0
for run in sys.argv[1:]:
    calls = runlog.calls(run)
    wakes, by_cpu = collections.defaultdict(list), collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, runlog.RECORDED):
        wakes[fn].append(ts)
        if j["event"] == "warm-call":
            by_cpu[fn].append(ts)
    print(f"r {run}")
    for fn in sorted(calls):
        print(f"f {fn} {calls[fn][0]['class']}")
        print("c " + " ".join(f"{float(r['t']) + SHIFT:.3f}" for r in calls[fn]))
        print("w " + " ".join(f"{t + SHIFT:.3f}" for t in sorted(wakes[fn])))
        print("v " + " ".join(f"{t + SHIFT:.3f}" for t in sorted(by_cpu[fn])))
