#!/usr/bin/env python3
"""Records the engine keeps in a function's history (a wake, an onset, a warm call) within 1.5 s after something
memext did to it and before its next call.

    python3 afterrecords.py map-back RUN_DIR...    after each map-back: which records, and how many saw exactly as
                                                  many faults as the map-back mapped pages one by one
                                                  (`populate_faults`, or session 68's `populated`)
    python3 afterrecords.py read-back RUN_DIR...   after each read-back for no wake (a refill, a predicted call): how
                                                  many records saw over 100 faults (session 71's read-back of the
                                                  written pages of file mappings, through the page tables)
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s72-2026-12-05"))
import runlog  # noqa: E402

WINDOW = 1.5


def after(es, ts, starts):
    """The first record of `es` within WINDOW after `ts` and before the next call, or None."""
    nxt = min([c for c in starts if c > ts] or [float("inf")])
    recs = [(e, j) for t, e, j in es if ts < t < min(ts + WINDOW, nxt - 0.05) and e in runlog.RECORDED]
    return recs[0] if recs else None


def run_counts(run, what):
    ev = collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, None):
        ev[fn].append((ts, j["event"], j))
    calls = runlog.calls(run)
    n = followed = marked = 0
    kinds = collections.Counter()
    for fn, es in ev.items():
        starts = [float(r["t"]) for r in calls.get(fn, [])]
        reason = None
        for ts, e, j in es:
            if e == "bringing-back":
                reason = j.get("reason")
            if what == "map-back" and e != "mapped-back":
                continue
            if what == "read-back" and (e != "read-back" or reason in (None, "woke")):
                continue
            n += 1
            rec = after(es, ts, starts)
            if rec is None:
                continue
            followed += 1
            kinds[rec[0]] += 1
            if what == "map-back":
                mapped = j.get("populate_faults", j.get("populated", 0))
                marked += mapped > 0 and rec[1].get("faults") == mapped
            else:
                marked += rec[1].get("faults", 0) > 100
    return n, followed, kinds, marked


what = sys.argv[1]
if what not in ("map-back", "read-back"):
    sys.exit(__doc__)
for run in sys.argv[2:]:
    n, followed, kinds, marked = run_counts(run, what)
    name = "/".join(run.rstrip("/").split("/")[-2:])
    if what == "map-back":
        print(f"{name}: {n} map-backs, {followed} followed by a record before the call ({dict(kinds)}), "
              f"{marked} of them with exactly the map-back's one-by-one faults")
    else:
        print(f"{name}: {n} read-backs for no wake, {followed} followed by a record before the call, "
              f"{marked} of those with over 100 faults")
