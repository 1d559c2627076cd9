#!/usr/bin/env python3
"""Periodic bring-backs followed by a wake's bring-back of the same function before the first had read and
mapped back (its `mapped-back` event): whether a call had begun by then, and the call's latency and minor faults.

  python3 replaced.py RUN_DIR..."""
import collections
import sys

import runlog

for run in sys.argv[1:]:
    calls = runlog.calls(run)
    ev = collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, ("bringing-back", "mapped-back")):
        ev[fn].append((ts, j.get("reason", j["event"])))
    n = collections.Counter()
    for fn, es in ev.items():
        for (t1, a), (t2, b) in zip(es, es[1:]):
            if a == "periodic" and b == "woke":
                nxt = [r for r in calls.get(fn, []) if float(r["t"]) > t1 - 0.05]
                call = nxt[0] if nxt else None
                began = call is not None and float(call["t"]) <= t2 + 0.05
                n["by its call" if began else "by no call"] += 1
                if call is not None and not began:
                    print(run, fn, f"periodic {t1:.2f} woke {t2:.2f} call {float(call['t']):.2f}",
                          call["latency_ms"], "ms, minflt", call["minflt"])
    print(run, dict(n))
