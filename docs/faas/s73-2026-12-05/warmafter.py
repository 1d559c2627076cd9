#!/usr/bin/env python3
"""Warm calls (at most 200 major faults) by what the daemon did to their function since its previous call (mapped
back, read back only, squeezed, pushed out, nothing) and whether they took over 3.4 ms: count and medians of the
call's latency, handler time, time to the handler, minor faults in the handler, major and minor faults before it, handler CPU, the
server's wait on a run queue before the handler.

    python3 warmafter.py RUN_DIR...    (the runs pooled)
"""
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s72-2026-12-05"))
import runlog  # noqa: E402

TAGGED = ("read-back", "mapped-back", "reclaimed", "pushing-out")
KEYS = ("latency_ms", "handler_ms", "to_handler_ms", "minflt", "pre_majflt", "pre_minflt", "handler_cpu_ms", "pre_wait_ms")
groups = collections.defaultdict(list)
for run in sys.argv[1:]:
    ev = collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, TAGGED):
        ev[fn].append((ts, j["event"]))
    for fn, rows in runlog.calls(run).items():
        prev = -1e9
        for r in rows:
            t = float(r["t"])
            if not r["error"] and int(r["majflt"]) <= 200:
                tags = {e for ts, e in ev[fn] if prev + 0.05 < ts < t}
                what = next((w for w, e in (("mapped back", "mapped-back"), ("read back", "read-back"),
                                            ("squeezed", "reclaimed"), ("pushed out", "pushing-out")) if e in tags),
                            "nothing")
                groups[(what, "over 3.4 ms" if float(r["latency_ms"]) > 3.4 else "within")].append(r)
            prev = t
print("| since the previous call | latency | n | " + " | ".join(KEYS) + " |")
print("|---|---|---|" + "---|" * len(KEYS))
for (what, slow), rs in sorted(groups.items()):
    med = [f"{statistics.median(float(r[k]) for r in rs):.2f}" for k in KEYS]
    print(f"| {what} | {slow} | {len(rs)} | " + " | ".join(med) + " |")
