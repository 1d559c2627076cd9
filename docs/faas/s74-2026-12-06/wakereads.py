#!/usr/bin/env python3
"""Read-backs by what asked for them (a wake, a predicted call, a refill...): how many, their median and p90
time, the bytes and the written file pages' faults (`written_file_faults`, where logged), per run.

    python3 wakereads.py RUN_DIR...
"""
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "s72-2026-12-05"))
import runlog  # noqa: E402

print("| run | reason | n | seconds p50 / p90 | MiB p50 | written file faults p50 |")
print("|---|---|---|---|---|---|")
for run in sys.argv[1:]:
    reason = {}
    by = collections.defaultdict(list)
    for fn, ts, j in runlog.events(run, ("bringing-back", "read-back")):
        if j["event"] == "bringing-back":
            reason[fn] = j.get("reason", "?")
        elif fn in reason:
            by[reason.pop(fn)].append(j)
    for r, js in sorted(by.items()):
        s = sorted(j["seconds"] for j in js)
        mib = statistics.median(j["bytes"] for j in js) / (1 << 20)
        wf = [j["written_file_faults"] for j in js if "written_file_faults" in j]
        print(f"| {os.path.basename(run.rstrip('/'))} | {r} | {len(js)} | {1e3 * statistics.median(s):.1f} / "
              f"{1e3 * s[int(0.9 * (len(s) - 1))]:.1f} ms | {mib:.1f} | {statistics.median(wf) if wf else '-'} |")
