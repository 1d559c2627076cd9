#!/usr/bin/env python3
"""Whether a woken function's call waits for memext's read-back of it: for
each call of a bench/faas memext run on TIER whose time before the handler
(`to_handler_ms`, from the invoker's send) was over 30 ms and whose
function had a read-back begun from 50 ms before to 0.5 s after the call,
the time before the handler against the end of that read-back (the
daemon's `read-back` event after its `bringing-back`), both from the send.
Prints their difference (median, 10th and 90th percentiles) and, by class
of the faults the server took before the handler, how many such calls.

Usage: readback_wait.py RUN_DIR [TIER] (TIER: swapfile, the default, or zram)"""
import collections
import csv
import glob
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "faas"))
import timeline  # noqa: E402


def read_backs(log, cgroup_of, t0):
    """{function: [(start, end)]} of the daemon's read-backs: each
    `bringing-back` and the `read-back` after it (timeline.daemon_events)."""
    opener = gzip.open if log.endswith(".gz") else open
    with opener(log, "rt") as f:
        by_cg = timeline.daemon_events(f, set(cgroup_of.values()), t0, events=("bringing-back", "read-back"))
    out = collections.defaultdict(list)
    for fn, cg in cgroup_of.items():
        start = None
        for t, ev, _ in by_cg.get(cg, []):
            if ev == "bringing-back":
                start = t
            elif start is not None:
                out[fn].append((start, t))
                start = None
    return out


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    d = sys.argv[1]
    tier = sys.argv[2] if len(sys.argv) > 2 else "swapfile"
    meta = json.load(open(os.path.join(d, f"functions-{tier}-memext-r0.json")))
    log = sorted(glob.glob(os.path.join(d, f"memext-daemon-{tier}-r0.log*")))[0]
    rb = read_backs(log, meta["cgroups"], meta["trace_start_epoch"])
    diffs, kinds = [], collections.Counter()
    for r in csv.DictReader(open(os.path.join(d, f"calls-{tier}-memext-r0.csv"))):
        if r["error"] or float(r["to_handler_ms"]) <= 30:
            continue
        t = float(r["t"])
        sent = t + float(r["late_ms"]) / 1e3
        near = [x for x in rb[r["function"]] if -0.05 <= x[0] - t <= 0.5]
        if not near:
            continue
        diffs.append(float(r["to_handler_ms"]) - (near[0][1] - sent) * 1e3)
        faults = int(r["pre_majflt"] or 0) + int(r["pre_minflt"] or 0)
        kinds["server faulted before the handler" if faults else "no fault before the handler"] += 1
    if not diffs:
        print("no such call")
        return
    s = sorted(diffs)
    print(f"{d} ({tier}): {len(diffs)} calls over 30 ms before the handler with a read-back of their function; "
          f"time before the handler minus the read-back's end: median {statistics.median(s):.1f} ms, "
          f"p10 {s[len(s) // 10]:.1f}, p90 {s[9 * len(s) // 10]:.1f}; {dict(kinds)}")


if __name__ == "__main__":
    main()
