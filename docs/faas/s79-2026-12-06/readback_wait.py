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
import datetime
import glob
import gzip
import json
import os
import statistics
import sys


def events(log, rev, t0):
    """{function: [(start, end, reason)]} of the daemon's read-backs."""
    out, pending = collections.defaultdict(list), {}
    opener = gzip.open if log.endswith(".gz") else open
    with opener(log, "rt") as f:
        for line in f:
            if '"read-back"' not in line and '"bringing-back"' not in line:
                continue
            j = json.loads(line)
            fn = rev.get(j.get("context"))
            if fn is None:
                continue
            ts = datetime.datetime.fromisoformat(j["timestamp"].replace("Z", "+00:00")).timestamp() - t0
            if j.get("event") == "bringing-back":
                pending[fn] = (ts, j.get("reason"))
            elif j.get("event") == "read-back" and fn in pending:
                start, why = pending.pop(fn)
                out[fn].append((start, ts, why))
    return out


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    d = sys.argv[1]
    tier = sys.argv[2] if len(sys.argv) > 2 else "swapfile"
    meta = json.load(open(os.path.join(d, f"functions-{tier}-memext-r0.json")))
    rev = {v: k for k, v in meta["cgroups"].items()}
    log = sorted(glob.glob(os.path.join(d, f"memext-daemon-{tier}-r0.log*")))[0]
    rb = events(log, rev, meta["trace_start_epoch"])
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
        kinds["server faulted before the handler" if int(r["pre_majflt"] or 0) else "no fault before the handler"] += 1
    if not diffs:
        print("no such call")
        return
    s = sorted(diffs)
    print(f"{d} ({tier}): {len(diffs)} calls over 30 ms before the handler with a read-back of their function; "
          f"time before the handler minus the read-back's end: median {statistics.median(s):.1f} ms, "
          f"p10 {s[len(s) // 10]:.1f}, p90 {s[9 * len(s) // 10]:.1f}; {dict(kinds)}")


if __name__ == "__main__":
    main()
