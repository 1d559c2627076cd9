#!/usr/bin/env python3
"""`../s72-2026-12-05/extract_wakes.py` with one line more per function: `v T...`, the wakes among `w` that were
warm calls (seen by CPU alone), for `replay_wakes` to record with `record_by_cpu`.

    python3 extract_wakes.py RUN_DIR... | cargo run -q --example replay_wakes -p memext-engine
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s72-2026-12-05"))
import runlog  # noqa: E402

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
