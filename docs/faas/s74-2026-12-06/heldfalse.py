#!/usr/bin/env python3
"""Wakes seen while held for a predicted call (a poll judged with `held`) that were no call: the next call came
more than 1 s later. For each, whether the daemon pushed the function out before that call, and that call's
latency and major faults."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s72-2026-12-05"))
import runlog  # noqa: E402

for run in sys.argv[1:]:
    calls = runlog.calls(run)
    ev = {}
    for fn, ts, j in runlog.events(run, ("woke", "onset", "pushing-out", "reclaimed")):
        ev.setdefault(fn, []).append((ts, j))
    n_held = n_false = n_pushed = 0
    slow = []
    for fn, rows in ev.items():
        ts_calls = [float(r["t"]) for r in calls.get(fn, [])]
        for ts, j in rows:
            if j["event"] not in ("woke", "onset") or not j.get("held"):
                continue
            n_held += 1
            nxt = [k for k, t in enumerate(ts_calls) if t > ts - 0.2]
            if not nxt:
                continue
            k = nxt[0]
            if ts_calls[k] - ts < 1.0:
                continue
            n_false += 1
            pushed = any(e["event"] == "pushing-out" for t, e in rows if ts < t < ts_calls[k])
            n_pushed += pushed
            r = calls[fn][k]
            slow.append((fn, round(ts, 2), round(ts_calls[k] - ts, 2), pushed, r["latency_ms"], r["majflt"], r["class"]))
    print(f"== {run}: held wakes {n_held}, no call within 1 s {n_false}, pushed out before the call {n_pushed}")
    for s in slow:
        print("  ", s)
