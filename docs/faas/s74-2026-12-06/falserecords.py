#!/usr/bin/env python3
"""Records the engine keeps in a function's history (woke, onset, warm-call) during the trace (from its start to
its last call) with no call of the function within 1.5 s before or 3 s after: per run, how many of each kind and
via what, and for warm calls their CPU."""
import bisect
import collections
import statistics
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s72-2026-12-05"))
import runlog  # noqa: E402

for run in sys.argv[1:]:
    calls = {fn: [float(r["t"]) for r in rows] for fn, rows in runlog.calls(run).items()}
    end = max(t for ts in calls.values() for t in ts)
    n = collections.Counter()
    false = collections.Counter()
    cpu = []
    for fn, ts, j in runlog.events(run, ("woke", "onset", "warm-call")):
        if ts < 0 or ts > end + 0.5:  # the containers' teardown makes more
            continue
        key = f"{j['event']}:{j.get('via', '')}" + (":held" if j.get("held") else "")
        n[key] += 1
        t = calls.get(fn, [])
        i = bisect.bisect_left(t, ts - 3.0)
        if not any(ts - 3.0 <= x <= ts + 1.5 for x in t[i:i + 3]):
            false[key] += 1
            if j["event"] == "warm-call":
                cpu.append(j.get("cpu_us", 0) / max(j.get("span_ms", 1), 1))
    print(f"== {run}: records with no call near, of all: " +
          ", ".join(f"{k} {false[k]}/{n[k]}" for k in sorted(n)) +
          (f"; false warm calls' CPU us/ms median {statistics.median(cpu):.2f}" if cpu else ""))
